package server

// The research table's steps: every surface that serves its operations (REST, MCP tool
// calls, and the app's actions) composes these, so a rule (scope, limit, validation)
// cannot differ between surfaces. They read the operation from r.op and the caller
// from r.p.

// scopeStep checks the operation's scope before rate limits and decoding, so a
// credential that can never call the operation gets 403, not a 422 about its input.
// With peek, a refused caller still learns its budget (REST sends it in headers).
func (s *Server) scopeStep(peek bool) middleware {
	return func(next handler) handler {
		return func(r *request) error {
			if err := r.op.checkScope(r.p); err != nil {
				if peek {
					r.setRate(s.limiter.peek(s.now(), r.p.RateKey, r.p.OrgKey, r.op.Write))
				}
				return err
			}
			return next(r)
		}
	}
}

// rateStep admits the call against the caller's and organisation's budgets.
func (s *Server) rateStep(next handler) handler {
	return func(r *request) error {
		d, err := s.admitCallIn(r.ctx, r.p, r.op.Write)
		if ferr := s.settleAfterSharedDecision(r); ferr != nil {
			return ferr
		}
		r.setRate(d)
		if err != nil {
			return err
		}
		return next(r)
	}
}

// bindRESTStep fills r.in from the path, query and JSON body (or the operation's own
// binder, for uploads).
func bindRESTStep(next handler) handler {
	return func(r *request) error {
		bind := r.op.bindREST
		if r.op.restBind != nil {
			bind = r.op.restBind
		}
		in, err := bind(r.c)
		if err != nil {
			return err
		}
		r.in = in
		return next(r)
	}
}

// bindArgsStep fills r.in from one JSON object of named arguments (r.args): the MCP
// and A2A form. A call without arguments is a call with {}.
func bindArgsStep(next handler) handler {
	return func(r *request) error {
		args := r.args
		if len(args) == 0 || isJSONNull(args) {
			args = nil
		}
		in := r.op.newInput()
		if err := r.op.plan.bindArgs(in, args); err != nil {
			return err
		}
		r.in = in
		return next(r)
	}
}

// runOperation is the handler of every research route: the input's own scope (setting
// mode to live needs studies:golive), then the operation on the request's context.
func runOperation(r *request) error {
	if err := r.p.require(r.op.requiredScope(r.in)); err != nil {
		return err
	}
	out, err := r.op.call(r.ctx, r.p, r.in)
	if err != nil {
		return err
	}
	r.out, r.status = out, r.op.Status
	return nil
}

// setRate keeps the last admission decision for the renderer (REST headers, MCP's
// response headers).
func (r *request) setRate(d rateDecision) {
	r.rate, r.rated = d, true
}
