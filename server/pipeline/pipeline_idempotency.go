package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"sync/atomic"

	json "github.com/goccy/go-json"

	"interviewd/kv"
)

// The research pipeline's idempotency step, the one claim, replay and in-flight rule
// of every surface that has a key: REST's Idempotency-Key and an A2A message's
// messageId (a2a/message.go). A surface chooses only where its key comes from and how
// the refusals read on its wire (idemWire).

// IdemSlot is a claimed idempotency key travelling to the operation, which records its
// response in the same transaction as its mutation.
type IdemSlot struct {
	partition   kv.Partition
	key         string
	fingerprint [32]byte
	// Task, for a message to the A2A surface, makes the message's task from the
	// operation's output, for the mutation to write with its result; taskWritten is
	// the task's id once it was handed over (a2a/message.go). An operation given a
	// write must commit it with its mutation or fail.
	Task        func(output []byte) *kv.AgentTaskWrite
	taskWritten atomic.Pointer[kv.ID]
}

type idemCtxKey struct{}

// IdemWrite returns what the operation's mutation must record for the request's
// claimed key (its output, which every surface renders alike), or nil when the
// request carried none.
func IdemWrite(ctx context.Context, out any) *kv.IdemWrite {
	slot, ok := ctx.Value(idemCtxKey{}).(*IdemSlot)
	if !ok {
		return nil
	}
	body, err := json.MarshalNoEscape(out)
	if err != nil {
		return nil
	}
	return &kv.IdemWrite{Partition: slot.partition, Key: slot.key, Fingerprint: slot.fingerprint, Output: body, Task: slot.taskWrite(body)}
}

// maxIdemKey is the longest Idempotency-Key accepted (api-spec Limits).
const maxIdemKey = 255

// ReplayedOutput is an operation's output recorded under an idempotency key, as the
// first request's operation returned it; the renderer sends it as it would the output.
type ReplayedOutput []byte

// IdemWire is how a surface takes part in the idempotency step: where a call's key
// comes from, and how the step's refusals are worded on its wire. The claim, the
// replay and the in-flight rule are the same for every surface.
type IdemWire struct {
	// Key returns the call's key and the fingerprint of what it asks, or ok false
	// when it carries none (or its operation takes none). nil: the surface has no key
	// (MCP: the contract gives it no equivalent; the app's forms).
	Key func(r *Request) (key string, fp [32]byte, ok bool, err error)
	// reused and inFlight refuse a key sent with another request, and a key whose
	// first request is still running.
	Reused, InFlight *APIError
	// Slot, when set, completes a claim before the operation runs (A2A: the task the
	// operation's transaction writes with its result).
	Slot func(r *Request, slot *IdemSlot)
	// Late holds the verdict on a key that a finished or running request holds
	// (replay, reused, in flight) until the input is bound and its own scope checked:
	// A2A refuses a message its sender could never send for that, whatever its
	// messageId. REST answers the key first (DESIGN: replay or 409, then 422).
	Late bool
}

// idemVerdict is the idempotency step's answer for a key that a finished or running
// request holds.
type idemVerdict struct {
	outcome kv.IdemOutcome
	prior   kv.IdemPrior
	wire    *IdemWire
}

// apply answers r with the verdict: the replayed output (nil error), or the refusal.
func (v *idemVerdict) apply(r *Request) error {
	switch v.outcome {
	case kv.IdemReplay:
		r.Out, r.Status, r.ReplayTask = ReplayedOutput(v.prior.Output), r.Op.Status, v.prior.TaskID
		return nil
	case kv.IdemReused:
		return v.wire.Reused
	}
	return v.wire.InFlight
}

// The REST wording (DECISIONS §13): both refusals are 409.
var (
	errIdemReused = &APIError{Status: 409, Code: "idempotency_key_reused",
		Detail: "This Idempotency-Key was used with a different request; use a new key for a new request."}
	errIdemInFlight = &APIError{Status: 409, Code: "idempotency_key_in_flight",
		Detail: "A request with this Idempotency-Key is still running; retry once it has finished."}
)

// restIdem is REST's Idempotency-Key on idempotent operations: the header, over the
// method, path and canonical JSON body.
var RESTIdem = IdemWire{Key: restIdemKey, Reused: errIdemReused, InFlight: errIdemInFlight}

func restIdemKey(r *Request) (string, [32]byte, bool, error) {
	if !r.Op.Idempotent {
		return "", [32]byte{}, false, nil
	}
	c := r.C
	raw := c.Request.Header.Peek("Idempotency-Key")
	if raw == nil {
		return "", [32]byte{}, false, nil
	}
	if !ValidIdemKey(raw) {
		return "", [32]byte{}, false, WireInvalid(kv.FieldError{Loc: []any{"header", "Idempotency-Key"}, Type: "idempotency_key_invalid",
			Msg: "Idempotency-Key must be 1 to 255 printable ASCII characters.", Ctx: map[string]any{"max_length": maxIdemKey}})
	}
	body, err := ReadBody(c, MaxJSONBody)
	if err != nil {
		return "", [32]byte{}, false, err
	}
	return string(raw), RequestFingerprint(c.Method(), c.Path(), body), true, nil
}

// idempotencyStep claims the call's key for its operation. A finished request under
// the key is replayed from its recorded output (r.out is a replayedOutput, and
// r.replayTask the task an A2A message made) without running the operation; a key
// sent with another request, or whose request is still running, is refused (with
// w.late, once the input is bound and its scope checked: r.held). A
// new claim travels in r.ctx to the operation's transaction, which records its output
// under it; it is held (r.claim) until the call's answer is rendered, and released
// then unless finished, so a refused or failed request is not remembered.
func (s *Core) idempotencyStep(w IdemWire) Middleware {
	return func(next Handler) Handler {
		return func(r *Request) error {
			r.Trace |= StepIdempotency
			if w.Key == nil {
				return next(r)
			}
			key, fp, ok, err := w.Key(r)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				return next(r)
			}
			p := r.P
			// ClaimAgentMessage is ClaimIdem with the whole of what a finished request
			// left: its output and, for an A2A message, its task.
			outcome, prior, err := s.DB.ClaimAgentMessage(r.Ctx, p.Partition, key, fp)
			switch {
			case err != nil:
				return err
			case outcome != kv.IdemClaimed:
				v := &idemVerdict{outcome: outcome, prior: prior, wire: &w}
				if w.Late {
					r.held = v
					return next(r)
				}
				return v.apply(r)
			}
			slot := &IdemSlot{partition: p.Partition, key: key, fingerprint: fp}
			if w.Slot != nil {
				w.Slot(r, slot)
			}
			r.Claim = &idemClaim{s: s, slot: slot}
			r.Ctx = context.WithValue(r.Ctx, idemCtxKey{}, slot)
			return next(r)
		}
	}
}

// idemClaim is a key claimed for a call, held until its answer is rendered.
type idemClaim struct {
	s    *Core
	slot *IdemSlot
	// Kept: the claim was finished by what the call committed (an A2A message's
	// task), so there is nothing to release.
	Kept bool
}

// release forgets the claim unless the call finished it; a finished record is kept
// (kv.DB.ReleaseIdem). It runs on its own context: the claim must go even when the
// request's has ended.
func (c *idemClaim) release() {
	if c.Kept {
		return
	}
	if err := c.s.DB.ReleaseIdem(context.Background(), c.slot.partition, c.slot.key); err != nil {
		c.s.Log.Error().Err(err).Msg("release idempotency claim")
	}
}

func ValidIdemKey(k []byte) bool {
	if len(k) == 0 || len(k) > maxIdemKey {
		return false
	}
	for _, b := range k {
		if b < 0x20 || b > 0x7e {
			return false
		}
	}
	return true
}

// RequestFingerprint is SHA-256 over method, path and the canonical JSON body, so key
// order and whitespace do not make two identical requests look different.
func RequestFingerprint(method, path, body []byte) [32]byte {
	h := sha256.New()
	h.Write(method)
	h.Write([]byte{0})
	h.Write(path)
	h.Write([]byte{0})
	h.Write(canonicalJSON(body))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// canonicalJSON re-encodes a JSON body with sorted keys and no insignificant space;
// bodies that are not JSON are fingerprinted as they are.
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	out, err := json.MarshalNoEscape(v)
	if err != nil {
		return body
	}
	return out
}

// taskWrite is the task the claim's message makes from the operation's output, for
// idemWrite; nil when the claim is not a message's.
func (slot *IdemSlot) taskWrite(output []byte) *kv.AgentTaskWrite {
	if slot.Task == nil {
		return nil
	}
	w := slot.Task(output)
	if w != nil {
		id := w.ID
		if w.New != nil {
			id = w.New.ID
		}
		slot.taskWritten.Store(&id)
	}
	return w
}

// Written returns the task the operation wrote with its result under the claim, when
// it did, and marks the claim finished.
func (c *idemClaim) Written(ctx context.Context, db *kv.DB, part kv.Partition) (kv.AgentTask, bool) {
	if c == nil {
		return kv.AgentTask{}, false
	}
	id := c.slot.taskWritten.Load()
	if id == nil {
		return kv.AgentTask{}, false
	}
	rec, err := db.FindAgentTask(ctx, part, *id)
	if err == nil {
		c.Kept = true
	}
	return rec, err == nil
}
