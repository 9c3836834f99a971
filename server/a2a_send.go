package server

import (
	"context"
	stdjson "encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
)

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
	run, err := h.runSkill(ctx, call, intent, msg.ID)
	if err != nil {
		return kv.AgentTask{}, err
	}
	o := run.o
	scoped := func(rec *kv.AgentTask) { rec.Scopes = run.scopes }
	switch {
	case run.failed != nil:
		return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
			setStatus(t, a2a.TaskStateFailed, now, run.failed.Detail, *run.failed)
		}, scoped)
	case run.jobID == nil:
		return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
			addArtifact(t, artifactResult, o.Name, run.raw)
			setStatus(t, a2a.TaskStateCompleted, now, completedText(o), nil)
		}, scoped)
	}
	return h.save(ctx, p, prev, msg, o.Name, func(t *a2a.Task, now time.Time) {
		addArtifact(t, artifactAccepted, o.Name, run.raw)
		setStatus(t, a2a.TaskStateWorking, now, "The "+string(o.Job)+" job "+run.jobID.String()+" is under way; this task completes when it ends.", nil)
	}, scoped, func(rec *kv.AgentTask) { rec.JobID, rec.JobKind = run.jobID, o.Job })
}

func completedText(o *Operation) string {
	return "Done: the result artifact holds the " + o.Name + " answer."
}

// claimMessage claims key (a message's id) for an idempotent operation as REST's
// Idempotency-Key step does: a finished first message's recorded output is returned to
// replay; a key used for another request, or still running, refuses the message. The
// returned context carries the claim to the operation's transaction; release forgets
// a claim the operation did not complete.
func (h *a2aHandler) claimMessage(ctx context.Context, p *Principal, key string, fp [32]byte) (context.Context, []byte, func(), error) {
	outcome, stored, err := h.s.db.ClaimIdem(ctx, p.Partition, key, fp)
	switch {
	case err != nil:
		return ctx, nil, nil, err
	case outcome == kv.IdemReplay:
		return ctx, stored, func() {}, nil
	case outcome == kv.IdemReused:
		return ctx, nil, nil, &apiError{Status: 422, Code: "idempotency_key_reused",
			Detail: "This messageId was sent before with a different request; give a new message a new messageId."}
	case outcome == kv.IdemInFlight:
		return ctx, nil, nil, &apiError{Status: 409, Code: "idempotency_key_in_flight",
			Detail: "A message with this messageId is still running; send it again once it has finished."}
	}
	release := func() {
		if err := h.s.db.ReleaseIdem(context.Background(), p.Partition, key); err != nil {
			h.s.log.Error().Err(err).Msg("release idempotency claim")
		}
	}
	return context.WithValue(ctx, idemCtxKey{}, &idemSlot{partition: p.Partition, key: key, fingerprint: fp}), nil, release, nil
}

// skillRun is what running a skill came to: the operation's answer (for a background
// job, the handle its start returned, and the job's id), or the REST error it ended
// with.
type skillRun struct {
	o      *Operation
	scopes []string // the scopes the task is visible with (kv.AgentTask.Scopes)
	raw    []byte
	jobID  *kv.ID
	failed *toolErrorBody
}

// runSkill runs the operation a message names through the table's steps: scope, rate
// limit, binding, the input's own scope, the operation. Its error refuses the message
// (unknown skill, a missing scope, a rate limit, a messageId reused for another
// request); what the operation refuses is a failed run. For the operations REST takes
// an Idempotency-Key on, the messageId is that key: a message sent again (a retry after
// a lost answer) gets the first one's answer, and its task follows the same job.
func (h *a2aHandler) runSkill(ctx context.Context, call *a2aCall, intent a2aIntent, messageID string) (skillRun, error) {
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
	scopes := taskScopes(o, nil)
	if err == nil {
		// The input's own scope (going live needs studies:golive) refuses the message.
		if err := p.require(o.requiredScope(in)); err != nil {
			return skillRun{}, a2aError(err)
		}
		scopes = taskScopes(o, in)
	}
	var out any
	if err == nil && o.Idempotent && validIdemKey([]byte(messageID)) {
		key := "a2a:" + messageID
		var replay []byte
		var release func()
		ctx, replay, release, err = h.claimMessage(ctx, p, key, requestFingerprint([]byte("A2A"), []byte(o.Name), intent.Arguments))
		if err != nil {
			return skillRun{}, a2aError(err)
		}
		defer release()
		if replay != nil {
			out = replayedOutput(replay)
		}
	}
	if err == nil && out == nil {
		out, err = o.call(ctx, p, in)
	}
	var raw []byte
	if replay, ok := out.(replayedOutput); ok {
		raw = replay
	} else if err == nil {
		raw, err = encodeOutput(out)
	}
	if err != nil {
		body, cause := toolErrorBodyOf(o, err)
		if cause != "" {
			h.s.log.Error().Str("surface", "a2a").Str("skill", o.Name).Msg(cause)
		}
		return skillRun{o: o, scopes: scopes, failed: &body}, nil
	}
	run := skillRun{o: o, scopes: scopes, raw: raw}
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

// taskScopes are the scopes a task of o (for input in, when it bound) is visible
// with: the one the input needed (going live: studies:golive), else those of which
// the operation takes any, else its scope.
func taskScopes(o *Operation, in any) []string {
	if in != nil && o.ScopeFor != nil {
		if sc := o.ScopeFor(in); sc != "" {
			return []string{sc}
		}
	}
	if len(o.AnyScope) > 0 {
		return o.AnyScope
	}
	if o.Scope != "" {
		return []string{o.Scope}
	}
	return nil
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
	rec, err := taskRecord(kv.AgentTask{ID: id, OrgID: p.Partition.Org, Env: p.Partition.Env, Skill: skill, CreatedBy: p.KeyID}, t)
	if err != nil {
		return rec, a2aError(err)
	}
	for _, m := range more {
		m(&rec)
	}
	if rec.Final && rec.JobID == nil {
		rec.CreatedAt, rec.UpdatedAt = now, now
		if err := h.s.recordEndedTask(ctx, rec); err != nil {
			return rec, a2aError(err)
		}
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
