package a2a

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// Artifact ids of a task: the operation's answer (for a background job, the handle
// its start returned) and, for a job, the poll's answer once the job has ended.
const (
	artifactAccepted = "accepted"
	artifactResult   = "result"
)

// newTask is a task for a message: its id, its context (the one the client named, or
// a new one) and the message as its history.
func newTask(id kv.ID, ctxID string, msg *a2a.Message) *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(id.String()), ContextID: ctxID}
	t.History = append(t.History, historyMessage(t, msg))
	return t
}

// historyMessage is msg as the task's history keeps it: tied to the task.
func historyMessage(t *a2a.Task, msg *a2a.Message) *a2a.Message {
	m := *msg
	m.TaskID, m.ContextID = t.ID, t.ContextID
	return &m
}

// setStatus moves t to state with an agent message of text and, when data is not nil,
// a data part.
func setStatus(t *a2a.Task, state a2a.TaskState, now time.Time, text string, data any) {
	parts := []*a2a.Part{a2a.NewTextPart(text)}
	if data != nil {
		parts = append(parts, a2a.NewDataPart(data))
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, t, parts...)
	ts := now.UTC()
	t.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: &ts}
}

// addArtifact adds (or replaces) the artifact id holding one JSON document.
func addArtifact(t *a2a.Task, id, name string, raw []byte) {
	art := &a2a.Artifact{ID: a2a.ArtifactID(id), Name: name, Parts: a2a.ContentParts{
		{Content: a2a.Data{Value: stdjson.RawMessage(raw)}, MediaType: "application/json"},
	}}
	for i, a := range t.Artifacts {
		if string(a.ID) == id {
			t.Artifacts[i] = art
			return
		}
	}
	t.Artifacts = append(t.Artifacts, art)
}

// record is t as the store keeps it.
func taskRecord(rec kv.AgentTask, t *a2a.Task) (kv.AgentTask, error) {
	raw, err := stdjson.Marshal(t)
	if err != nil {
		return rec, err
	}
	rec.Body, rec.State, rec.Final = raw, string(t.Status.State), t.Status.State.Terminal()
	rec.ContextID = t.ContextID
	return rec, nil
}

func decodeTask(rec kv.AgentTask) (*a2a.Task, error) {
	var t a2a.Task
	if err := stdjson.Unmarshal(rec.Body, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// changeTask applies change to the stored task in one transaction, from the task as
// stored (never a copy read earlier). A task that is final already is left alone.
func (h *a2aHandler) changeTask(ctx context.Context, rec kv.AgentTask, change func(t *a2a.Task) error) (kv.AgentTask, error) {
	out, _, err := h.s.DB.UpdateAgentTask(ctx, rec.Partition(), rec.ID, func(stored *kv.AgentTask) error {
		t, err := decodeTask(*stored)
		if err != nil {
			return err
		}
		if err := change(t); err != nil {
			return err
		}
		*stored, err = taskRecord(*stored, t)
		return err
	})
	return out, err
}

// errTaskMoved stops a change whose premise (the task is working) no longer holds.
var errTaskMoved = errors.New("task moved on")

// settle brings a working task up to date with its job: when the job has ended, the
// task completes with the poll's answer as its result artifact (or fails with the
// job's error). Every read of a task settles it, so a task whose job finished while
// nobody watched, or across a restart, shows the end the next time it is asked for.
func (h *a2aHandler) settle(ctx context.Context, rec kv.AgentTask) (kv.AgentTask, error) {
	rec, _, err := h.settleProgress(ctx, rec)
	return rec, err
}

// settleProgress is settle that also returns, for a job still running, its poll's
// answer so far (a simulation's transcript grows turn by turn), for streams to show.
func (h *a2aHandler) settleProgress(ctx context.Context, rec kv.AgentTask) (kv.AgentTask, []byte, error) {
	if rec.Final || rec.JobID == nil || rec.State != string(a2a.TaskStateWorking) {
		return rec, nil, nil
	}
	start := h.s.OpByName(rec.Skill)
	if start == nil {
		return rec, nil, nil
	}
	poll := h.s.OpByName(start.Awaits)
	part := rec.Partition()
	out, err := poll.Call(ctx, &pipeline.Principal{Partition: part}, &research.JobIDInput{JobID: rec.JobID.String()})
	var raw []byte
	failed := false
	detail := ""
	if err != nil {
		body, cause := pipeline.ToolErrorBodyOf(poll, err)
		if cause != "" {
			return rec, nil, err // an internal failure: the task stays as it is
		}
		raw, _ = stdjson.Marshal(body)
		failed, detail = true, body.Detail
	} else {
		if raw, err = pipeline.EncodeOutput(out); err != nil {
			return rec, nil, err
		}
		ended, jobFailed := out.(research.JobOutcome).JobEnded()
		if !ended {
			return rec, raw, nil
		}
		failed = jobFailed
	}
	state, text := a2a.TaskStateCompleted, "The "+string(start.Job)+" job has ended; the result artifact holds its "+poll.Name+" answer."
	if n, ok := out.(interface{ JobNotice() string }); ok && !failed && n.JobNotice() != "" {
		text += " " + n.JobNotice()
	}
	var data any
	if failed {
		state = a2a.TaskStateFailed
		if detail == "" {
			detail = "The " + string(start.Job) + " job failed."
			if j, err := h.s.DB.FindJobByID(ctx, part, rec.JobKind, *rec.JobID); err == nil && j.Error != "" {
				detail = j.Error
			}
		}
		if detail == jobs.CanceledMessage {
			state = a2a.TaskStateCanceled
		}
		text = detail
		data = pipeline.ToolErrorBody{Code: "job_failed", Detail: detail}
	}
	now := h.s.Now()
	updated, err := h.changeTask(ctx, rec, func(t *a2a.Task) error {
		if t.Status.State != a2a.TaskStateWorking {
			return errTaskMoved
		}
		addArtifact(t, artifactResult, poll.Name, raw)
		setStatus(t, state, now, text, data)
		return nil
	})
	if errors.Is(err, errTaskMoved) {
		rec, err = h.s.DB.FindAgentTask(ctx, part, rec.ID)
		return rec, nil, err
	}
	return updated, nil, err
}

// a2aPollInterval is how often a waiting request or stream looks at a working task's
// job: a read of one record, cheap beside any job.
const a2aPollInterval = 100 * time.Millisecond

// await settles rec until it is no longer working, ctx ends or wait has passed, and
// returns it as it then is.
func (h *a2aHandler) await(ctx context.Context, rec kv.AgentTask, wait time.Duration) (kv.AgentTask, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(a2aPollInterval)
	defer tick.Stop()
	for {
		var err error
		if rec, err = h.settle(ctx, rec); err != nil || rec.State != string(a2a.TaskStateWorking) {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, nil
		case <-deadline.C:
			return rec, nil
		case <-tick.C:
		}
	}
}

// trimHistory keeps the last n messages of t's history when n is set (0 keeps none).
func trimHistory(t *a2a.Task, n *int) {
	if n == nil || *n < 0 {
		return
	}
	if *n == 0 {
		t.History = nil
		return
	}
	if len(t.History) > *n {
		t.History = t.History[len(t.History)-*n:]
	}
}
