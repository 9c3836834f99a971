package server

import (
	"strings"

	"interviewd/server/ratelimit"
)

// The research pipeline: the one sequence every operation of the research table runs
// through, whatever the surface (REST routes, MCP tool calls of both protocol eras, A2A
// skills, the web app's actions):
//
//	authenticate → scope → rate limit → idempotency → bind → required scope → operation → render
//
// Authentication and rendering are the surface's (its credential, its wire format).
// The steps between are composed here, once, from what the surface chooses in its
// researchWire: whether a caller refused at the scope step still learns its budget,
// which budget its calls count against, where its idempotency key comes from and how
// that step's refusals are worded, and how its input is bound. No surface can leave a
// step out: researchSteps returns them all, each marks the request as it passes
// (request.trace), and the tenancy matrix checks the marks of every surface's calls.
// Idempotency is in pipeline_idempotency.go, admission in pipeline_rate.go.

// researchStep is one step of the research pipeline, as a bit of request.trace.
type researchStep uint8

const (
	stepScope researchStep = 1 << iota
	stepRate
	stepIdempotency
	stepBind
	stepRequiredScope
	stepOperation

	// researchSequence is every step: what a call that reached its operation passed.
	researchSequence = stepScope | stepRate | stepIdempotency | stepBind | stepRequiredScope | stepOperation
)

var researchStepNames = []string{"scope", "rate limit", "idempotency", "bind", "required scope", "operation"}

// String names the steps of s in pipeline order ("scope, rate limit").
func (s researchStep) String() string {
	var names []string
	for i, name := range researchStepNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// last is the latest step of the trace: where a call that ended in an error ended.
func (s researchStep) last() researchStep {
	for bit := stepOperation; bit != 0; bit >>= 1 {
		if s&bit != 0 {
			return bit
		}
	}
	return 0
}

// researchPass is a call that reached its operation, for Config.onResearch: the
// surface, the operation and the steps it passed.
type researchPass struct {
	surface string
	op      string
	passed  researchStep
}

// callBudget is the rate budget a surface's calls count against.
type callBudget uint8

const (
	// budgetCredential: the credential's budget and its organisation's (DECISIONS
	// §12): REST requests, MCP tool calls and A2A messages alike.
	budgetCredential callBudget = iota
	// budgetNone: the web app. Its people are limited where they sign in; the
	// contract's budgets are an API credential's, and a page that shows one study runs
	// several operations, which must not spend the organisation's API budget.
	budgetNone
)

// researchWire is what a surface chooses of the research pipeline; everything else
// about a research call is the same on every surface.
type researchWire struct {
	// peekRate: a caller refused at the scope step still learns its budget (REST
	// sends it in headers).
	peekRate bool
	budget   callBudget
	idem     idemWire
	// bind fills r.in: from the path, query and body (REST), from one arguments
	// object (MCP, A2A), or from an input the surface built (the app's forms).
	bind func(r *request) error
}

// researchSteps composes the research pipeline's steps for a surface, in order; the
// surface's chain ends in runOperation (required scope → operation).
func (s *Core) researchSteps(w researchWire) []middleware {
	return []middleware{s.scopeStep(w.peekRate), s.rateStep(w.budget), s.idempotencyStep(w.idem), bindStep(w.bind)}
}

// researchSurface is a surface whose calls come from inside interviewd rather than
// from a route of their own (an MCP tool call inside a JSON-RPC request, an A2A
// skill inside a message, an app action inside a page): the surface and its chain,
// composed once.
type researchSurface struct {
	sf    *surface
	chain handler
}

// newResearchSurface composes the research pipeline for a surface that has
// authenticated its caller already (r.p is set before run): a call without a
// principal is refused as missing_token.
func (s *Core) newResearchSurface(name string, w researchWire, render renderer) *researchSurface {
	sf := &surface{
		name: name,
		authenticate: func(r *request) error {
			if r.p == nil {
				return &apiError{Status: 401, Code: "missing_token", Detail: "No credential."}
			}
			return nil
		},
		steps:  s.researchSteps(w),
		render: render,
		log:    &s.log,
	}
	return &researchSurface{sf: sf, chain: sf.chain(s.runOperation)}
}

// run takes r (op, p, ctx and the surface's own fields set) through the pipeline and
// the surface's renderer, and lets go of what the call held (an idempotency claim).
func (rs *researchSurface) run(r *request) {
	r.sf = rs.sf
	defer r.finish()
	rs.sf.render(r, rs.chain(r))
}

// finish lets go of what the request held once its answer is rendered: an
// idempotency claim the operation did not finish is released, so a corrected retry
// can run.
func (r *request) finish() {
	if r.claim != nil {
		r.claim.release()
		r.claim = nil
	}
}

// scopeStep checks the operation's scope, and for an app session the person's role
// (app_roles.go), before rate limits and decoding, so a caller that can never call the
// operation gets 403, not a 422 about its input. With peek, a refused caller still
// learns its budget.
func (s *Core) scopeStep(peek bool) middleware {
	return func(next handler) handler {
		return func(r *request) error {
			r.trace |= stepScope
			if err := r.p.roleAllows(r.op); err != nil {
				return err
			}
			if err := r.op.checkScope(r.p); err != nil {
				if peek {
					r.setRate(s.limiter.Peek(s.now(), r.p.RateKey, r.p.OrgKey, r.op.Write))
				}
				return err
			}
			return next(r)
		}
	}
}

// rateStep admits the call against the budget the surface counts it in.
func (s *Core) rateStep(budget callBudget) middleware {
	return func(next handler) handler {
		return func(r *request) error {
			r.trace |= stepRate
			if budget == budgetNone {
				return next(r)
			}
			d, err := s.admitCall(r.ctx, r.p, r.op.Write)
			if ferr := s.settleAfterSharedDecision(r.ctx); ferr != nil {
				return ferr
			}
			r.setRate(d)
			if err != nil {
				return err
			}
			return next(r)
		}
	}
}

// bindStep fills r.in the surface's way; a refusal is the input's (422).
func bindStep(bind func(r *request) error) middleware {
	return func(next handler) handler {
		return func(r *request) error {
			r.trace |= stepBind
			if err := bind(r); err != nil {
				return err
			}
			return next(r)
		}
	}
}

// bindREST fills r.in from the path, query and JSON body (or the operation's own
// binder, for uploads).
func bindRESTInput(r *request) error {
	bind := r.op.bindREST
	if r.op.restBind != nil {
		bind = r.op.restBind
	}
	in, err := bind(r.c)
	if err != nil {
		return err
	}
	r.in = in
	return nil
}

// bindArgsInput fills r.in from one JSON object of named arguments (r.args): the MCP
// and A2A form. A call without arguments is a call with {}.
func bindArgsInput(r *request) error {
	args := r.args
	if len(args) == 0 || isJSONNull(args) {
		args = nil
	}
	in := r.op.newInput()
	if err := r.op.plan.bindArgs(in, args); err != nil {
		return err
	}
	r.in = in
	return nil
}

// bindBuiltInput checks an input the surface built itself (r.in, from a form) by the
// operation's declarative rules and its own validation, as binding checks any other.
func bindBuiltInput(r *request) error {
	return r.op.plan.finish(r.in, nil)
}

// runOperation is the end of every research chain: the input's own scope (setting
// mode to live needs studies:golive), a held idempotency verdict, then the operation
// on the request's context.
func (s *Core) runOperation(r *request) error {
	r.trace |= stepRequiredScope
	if err := r.p.require(r.op.requiredScope(r.in)); err != nil {
		return err
	}
	if r.held != nil { // a replay or a refusal of the key, answered now (idemWire.late)
		return r.held.apply(r)
	}
	r.trace |= stepOperation
	if s.onResearch != nil {
		s.onResearch(researchPass{surface: r.sf.name, op: r.op.Name, passed: r.trace})
	}
	out, err := r.op.call(r.ctx, r.p, r.in)
	if err != nil {
		return err
	}
	r.out, r.status = out, r.op.Status
	return nil
}

// setRate keeps the last admission decision for the renderer (REST headers, MCP's
// and A2A's response headers).
func (r *request) setRate(d ratelimit.Decision) {
	r.rate, r.rated = d, true
}
