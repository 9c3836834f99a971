package server

import (
	"context"
	"errors"

	"interviewd/kv"
)

// authFenceStep lets a read on a shared store check its cached credential with its
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
func (s *Core) authFenceStep(next handler) handler {
	if s.db == nil || !s.db.Shared() {
		return next
	}
	return func(r *request) error {
		if r.op == nil || r.op.Method != "GET" {
			return next(r)
		}
		base := r.ctx
		err := s.fenced(r, next)
		if !errors.Is(err, kv.ErrCredentialChanged) {
			return err
		}
		*r = request{c: r.c, info: r.info, ctx: base, sf: r.sf, route: r.route, op: r.op}
		r.info.org = ""
		r.c.Response.ResetBody()
		return next(r)
	}
}

// fenced runs next under a fresh fence, settled when next returns and closed however
// it ends (a panic included), with the request's context as it was.
func (s *Core) fenced(r *request, next handler) error {
	base := r.ctx
	ctx, f := kv.WithAuthFence(base)
	r.ctx, r.info.ctx = ctx, ctx // authenticate reads the info's context
	defer func() {
		f.Close()
		r.ctx, r.info.ctx = base, base
	}()
	err := next(r)
	if serr := s.db.SettleAuth(ctx); serr != nil {
		err = serr
	}
	return err
}

// settleAfterSharedDecision ends a request whose cached credential the shared rate
// decision found changed (the decision checks it in its own statement and then records
// nothing, kv.DB.RateDecide), before anything else of it runs; it costs a round trip
// only if the decision could not reach the store.
func (s *Core) settleAfterSharedDecision(ctx context.Context) error {
	if s.limiter == nil || !s.limiter.Shared() {
		return nil
	}
	return s.db.SettleAuth(ctx)
}
