package a2a

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
)

// SendStreamingMessage runs the message's skill as a task and streams it: the task
// first, then its artifacts and status changes as its job moves, until it ends.
func (h *a2aHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		call, err := h.caller(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		release, err := h.s.slots.take(call.P.RateKey)
		if err != nil {
			yield(nil, a2aError(err))
			return
		}
		defer release()
		rec, err := h.start(ctx, call, req)
		if err != nil {
			yield(nil, err)
			return
		}
		h.stream(ctx, rec, yield)
	}
}

// SubscribeToTask streams a task that has not ended, from its current state.
func (h *a2aHandler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		call, err := h.caller(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		if err := h.admit(ctx, call, false); err != nil {
			yield(nil, err)
			return
		}
		release, err := h.s.slots.take(call.P.RateKey)
		if err != nil {
			yield(nil, a2aError(err))
			return
		}
		defer release()
		rec, err := h.findTask(ctx, call.P, req.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if rec.Final {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, "The task has already ended ("+rec.State+"); read it with GetTask.").
				WithErrorInfoMeta(map[string]string{"code": "task_ended"}))
			return
		}
		h.stream(ctx, rec, yield)
	}
}

// stream sends rec as a task, then follows it while it works: each new or changed
// artifact and each status change is sent as it is seen. It returns when the task
// leaves the working state, when ctx ends (the client went away, or the server is
// stopping), or when the client stops reading; none of these changes the task.
func (h *a2aHandler) stream(ctx context.Context, rec kv.AgentTask, yield func(a2a.Event, error) bool) {
	t, err := decodeTask(rec)
	if err != nil {
		yield(nil, a2aError(err))
		return
	}
	if !yield(t, nil) {
		return
	}
	tick := time.NewTicker(a2aPollInterval)
	defer tick.Stop()
	var shown []byte // the job's progress last sent
	for rec.State == string(a2a.TaskStateWorking) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		next, progress, err := h.settleProgress(ctx, rec)
		if err != nil {
			if ctx.Err() == nil {
				yield(nil, a2aError(err))
			}
			return
		}
		if progress != nil && !bytes.Equal(progress, shown) {
			// The job moved without ending (a simulation's transcript grew): a working
			// status carrying the poll's answer so far. It is the stream's news, not a
			// change of the stored task.
			shown = progress
			status := a2a.TaskStatus{State: a2a.TaskStateWorking, Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, t,
				a2a.NewTextPart("The job is under way; the data part holds its status so far."),
				&a2a.Part{Content: a2a.Data{Value: stdjson.RawMessage(progress)}, MediaType: "application/json"})}
			if !yield(&a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: status}, nil) {
				return
			}
		}
		if next.UpdatedAt.Equal(rec.UpdatedAt) && next.State == rec.State {
			continue
		}
		nt, err := decodeTask(next)
		if err != nil {
			yield(nil, a2aError(err))
			return
		}
		for _, art := range newArtifacts(t, nt) {
			if !yield(&a2a.TaskArtifactUpdateEvent{TaskID: nt.ID, ContextID: nt.ContextID, Artifact: art, LastChunk: true}, nil) {
				return
			}
		}
		if !yield(&a2a.TaskStatusUpdateEvent{TaskID: nt.ID, ContextID: nt.ContextID, Status: nt.Status}, nil) {
			return
		}
		rec, t = next, nt
	}
}

// newArtifacts returns the artifacts of next that prev did not have.
func newArtifacts(prev, next *a2a.Task) []*a2a.Artifact {
	var out []*a2a.Artifact
	for _, a := range next.Artifacts {
		seen := false
		for _, b := range prev.Artifacts {
			seen = seen || b.ID == a.ID
		}
		if !seen {
			out = append(out, a)
		}
	}
	return out
}
