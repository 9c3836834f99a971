package a2a

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// a2aBlockingWait bounds how long a SendMessage that did not ask to return
// immediately waits for a background job: past it the task is returned working (poll
// GetTask, or use SendStreamingMessage), well before clients' own timeouts.
const a2aBlockingWait = 30 * time.Second

// a2aHandler answers the A2A methods for the SDK's JSON-RPC binding. Tasks live in kv
// (kv.AgentTask), each committed before its message is answered (message.go), and a
// working task follows its job by settling (task.go), so neither a restart nor a
// crash loses one. Sending is in send.go, streaming in stream.go.
type a2aHandler struct{ s *Agent }

var _ a2asrv.RequestHandler = (*a2aHandler)(nil)

// caller returns the authenticated call after the protocol version check: a client
// naming a version other than 1.0 is told so; one naming none is taken as 1.0.
func (h *a2aHandler) caller(ctx context.Context) (*Call, error) {
	call := a2aCallFrom(ctx)
	if call == nil || call.P == nil {
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

// admit counts a call that runs no skill (reading, listing or cancelling tasks, a
// question back) against the caller's budgets by the same admission as the research
// pipeline's rate step.
func (h *a2aHandler) admit(ctx context.Context, call *Call, write bool) error {
	d, err := h.s.AdmitCall(ctx, call.P, write)
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
	ae := pipeline.ToAPIError(err)
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
		msg = pipeline.ErrInternal
	}
	return a2a.NewError(kind, msg).WithErrorInfoMeta(meta)
}

func invalidParams(code, msg string) error {
	return a2a.NewError(a2a.ErrInvalidParams, msg).WithErrorInfoMeta(map[string]string{"code": code})
}

var errTaskNotFound = a2a.NewError(a2a.ErrTaskNotFound, "Task not found.").WithErrorInfoMeta(map[string]string{"code": "task_not_found"})

// findTask loads a task of the caller's partition, settled: another partition's task
// is not found, like an unknown one, and so is a task whose skill needed a scope the
// caller does not hold (agent:run alone is no licence to read what other keys asked).
func (h *a2aHandler) findTask(ctx context.Context, p *pipeline.Principal, id a2a.TaskID) (kv.AgentTask, error) {
	tid, ok := kv.ParseID(string(id))
	if !ok {
		return kv.AgentTask{}, errTaskNotFound
	}
	rec, err := h.s.DB.FindAgentTask(ctx, p.Partition, tid)
	if kv.ErrorCode(err) == kv.ENOTFOUND || (err == nil && !h.s.taskVisible(p, &rec)) {
		return kv.AgentTask{}, errTaskNotFound
	}
	if err != nil {
		return rec, a2aError(err)
	}
	if rec, err = h.settle(ctx, rec); err != nil {
		return rec, a2aError(err)
	}
	return rec, nil
}

// taskVisible reports whether p may see t (of p's partition): a task is the
// partition's, seen by any key holding one of the scopes its skill needed, so
// agent:run alone shows a key nothing it could not have asked for itself. A task
// recorded before tasks kept their scopes takes its skill's.
func (s *Agent) taskVisible(p *pipeline.Principal, t *kv.AgentTask) bool {
	scopes := t.Scopes
	if len(scopes) == 0 && t.Skill != "" {
		if o := s.OpByName(t.Skill); o != nil {
			scopes = taskScopes(o, nil)
		}
	}
	if len(scopes) == 0 {
		return true
	}
	for _, sc := range scopes {
		if p.Has(sc) {
			return true
		}
	}
	return false
}

// GetTask returns a task of the caller's partition.
func (h *a2aHandler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.admit(ctx, call, false); err != nil {
		return nil, err
	}
	rec, err := h.findTask(ctx, call.P, req.ID)
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
	if err := h.admit(ctx, call, false); err != nil {
		return nil, err
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = 50
	case size < 1 || size > 100:
		return nil, invalidParams("validation_error", "pageSize must be between 1 and 100.")
	}
	f := kv.AgentTaskFilter{Partition: call.P.Partition, ContextID: req.ContextID, State: string(req.Status), Cursor: req.PageToken, Limit: size,
		Visible: func(t *kv.AgentTask) bool { return h.s.taskVisible(call.P, t) }}
	if req.StatusTimestampAfter != nil {
		f.UpdatedAfter = *req.StatusTimestampAfter
	}
	if err := h.settleWorking(ctx, call.P.Partition); err != nil {
		return nil, a2aError(err)
	}
	page, total, err := h.s.DB.FindAgentTasks(ctx, f)
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

// settleWorking brings the partition's working tasks up to date with their jobs
// before a list filters and counts them by state (at most a2aSettleMax of them, the
// newest, per list).
func (h *a2aHandler) settleWorking(ctx context.Context, part kv.Partition) error {
	cursor := ""
	for settled := 0; settled < a2aSettleMax; {
		page, _, err := h.s.DB.FindAgentTasks(ctx, kv.AgentTaskFilter{Partition: part, State: string(a2a.TaskStateWorking),
			Cursor: cursor, Limit: 100, NoTotal: true})
		if err != nil {
			return err
		}
		for _, rec := range page.Items {
			if _, err := h.settle(ctx, rec); err != nil {
				return err
			}
		}
		settled += len(page.Items)
		if cursor = page.Next; cursor == "" {
			return nil
		}
	}
	return nil
}

// a2aSettleMax bounds the working tasks one list settles.
const a2aSettleMax = 500

// CancelTask stops a task that has not ended: its job is stopped where it can be (a
// queued job never starts; a running one is interrupted and commits nothing).
func (h *a2aHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	call, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.admit(ctx, call, true); err != nil {
		return nil, err
	}
	rec, err := h.findTask(ctx, call.P, req.ID)
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
		err := h.s.Jobs.Cancel(ctx, rec.Partition(), rec.JobKind, *rec.JobID)
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
	now := h.s.Now()
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
