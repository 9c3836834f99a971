package server

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"interviewd/kv"
)

// a2aBlockingWait bounds how long a SendMessage that did not ask to return
// immediately waits for a background job: past it the task is returned working (poll
// GetTask, or use SendStreamingMessage), well before clients' own timeouts.
const a2aBlockingWait = 30 * time.Second

// a2aHandler answers the A2A methods for the SDK's JSON-RPC binding. Tasks live in kv
// (kv.AgentTask) and a working task follows its job by settling (a2a_task.go), so
// nothing about a task is held in memory between requests and a restart loses none.
type a2aHandler struct{ s *Server }

var _ a2asrv.RequestHandler = (*a2aHandler)(nil)

// opByName returns the research operation named name, or nil.
func (s *Server) opByName(name string) *Operation {
	for _, o := range s.ops {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// caller returns the authenticated call after the protocol version check: a client
// naming a version other than 1.0 is told so; one naming none is taken as 1.0.
func (h *a2aHandler) caller(ctx context.Context) (*a2aCall, error) {
	call := a2aCallFrom(ctx)
	if call == nil || call.p == nil {
		return nil, a2a.NewError(a2a.ErrUnauthenticated, "No credential.")
	}
	if cc, ok := a2asrv.CallContextFrom(ctx); ok {
		if vs, ok := cc.ServiceParams().Get(a2a.SvcParamVersion); ok {
			for _, v := range vs {
				if v = strings.TrimSpace(v); v != "" && v != string(a2a.Version) {
					return nil, a2a.NewError(a2a.ErrVersionNotSupported,
						"This agent speaks A2A protocol version 1.0 only; the request asked for "+strconv.Quote(v)+".").
						WithErrorInfoMeta(map[string]string{"supported_versions": string(a2a.Version)})
				}
			}
		}
	}
	return call, nil
}

// admit counts one call against the caller's rate limits, as REST counts a request.
func (h *a2aHandler) admit(call *a2aCall, write bool) error {
	d, err := h.s.admitCall(call.p, write)
	call.rate.Store(&d)
	if err != nil {
		return a2aError(err)
	}
	return nil
}

// a2aError maps a refusal to the A2A error a client reads: the protocol's error kind,
// the detail as message, and the REST error's code (and scope, or wait) as ErrorInfo
// metadata. Internal failures say only "Internal error.".
func a2aError(err error) error {
	var ae2 *a2a.Error
	if errors.As(err, &ae2) {
		return err
	}
	ae := toAPIError(err)
	kind := a2a.ErrInternalError
	switch ae.Status {
	case 401:
		kind = a2a.ErrUnauthenticated
	case 403:
		kind = a2a.ErrUnauthorized
	case 404:
		kind = a2a.ErrTaskNotFound
	case 422:
		kind = a2a.ErrInvalidParams
	case 409, 429:
		kind = a2a.ErrServerError
	}
	meta := map[string]string{"code": ae.Code}
	if ae.Scope != "" {
		meta["scope"] = ae.Scope
	}
	if ae.Status == 429 {
		meta["retry_after_seconds"] = strconv.Itoa(max(ae.RetryAfter, 1))
	}
	msg := ae.Detail
	if ae.Status >= 500 {
		msg = errInternal
	}
	return a2a.NewError(kind, msg).WithErrorInfoMeta(meta)
}

func invalidParams(code, msg string) error {
	return a2a.NewError(a2a.ErrInvalidParams, msg).WithErrorInfoMeta(map[string]string{"code": code})
}

var errTaskNotFound = a2a.NewError(a2a.ErrTaskNotFound, "Task not found.").WithErrorInfoMeta(map[string]string{"code": "task_not_found"})

// findTask loads a task of the caller's partition, settled: another partition's task
// is not found, like an unknown one.
func (h *a2aHandler) findTask(ctx context.Context, p *Principal, id a2a.TaskID) (kv.AgentTask, error) {
	tid, ok := kv.ParseID(string(id))
	if !ok {
		return kv.AgentTask{}, errTaskNotFound
	}
	if rec, ok := h.s.a2aPending.find(p.Partition, tid); ok {
		return rec, nil
	}
	rec, err := h.s.db.FindAgentTask(ctx, p.Partition, tid)
	if kv.ErrorCode(err) == kv.ENOTFOUND {
		return rec, errTaskNotFound
	}
	if err != nil {
		return rec, a2aError(err)
	}
	if rec, err = h.settle(ctx, rec); err != nil {
		return rec, a2aError(err)
	}
	return rec, nil
}

// GetTask returns a task of the caller's partition.
func (h *a2aHandler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.admit(call, false); err != nil {
		return nil, err
	}
	rec, err := h.findTask(ctx, call.p, req.ID)
	if err != nil {
		return nil, err
	}
	t, err := decodeTask(rec)
	if err != nil {
		return nil, a2aError(err)
	}
	trimHistory(t, req.HistoryLength)
	return t, nil
}

// ListTasks pages the caller's tasks, newest first.
func (h *a2aHandler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.admit(call, false); err != nil {
		return nil, err
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = 50
	case size < 1 || size > 100:
		return nil, invalidParams("validation_error", "pageSize must be between 1 and 100.")
	}
	f := kv.AgentTaskFilter{Partition: call.p.Partition, ContextID: req.ContextID, State: string(req.Status), Cursor: req.PageToken, Limit: size}
	if req.StatusTimestampAfter != nil {
		f.UpdatedAfter = *req.StatusTimestampAfter
	}
	h.s.a2aPending.settled(ctx, call.p.Partition)
	page, total, err := h.s.db.FindAgentTasks(ctx, f)
	if kv.ErrorCode(err) == kv.EINVALID {
		return nil, invalidParams("cursor_invalid", "pageToken is not valid; pass the nextPageToken of the previous page unchanged.")
	}
	if err != nil {
		return nil, a2aError(err)
	}
	out := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, len(page.Items)), TotalSize: total, PageSize: size, NextPageToken: page.Next}
	for _, rec := range page.Items {
		if rec, err = h.settle(ctx, rec); err != nil {
			return nil, a2aError(err)
		}
		t, err := decodeTask(rec)
		if err != nil {
			return nil, a2aError(err)
		}
		trimHistory(t, req.HistoryLength)
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out, nil
}

// CancelTask stops a task that has not ended: its job is stopped where it can be (a
// queued job never starts; a running one is interrupted and commits nothing).
func (h *a2aHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.admit(call, true); err != nil {
		return nil, err
	}
	rec, err := h.findTask(ctx, call.p, req.ID)
	if err != nil {
		return nil, err
	}
	notCancelable := func(state string) error {
		return a2a.NewError(a2a.ErrTaskNotCancelable, "The task has already ended ("+state+") and cannot be cancelled.").
			WithErrorInfoMeta(map[string]string{"code": "task_not_cancelable"})
	}
	if rec.Final {
		return nil, notCancelable(rec.State)
	}
	if rec.JobID != nil {
		err := h.s.jobs.Cancel(ctx, rec.Partition(), rec.JobKind, *rec.JobID)
		if kv.ErrorCode(err) == kv.ECONFLICT { // the job ended first: the task ends as it did
			if rec, err = h.settle(ctx, rec); err != nil {
				return nil, a2aError(err)
			}
			if rec.Final {
				return nil, notCancelable(rec.State)
			}
		} else if err != nil {
			return nil, a2aError(err)
		}
	}
	now := h.s.now()
	rec, err = h.changeTask(ctx, rec, func(t *a2a.Task) error {
		setStatus(t, a2a.TaskStateCanceled, now, "Cancelled at the caller's request.", nil)
		return nil
	})
	if err != nil {
		return nil, a2aError(err)
	}
	if rec.State != string(a2a.TaskStateCanceled) {
		return nil, notCancelable(rec.State)
	}
	return decodeTask(rec)
}

// SendMessage runs the message's skill as a task. Unless the client asked to return
// immediately, a background job is waited for (at most a2aBlockingWait).
func (h *a2aHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := h.start(ctx, call, req)
	if err != nil {
		return nil, err
	}
	if rec.State == string(a2a.TaskStateWorking) && (req.Config == nil || !req.Config.ReturnImmediately) {
		if rec, err = h.await(ctx, rec, a2aBlockingWait); err != nil {
			return nil, a2aError(err)
		}
	}
	t, err := decodeTask(rec)
	if err != nil {
		return nil, a2aError(err)
	}
	if req.Config != nil {
		trimHistory(t, req.Config.HistoryLength)
	}
	return t, nil
}

// SendStreamingMessage runs the message's skill as a task and streams it: the task
// first, then its artifacts and status changes as its job moves, until it ends.
func (h *a2aHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		call, err := h.caller(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
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
		if err := h.admit(call, false); err != nil {
			yield(nil, err)
			return
		}
		rec, err := h.findTask(ctx, call.p, req.ID)
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

// start runs a message: a new task, or the next turn of a task that asked for input.
// A message that names no skill the engine can find asks back (input required). The
// refusals of the message itself (unknown skill, a missing scope, a rate limit) are
// errors; what the operation says (invalid arguments, not found, a conflict) ends the
// task failed with the REST error, and its answer completes it, or, for a background
// job, leaves it working with the job's handle as its first artifact.
func (h *a2aHandler) start(ctx context.Context, call *a2aCall, req *a2a.SendMessageRequest) (kv.AgentTask, error) {
	msg := req.Message
	switch {
	case msg == nil:
		return kv.AgentTask{}, invalidParams("missing", "message is required.")
	case len(msg.Parts) == 0:
		return kv.AgentTask{}, invalidParams("missing", "message.parts must hold at least one part.")
	case msg.Role != a2a.MessageRoleUser:
		return kv.AgentTask{}, invalidParams("enum", "message.role must be ROLE_USER.")
	}
	p := call.p
	var prev *kv.AgentTask
	if msg.TaskID != "" {
		rec, err := h.findTask(ctx, p, msg.TaskID)
		if err != nil {
			return rec, err
		}
		if rec.State != string(a2a.TaskStateInputRequired) {
			return rec, invalidParams("task_not_awaiting_input", "The task is "+rec.State+" and takes no more messages; send a new message without taskId.")
		}
		prev = &rec
	}
	intent, _, ok, err := messageIntent(msg)
	if err != nil {
		return kv.AgentTask{}, a2aError(err)
	}
	if !ok {
		if err := h.admit(call, false); err != nil {
			return kv.AgentTask{}, err
		}
		return h.save(ctx, p, prev, msg, "", func(t *a2a.Task, now time.Time) {
			setStatus(t, a2a.TaskStateInputRequired, now, h.askBack(), nil)
		})
	}
	run, err := h.runSkill(ctx, call, intent)
	if err != nil {
		return kv.AgentTask{}, err
	}
	o := run.o
	switch {
	case run.failed != nil:
		return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
			setStatus(t, a2a.TaskStateFailed, now, run.failed.Detail, *run.failed)
		})
	case run.jobID == nil:
		return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
			addArtifact(t, artifactResult, o.Name, run.raw)
			setStatus(t, a2a.TaskStateCompleted, now, completedText(o), nil)
		})
	}
	return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
		addArtifact(t, artifactAccepted, o.Name, run.raw)
		setStatus(t, a2a.TaskStateWorking, now, "The "+string(o.Job)+" job "+run.jobID.String()+" is under way; this task completes when it ends.", nil)
	}, func(rec *kv.AgentTask) { rec.JobID, rec.JobKind = run.jobID, o.Job })
}

func completedText(o *Operation) string {
	return "Done: the result artifact holds the " + o.Name + " answer."
}

// skillRun is what running a skill came to: the operation's answer (for a background
// job, the handle its start returned, and the job's id), or the REST error it ended
// with.
type skillRun struct {
	o      *Operation
	raw    []byte
	jobID  *kv.ID
	failed *toolErrorBody
}

// runSkill runs the operation a message names through the table's steps: scope, rate
// limit, binding, the input's own scope, the operation. Its error refuses the message
// (unknown skill, a missing scope, a rate limit); what the operation refuses is a
// failed run.
func (h *a2aHandler) runSkill(ctx context.Context, call *a2aCall, intent a2aIntent) (skillRun, error) {
	p := call.p
	o := h.s.opByName(intent.Skill)
	if o == nil {
		return skillRun{}, invalidParams("unknown_skill", "Unknown skill "+strconv.Quote(intent.Skill)+"; the skills are "+h.skillNames()+".")
	}
	if err := o.checkScope(p); err != nil {
		return skillRun{}, a2aError(err)
	}
	if err := h.admit(call, o.Write); err != nil {
		return skillRun{}, err
	}
	in := o.newInput()
	err := o.plan.bindArgs(in, intent.Arguments)
	if err == nil {
		// The input's own scope (going live needs studies:golive) refuses the message.
		if err := p.require(o.requiredScope(in)); err != nil {
			return skillRun{}, a2aError(err)
		}
	}
	var out any
	if err == nil {
		out, err = o.call(ctx, p, in)
	}
	var raw []byte
	if err == nil {
		raw, err = encodeOutput(out)
	}
	if err != nil {
		body, cause := toolErrorBodyOf(o, err)
		if cause != "" {
			h.s.log.Error().Str("surface", "a2a").Str("skill", o.Name).Msg(cause)
		}
		return skillRun{o: o, failed: &body}, nil
	}
	run := skillRun{o: o, raw: raw}
	if o.Awaits == "" {
		if l, isList := out.(listResult); isList {
			run.raw = mustRawJSON(map[string]any{"items": stdjson.RawMessage(mustRawJSON(l.restItems())), "next_cursor": cursorOrNull(l.nextCursor())})
		}
		return run, nil
	}
	var handle struct {
		JobID string `json:"job_id"`
	}
	_ = stdjson.Unmarshal(raw, &handle)
	jobID, _ := kv.ParseID(handle.JobID)
	run.jobID = &jobID
	return run, nil
}

func cursorOrNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// save records a message's task: a new one, or prev continued with msg.
func (h *a2aHandler) save(ctx context.Context, p *Principal, prev *kv.AgentTask, msg *a2a.Message, skill string,
	set func(t *a2a.Task, now time.Time), more ...func(rec *kv.AgentTask)) (kv.AgentTask, error) {
	now := h.s.now()
	if prev != nil {
		rec, _, err := h.s.db.UpdateAgentTask(ctx, p.Partition, prev.ID, func(stored *kv.AgentTask) error {
			t, err := decodeTask(*stored)
			if err != nil {
				return err
			}
			if t.Status.State != a2a.TaskStateInputRequired {
				return invalidParams("task_not_awaiting_input", "The task is "+string(t.Status.State)+" and takes no more messages.")
			}
			t.History = append(t.History, historyMessage(t, msg))
			set(t, now)
			stored.Skill = skill
			for _, m := range more {
				m(stored)
			}
			*stored, err = taskRecord(*stored, t)
			return err
		})
		if err != nil {
			return rec, a2aError(err)
		}
		return rec, nil
	}
	id := h.s.db.NewID()
	t := newTask(id, msg)
	set(t, now)
	rec, err := taskRecord(kv.AgentTask{ID: id, OrgID: p.Partition.Org, Env: p.Partition.Env, Skill: skill}, t)
	if err != nil {
		return rec, a2aError(err)
	}
	for _, m := range more {
		m(&rec)
	}
	if rec.Final && rec.JobID == nil {
		rec.CreatedAt, rec.UpdatedAt = now, now
		h.s.writeTaskBehind(rec)
		return rec, nil
	}
	if rec, err = h.s.db.CreateAgentTask(ctx, rec); err != nil {
		return rec, a2aError(err)
	}
	return rec, nil
}

// askBack is the question a message the engine cannot map is answered with.
func (h *a2aHandler) askBack() string {
	return "I could not tell which skill this asks for. Send a data part {\"skill\": NAME, \"arguments\": {...}} " +
		"(reply on this task with its taskId), or plain text such as \"create a study about ...\" or \"status of study ID\". " +
		"The skills are " + h.skillNames() + "; the agent card at " + agentCardPath + " describes each."
}

func (h *a2aHandler) skillNames() string {
	names := make([]string, len(h.s.ops))
	for i, o := range h.s.ops {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}

// Push notifications are not offered: clients poll, stream or resubscribe.

func (h *a2aHandler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrExtendedCardNotConfigured
}
