package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"sync/atomic"

	json "github.com/goccy/go-json"

	"interviewd/kv"
)

// idemSlot is a claimed Idempotency-Key travelling to the operation, which records its
// response in the same transaction as its mutation.
type idemSlot struct {
	partition   kv.Partition
	key         string
	fingerprint [32]byte
	// task, for a message to the A2A surface, makes the message's task from the
	// operation's output, for the mutation to write with its result; taskWritten is
	// the task's id once it was handed over (a2a_message.go). An operation given a
	// write must commit it with its mutation or fail.
	task        func(output []byte) *kv.AgentTaskWrite
	taskWritten atomic.Pointer[kv.ID]
}

type idemCtxKey struct{}

// idemWrite returns what the operation's mutation must record for the request's
// claimed key (its output, which every surface renders alike), or nil when the
// request carried none.
func idemWrite(ctx context.Context, out any) *kv.IdemWrite {
	slot, ok := ctx.Value(idemCtxKey{}).(*idemSlot)
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

// replayedOutput is an operation's output recorded under an Idempotency-Key, as the
// first request's operation returned it; the renderer sends it as it would the output.
type replayedOutput []byte

// idempotencyStep is the REST rule for Idempotency-Key on idempotent operations: a
// replay of a finished request is rendered from its recorded output (r.out is a
// replayedOutput) without running the rest of the chain; a reused or still running key
// is refused; a new key is claimed for the operation's transaction (the claim travels
// in r.ctx) and forgotten afterwards unless the operation recorded its output.
func (s *Server) idempotencyStep(next handler) handler {
	return func(r *request) error {
		if !r.op.Idempotent {
			return next(r)
		}
		c := r.c
		raw := c.Request.Header.Peek("Idempotency-Key")
		if raw == nil {
			return next(r)
		}
		if !validIdemKey(raw) {
			return wireInvalid(kv.FieldError{Loc: []any{"header", "Idempotency-Key"}, Type: "idempotency_key_invalid",
				Msg: "Idempotency-Key must be 1 to 255 printable ASCII characters.", Ctx: map[string]any{"max_length": maxIdemKey}})
		}
		key := string(raw)
		body, err := readBody(c, maxJSONBody)
		if err != nil {
			return err
		}
		fp := requestFingerprint(c.Method(), c.Path(), body)
		p := r.p
		outcome, stored, err := s.db.ClaimIdem(r.ctx, p.Partition, key, fp)
		switch {
		case err != nil:
			return err
		case outcome == kv.IdemReplay:
			r.out, r.status = replayedOutput(stored), r.op.Status
			return nil
		case outcome == kv.IdemReused:
			return &apiError{Status: 409, Code: "idempotency_key_reused",
				Detail: "This Idempotency-Key was used with a different request; use a new key for a new request."}
		case outcome == kv.IdemInFlight:
			return &apiError{Status: 409, Code: "idempotency_key_in_flight",
				Detail: "A request with this Idempotency-Key is still running; retry once it has finished."}
		}
		defer func() {
			// A finished record is kept by ReleaseIdem; only an unfinished claim goes, so
			// a 4xx/5xx outcome is not remembered and a corrected retry can succeed. It
			// runs on its own context: the claim must go even when the request's ended.
			if err := s.db.ReleaseIdem(context.Background(), p.Partition, key); err != nil {
				s.log.Error().Err(err).Msg("release idempotency claim")
			}
		}()
		r.ctx = context.WithValue(r.ctx, idemCtxKey{}, &idemSlot{partition: p.Partition, key: key, fingerprint: fp})
		return next(r)
	}
}

func validIdemKey(k []byte) bool {
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

// requestFingerprint is SHA-256 over method, path and the canonical JSON body, so key
// order and whitespace do not make two identical requests look different.
func requestFingerprint(method, path, body []byte) [32]byte {
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
