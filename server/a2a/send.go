package a2a

import (
	"context"
	stdjson "encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/server/pipeline"
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
// job, leaves it working with the job's handle as its first artifact. The task is
// committed before it is returned (with the operation's effect, when it has one), and
// the message's id is remembered with it: the message sent again is answered with the
// same task (message.go).
func (h *a2aHandler) start(ctx context.Context, call *Call, req *a2a.SendMessageRequest) (kv.AgentTask, error) {
	msg := req.Message
	switch {
	case msg == nil:
		return kv.AgentTask{}, invalidParams("missing", "message is required.")
	case len(msg.Parts) == 0:
		return kv.AgentTask{}, invalidParams("missing", "message.parts must hold at least one part.")
	case msg.Role != a2a.MessageRoleUser:
		return kv.AgentTask{}, invalidParams("enum", "message.role must be ROLE_USER.")
	}
	p := call.P
	var prev *kv.AgentTask
	if msg.TaskID != "" {
		rec, err := h.findTask(ctx, p, msg.TaskID)
		if err != nil {
			return rec, err
		}
		if msg.ID != "" && taskHasMessage(rec, msg.ID) {
			return rec, nil // this message, sent again: it has its answer already
		}
		if rec.State != string(a2a.TaskStateInputRequired) {
			return rec, invalidParams("task_not_awaiting_input", "The task is "+rec.State+" and takes no more messages; send a new message without taskId.")
		}
		prev = &rec
	}
	intent, text, ok, err := messageIntent(msg)
	if err != nil {
		return kv.AgentTask{}, a2aError(err)
	}
	ref := a2aMessageRef{key: messageIdemKey(msg.ID), taskID: string(msg.TaskID)}
	nt := h.newTaskWriter(p, prev, msg)
	if !ok {
		if err := h.admit(ctx, call, false); err != nil {
			return kv.AgentTask{}, err
		}
		w, err := nt.write("", func(t *a2a.Task, now time.Time) {
			setStatus(t, a2a.TaskStateInputRequired, now, h.askBack(), nil)
		})
		if err != nil {
			return kv.AgentTask{}, a2aError(err)
		}
		return h.record(ctx, p, ref.key, ref.fingerprint("", []byte(text)), w)
	}
	return h.runSkill(ctx, call, intent, ref, func(run skillRun) (kv.AgentTaskWrite, error) {
		o := run.o
		scoped := func(rec *kv.AgentTask) { rec.Scopes = run.scopes }
		switch {
		case run.failed != nil:
			return nt.write(o.Name, func(t *a2a.Task, now time.Time) {
				setStatus(t, a2a.TaskStateFailed, now, run.failed.Detail, *run.failed)
			}, scoped)
		case run.jobID == nil:
			return nt.write(o.Name, func(t *a2a.Task, now time.Time) {
				addArtifact(t, artifactResult, o.Name, run.raw)
				setStatus(t, a2a.TaskStateCompleted, now, completedText(o), nil)
			}, scoped)
		}
		return nt.write(o.Name, func(t *a2a.Task, now time.Time) {
			addArtifact(t, artifactAccepted, o.Name, run.raw)
			setStatus(t, a2a.TaskStateWorking, now, "The "+string(o.Job)+" job "+run.jobID.String()+" is under way; this task completes when it ends.", nil)
		}, scoped, func(rec *kv.AgentTask) { rec.JobID, rec.JobKind = run.jobID, o.Job })
	})
}

func completedText(o *pipeline.Operation) string {
	return "Done: the result artifact holds the " + o.Name + " answer."
}

// skillRun is what running a skill came to: the operation's answer (for a background
// job, the handle its start returned, and the job's id), or the REST error it ended
// with.
type skillRun struct {
	o      *pipeline.Operation
	scopes []string // the scopes the task is visible with (kv.AgentTask.Scopes)
	raw    []byte
	jobID  *kv.ID
	failed *pipeline.ToolErrorBody
}

// withOutput is run with the operation's answer raw (as JSON), and for a background
// job the job's id from its handle.
func (run skillRun) withOutput(raw []byte) skillRun {
	run.raw = raw
	if run.o.Awaits != "" {
		var handle struct {
			JobID string `json:"job_id"`
		}
		_ = stdjson.Unmarshal(raw, &handle)
		jobID, _ := kv.ParseID(handle.JobID)
		run.jobID = &jobID
	}
	return run
}

// taskBuild makes the task write of a message from what its skill came to.
type taskBuild func(run skillRun) (kv.AgentTaskWrite, error)

// a2aWire is the research pipeline as A2A skills: input from the data part's
// arguments, and a write's messageId as its idempotency key (a2aIdem).
var a2aWire = pipeline.ResearchWire{Budget: pipeline.BudgetCredential, Idem: a2aIdem, Bind: pipeline.BindArgsInput}

// skillCall is one message's skill on its way through the research pipeline (the
// request's data): what identifies the message, how its task is made, and the task
// its rendering came to.
type skillCall struct {
	h     *a2aHandler
	ref   a2aMessageRef
	fp    [32]byte
	build taskBuild
	rec   kv.AgentTask
	err   error
}

// runSkill runs the operation a message names through the research pipeline (scope,
// rate limit, the messageId's claim, binding, the input's own scope, the operation)
// and returns the message's task, committed. Its error refuses the message (unknown
// skill, a missing scope, a rate limit, a messageId sent before with another request);
// what binding or the operation refuses is a failed task. A write's messageId is
// claimed as REST claims an Idempotency-Key, and the task (made by build) is written
// in the operation's own transaction when the operation records its result under the
// claim, else committed right after it: either way before the answer. A message sent
// again (a retry after a lost answer) is answered with the first one's task, and
// nothing runs twice.
func (h *a2aHandler) runSkill(ctx context.Context, call *Call, intent a2aIntent, ref a2aMessageRef, build taskBuild) (kv.AgentTask, error) {
	o := h.s.OpByName(intent.Skill)
	if o == nil {
		return kv.AgentTask{}, invalidParams("unknown_skill", "Unknown skill "+strconv.Quote(intent.Skill)+"; the skills are "+h.skillNames()+".")
	}
	pc := pooledSkillCalls.Get().(*pooledSkillCall)
	defer func() {
		*pc = pooledSkillCall{}
		pooledSkillCalls.Put(pc)
	}()
	sk, r := &pc.sk, &pc.r
	*sk = skillCall{h: h, ref: ref, fp: ref.fingerprint(o.Name, intent.Arguments), build: build}
	*r = pipeline.Request{Ctx: ctx, Op: o, P: call.P, Args: intent.Arguments, Data: sk}
	h.s.skills.Run(r)
	if r.Rated {
		d := r.Rate
		call.rate.Store(&d)
	}
	return sk.rec, sk.err
}

// pooledSkillCall is one skill's request and call, pooled as tool calls are: nothing
// keeps either once runSkill returns (the claim's task is made inside the operation's
// transaction).
type pooledSkillCall struct {
	r  pipeline.Request
	sk skillCall
}

var pooledSkillCalls = sync.Pool{New: func() any { return new(pooledSkillCall) }}

// skillRunOf is what a skill's run is so far: its operation, and the scopes its task
// is visible with (those its bound input needed, when it bound).
func skillRunOf(r *pipeline.Request) skillRun {
	return skillRun{o: r.Op, scopes: taskScopes(r.Op, r.In)}
}

// renderSkill makes the message's task from the call's outcome and commits it (the
// A2A skill surface's renderer): a replayed message's first task; a refusal of the
// message itself (any step before binding, or the input's own scope) as an A2A error;
// otherwise the task, failed with what binding or the operation refused, or with the
// operation's answer.
func renderSkill(r *pipeline.Request, err error) {
	sk := r.Data.(*skillCall)
	sk.rec, sk.err = sk.h.finishSkill(r, sk, err)
}

func (h *a2aHandler) finishSkill(r *pipeline.Request, sk *skillCall, err error) (kv.AgentTask, error) {
	o, p := r.Op, r.P
	if err == nil && r.ReplayTask != nil { // this message, sent again: the task it made
		return h.findTask(r.Ctx, p, a2a.TaskID(r.ReplayTask.String()))
	}
	if last := r.Trace.Last(); err != nil && last != pipeline.StepBind && last != pipeline.StepOperation {
		return kv.AgentTask{}, a2aError(err)
	}
	run := skillRunOf(r)
	var raw []byte
	if replay, ok := r.Out.(pipeline.ReplayedOutput); ok && err == nil {
		raw = replay
	} else if err == nil {
		raw, err = pipeline.EncodeOutput(r.Out)
	}
	if refusal := taskRefusal(err); refusal != nil { // the task it continues has moved on: nothing was done
		return kv.AgentTask{}, refusal
	}
	if err != nil {
		body, cause := pipeline.ToolErrorBodyOf(o, err)
		if cause != "" {
			h.s.Log.Error().Str("surface", "a2a").Str("skill", o.Name).Msg(cause)
		}
		run.failed = &body
	} else {
		run = run.withOutput(raw)
		if l, isList := r.Out.(pipeline.ListResult); isList && o.Awaits == "" {
			run.raw = pipeline.MustRawJSON(map[string]any{"items": stdjson.RawMessage(pipeline.MustRawJSON(l.RESTItems())), "next_cursor": cursorOrNull(l.PageCursor())})
		}
		if rec, ok := r.Claim.Written(r.Ctx, h.s.DB, p.Partition); ok {
			return rec, nil
		}
	}
	w, err := sk.build(run)
	if err != nil {
		return kv.AgentTask{}, a2aError(err)
	}
	rec, err := h.record(r.Ctx, p, sk.ref.key, sk.fp, w)
	if err == nil && r.Claim != nil {
		r.Claim.Kept = true // the task's record finished the claim
	}
	return rec, err
}

// taskScopes are the scopes a task of o (for input in, when it bound) is visible
// with: the one the input needed (going live: studies:golive), else those of which
// the operation takes any, else its scope.
func taskScopes(o *pipeline.Operation, in any) []string {
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

// taskWriter makes the task writes of one message: a new task, whose id and context
// are fixed once (a write may be made more than once, in a transaction run again), or
// prev continued with the message.
type taskWriter struct {
	p     *pipeline.Principal
	prev  *kv.AgentTask
	msg   *a2a.Message
	id    kv.ID
	ctxID string
	now   func() time.Time // the status time: when the task reached its state
}

func (h *a2aHandler) newTaskWriter(p *pipeline.Principal, prev *kv.AgentTask, msg *a2a.Message) *taskWriter {
	w := &taskWriter{p: p, prev: prev, msg: msg, now: h.s.Now, ctxID: msg.ContextID}
	if prev == nil {
		w.id = h.s.DB.NewID()
		if w.ctxID == "" {
			w.ctxID = a2a.NewContextID()
		}
	}
	return w
}

// write is the message's task for skill, moved to its state by set; more adds record
// fields.
func (w *taskWriter) write(skill string, set func(t *a2a.Task, now time.Time), more ...func(rec *kv.AgentTask)) (kv.AgentTaskWrite, error) {
	now := w.now()
	if w.prev != nil {
		return kv.AgentTaskWrite{ID: w.prev.ID, Change: func(stored *kv.AgentTask) error {
			t, err := decodeTask(*stored)
			if err != nil {
				return err
			}
			if t.Status.State != a2a.TaskStateInputRequired {
				return invalidParams("task_not_awaiting_input", "The task is "+string(t.Status.State)+" and takes no more messages.")
			}
			t.History = append(t.History, historyMessage(t, w.msg))
			set(t, now)
			stored.Skill = skill
			for _, m := range more {
				m(stored)
			}
			*stored, err = taskRecord(*stored, t)
			return err
		}}, nil
	}
	t := newTask(w.id, w.ctxID, w.msg)
	set(t, now)
	rec, err := taskRecord(kv.AgentTask{ID: w.id, OrgID: w.p.Partition.Org, Env: w.p.Partition.Env, Skill: skill, CreatedBy: w.p.KeyID}, t)
	if err != nil {
		return kv.AgentTaskWrite{}, err
	}
	for _, m := range more {
		m(&rec)
	}
	return kv.AgentTaskWrite{New: &rec}, nil
}

// askBack is the question a message the engine cannot map is answered with.
func (h *a2aHandler) askBack() string {
	return "I could not tell which skill this asks for. Send a data part {\"skill\": NAME, \"arguments\": {...}} " +
		"(reply on this task with its taskId), or plain text such as \"create a study about ...\" or \"status of study ID\". " +
		"The skills are " + h.skillNames() + "; the agent card at " + AgentCardPath + " describes each."
}

func (h *a2aHandler) skillNames() string {
	names := make([]string, len(h.s.Ops))
	for i, o := range h.s.Ops {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}
