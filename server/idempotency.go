package server

import (
	"bytes"
	"context"
	"crypto/sha256"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// idemSlot is a claimed Idempotency-Key travelling to the operation, which records its
// response in the same transaction as its mutation.
type idemSlot struct {
	partition   kv.Partition
	key         string
	fingerprint [32]byte
}

type idemCtxKey struct{}

// idemWrite returns what the operation's mutation must record for the request's
// claimed key, or nil when the request carried none.
func idemWrite(ctx context.Context, status int, out any) *kv.IdemWrite {
	slot, ok := ctx.Value(idemCtxKey{}).(*idemSlot)
	if !ok {
		return nil
	}
	body, err := json.MarshalNoEscape(out)
	if err != nil {
		return nil
	}
	return &kv.IdemWrite{Partition: slot.partition, Key: slot.key, Fingerprint: slot.fingerprint, Status: status, Body: body}
}

// maxIdemKey is the longest Idempotency-Key accepted (api-spec Limits).
const maxIdemKey = 255

// claimIdempotency handles the Idempotency-Key of a request to an idempotent operation.
// It either answers the request itself (a replay or a 409/422: done is true), or
// returns a context carrying the claim for the operation's transaction and a release
// func that forgets the claim unless the operation recorded its response.
func (s *Server) claimIdempotency(c *fasthttp.RequestCtx, p *Principal) (ctx context.Context, release func(), done bool) {
	raw := c.Request.Header.Peek("Idempotency-Key")
	if raw == nil {
		return s.ctx, func() {}, false
	}
	if !validIdemKey(raw) {
		s.writeRESTError(c, kv.Invalid(kv.FieldError{Loc: []any{"header", "Idempotency-Key"}, Type: "idempotency_key_invalid",
			Msg: "Idempotency-Key must be 1 to 255 printable ASCII characters.", Ctx: map[string]any{"max_length": maxIdemKey}}), resourceAPI)
		return nil, nil, true
	}
	key := string(raw)
	body, err := readBody(c, maxJSONBody)
	if err != nil {
		s.writeRESTError(c, err, resourceAPI)
		return nil, nil, true
	}
	fp := requestFingerprint(c.Method(), c.Path(), body)
	outcome, status, stored, err := s.db.ClaimIdem(s.ctx, p.Partition, key, fp)
	switch {
	case err != nil:
		s.writeRESTError(c, err, resourceAPI)
		return nil, nil, true
	case outcome == kv.IdemReplay:
		c.Response.Header.Set("Idempotent-Replayed", "true")
		c.SetStatusCode(status)
		c.SetContentType("application/json")
		c.SetBody(stored)
		return nil, nil, true
	case outcome == kv.IdemReused:
		s.writeRESTError(c, &apiError{Status: 409, Code: "idempotency_key_reused",
			Detail: "This Idempotency-Key was used with a different request; use a new key for a new request."}, resourceAPI)
		return nil, nil, true
	case outcome == kv.IdemInFlight:
		s.writeRESTError(c, &apiError{Status: 409, Code: "idempotency_key_in_flight",
			Detail: "A request with this Idempotency-Key is still running; retry once it has finished."}, resourceAPI)
		return nil, nil, true
	}
	slot := &idemSlot{partition: p.Partition, key: key, fingerprint: fp}
	release = func() {
		// A finished record is kept by ReleaseIdem; only an unfinished claim goes, so
		// a 4xx/5xx outcome is not remembered and a corrected retry can succeed.
		if err := s.db.ReleaseIdem(context.Background(), p.Partition, key); err != nil {
			s.log.Error().Err(err).Msg("release idempotency claim")
		}
	}
	return context.WithValue(s.ctx, idemCtxKey{}, slot), release, false
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
