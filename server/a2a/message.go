package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// A message's id is its idempotency key. A2A clients give every message a fresh
// messageId and send the same message again, same id, when its answer was lost: that
// message is answered with the task the first one made, and runs nothing twice. The task
// is committed before any answer, with the operation's effect when there is one, and
// the key is remembered with it (kv.RecordAgentTask, kv.IdemWrite.Task), so a crash
// after the answer can lose neither the task nor the way back to it.

// a2aMessageRef is what identifies a message: its key ("" when it has no id) and the
// task it continues ("" for a new task).
type a2aMessageRef struct {
	key    string
	taskID string
}

// messageIdemKey is the idempotency key of messageId: "a2a:" and the id when it is a
// valid Idempotency-Key, so the same message reaches the same record whichever path
// answers it, else a digest of it; "" for none.
func messageIdemKey(messageID string) string {
	switch {
	case messageID == "":
		return ""
	case pipeline.ValidIdemKey([]byte(messageID)):
		return "a2a:" + messageID
	}
	sum := sha256.Sum256([]byte(messageID))
	return "a2a#" + hex.EncodeToString(sum[:])
}

// fingerprint is the request a message makes: the skill and its arguments (for a
// message the engine could not map, its text), and the task it continues.
func (r a2aMessageRef) fingerprint(skill string, args []byte) [32]byte {
	surface := "A2A"
	if r.taskID != "" {
		surface += " " + r.taskID
	}
	return pipeline.RequestFingerprint([]byte(surface), []byte(skill), args)
}

var errMessageReused = &pipeline.APIError{Status: 422, Code: "idempotency_key_reused",
	Detail: "This messageId was sent before with a different request; give a new message a new messageId."}

// record commits a message's task w with its key, and returns it; a message sent
// before is answered with the task it made then.
func (h *a2aHandler) record(ctx context.Context, p *pipeline.Principal, key string, fp [32]byte, w kv.AgentTaskWrite) (kv.AgentTask, error) {
	rec, outcome, err := h.s.DB.RecordAgentTask(ctx, p.Partition, key, fp, w)
	if err != nil {
		if refusal := taskRefusal(err); refusal != nil {
			return kv.AgentTask{}, refusal
		}
		return rec, a2aError(err)
	}
	switch outcome {
	case kv.IdemReused:
		return kv.AgentTask{}, a2aError(errMessageReused)
	case kv.IdemReplay:
		return h.findTask(ctx, p, a2a.TaskID(rec.ID.String()))
	}
	return rec, nil
}

// taskRefusal is the refusal of a message whose task could not take it (the task it
// continues ended or moved on meanwhile), or nil for any other error.
func taskRefusal(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, kv.ErrAgentTaskEnded) {
		return invalidParams("task_not_awaiting_input", "The task has ended and takes no more messages; send a new message without taskId.")
	}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return err
	}
	return nil
}

// taskHasMessage reports whether messageID is in the history of task rec.
func taskHasMessage(rec kv.AgentTask, messageID string) bool {
	var t struct {
		History []struct {
			MessageID string `json:"messageId"`
		} `json:"history"`
	}
	if stdjson.Unmarshal(rec.Body, &t) != nil {
		return false
	}
	for _, m := range t.History {
		if m.MessageID == messageID {
			return true
		}
	}
	return false
}

// a2aIdem is the research pipeline's idempotency step for A2A: a write's messageId
// is claimed as REST claims an Idempotency-Key, and the claim carries the task the
// operation's transaction writes with its result. The wording is A2A's: a messageId
// sent with another request is INVALID_PARAMS (422 idempotency_key_reused: the
// message's own params are wrong, and a message whose task was recorded answers so
// too, kv.RecordAgentTask); one whose message is still running is 409
// idempotency_key_in_flight, a server error to retry. DECISIONS §13's 409 for both is
// the Idempotency-Key header's, which A2A does not read. The verdict is late: a
// message whose input needs a scope its sender lacks is refused for that first.
var a2aIdem = pipeline.IdemWire{Key: a2aIdemKey, Reused: errMessageReused, InFlight: errMessageInFlight, Slot: a2aIdemSlot, Late: true}

var errMessageInFlight = &pipeline.APIError{Status: 409, Code: "idempotency_key_in_flight",
	Detail: "A message with this messageId is still running; send it again once it has finished."}

// a2aIdemKey is a write's messageId key; reads have none (their task is remembered
// with the messageId when it is recorded).
func a2aIdemKey(r *pipeline.Request) (string, [32]byte, bool, error) {
	sk := r.Data.(*skillCall)
	if !r.Op.Write || sk.ref.key == "" {
		return "", [32]byte{}, false, nil
	}
	return sk.ref.key, sk.fp, true, nil
}

// a2aIdemSlot gives the claim the message's task, made from the operation's output
// when its transaction records it.
func a2aIdemSlot(r *pipeline.Request, slot *pipeline.IdemSlot) {
	sk := r.Data.(*skillCall)
	slot.Task = func(output []byte) *kv.AgentTaskWrite {
		w, err := sk.build(skillRunOf(r).withOutput(output))
		if err != nil {
			return nil // recorded after the operation instead
		}
		return &w
	}
}
