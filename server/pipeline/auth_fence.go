package pipeline

import (
	"context"
	"errors"

	"interviewd/kv"
)

// AuthFenceStep lets a read on a shared store check its cached credential with its
// own first statement instead of a round trip of its own (kv's credential fence): the
// request runs under a fence, settled before it answers, whatever it did. A credential
// found changed since it was cached (on any node) fails the request's statement, which
// did nothing; the request then runs once more from authentication, with the
// credential read afresh, so a revoked key gets its 401 and a key whose organisation
// merely changed gets its answer.
//
// Only reads (GET and HEAD) take it: they act on nothing but the store before they
// answer, so every effect of theirs is behind the check. Writes check first, as
// before.
func (s *Core) AuthFenceStep(next Handler) Handler {
	if s.DB == nil || !s.DB.Shared() {
		return next
	}
	return func(r *Request) error {
		if r.Op == nil || r.Op.Method != "GET" {
			return next(r)
		}
		base := r.Ctx
		err := s.fenced(r, next)
		if !errors.Is(err, kv.ErrCredentialChanged) {
			return err
		}
		*r = Request{C: r.C, Info: r.Info, Ctx: base, SF: r.SF, Route: r.Route, Op: r.Op}
		r.Info.Org = ""
		r.C.Response.ResetBody()
		return next(r)
	}
}

// fenced runs next under a fresh fence, settled when next returns and closed however
// it ends (a panic included), with the request's context as it was.
func (s *Core) fenced(r *Request, next Handler) error {
	base := r.Ctx
	ctx, f := kv.WithAuthFence(base)
	r.Ctx, r.Info.Ctx = ctx, ctx // authenticate reads the info's context
	defer func() {
		f.Close()
		r.Ctx, r.Info.Ctx = base, base
	}()
	err := next(r)
	if serr := s.DB.SettleAuth(ctx); serr != nil {
		err = serr
	}
	return err
}

// settleAfterSharedDecision ends a request whose cached credential the shared rate
// decision found changed (the decision checks it in its own statement and then records
// nothing, kv.DB.RateDecide), before anything else of it runs; it costs a round trip
// only if the decision could not reach the store.
func (s *Core) settleAfterSharedDecision(ctx context.Context) error {
	if s.Limiter == nil || !s.Limiter.Shared() {
		return nil
	}
	return s.DB.SettleAuth(ctx)
}
