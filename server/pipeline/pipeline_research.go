package pipeline

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

// ResearchStep is one step of the research pipeline, as a bit of request.trace.
type ResearchStep uint8

const (
	StepScope ResearchStep = 1 << iota
	StepRate
	StepIdempotency
	StepBind
	stepRequiredScope
	StepOperation

	// ResearchSequence is every step: what a call that reached its operation passed.
	ResearchSequence = StepScope | StepRate | StepIdempotency | StepBind | stepRequiredScope | StepOperation
)

var researchStepNames = []string{"scope", "rate limit", "idempotency", "bind", "required scope", "operation"}

// String names the steps of s in pipeline order ("scope, rate limit").
func (s ResearchStep) String() string {
	var names []string
	for i, name := range researchStepNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// Last is the latest step of the trace: where a call that ended in an error ended.
func (s ResearchStep) Last() ResearchStep {
	for bit := StepOperation; bit != 0; bit >>= 1 {
		if s&bit != 0 {
			return bit
		}
	}
	return 0
}

// ResearchPass is a call that reached its operation, for Config.onResearch: the
// surface, the operation and the steps it passed.
type ResearchPass struct {
	Surface string
	Op      string
	Passed  ResearchStep
}

// callBudget is the rate budget a surface's calls count against.
type callBudget uint8

const (
	// BudgetCredential: the credential's budget and its organisation's (DECISIONS
	// §12): REST requests, MCP tool calls and A2A messages alike.
	BudgetCredential callBudget = iota
	// budgetNone: the web app. Its people are limited where they sign in; the
	// contract's budgets are an API credential's, and a page that shows one study runs
	// several operations, which must not spend the organisation's API budget.
	BudgetNone
)

// ResearchWire is what a surface chooses of the research pipeline; everything else
// about a research call is the same on every surface.
type ResearchWire struct {
	// PeekRate: a caller refused at the scope step still learns its budget (REST
	// sends it in headers).
	PeekRate bool
	Budget   callBudget
	Idem     IdemWire
	// Bind fills r.in: from the path, query and body (REST), from one arguments
	// object (MCP, A2A), or from an input the surface built (the app's forms).
	Bind func(r *Request) error
}

// ResearchSteps composes the research pipeline's steps for a surface, in order; the
// surface's chain ends in runOperation (required scope → operation).
func (s *Core) ResearchSteps(w ResearchWire) []Middleware {
	return []Middleware{s.scopeStep(w.PeekRate), s.rateStep(w.Budget), s.idempotencyStep(w.Idem), bindStep(w.Bind)}
}

// ResearchSurface is a surface whose calls come from inside interviewd rather than
// from a route of their own (an MCP tool call inside a JSON-RPC request, an A2A
// skill inside a message, an app action inside a page): the surface and its chain,
// composed once.
type ResearchSurface struct {
	sf    *Surface
	chain Handler
}

// NewResearchSurface composes the research pipeline for a surface that has
// authenticated its caller already (r.p is set before run): a call without a
// principal is refused as missing_token.
func (s *Core) NewResearchSurface(name string, w ResearchWire, render renderer) *ResearchSurface {
	sf := &Surface{
		Name: name,
		Authenticate: func(r *Request) error {
			if r.P == nil {
				return &APIError{Status: 401, Code: "missing_token", Detail: "No credential."}
			}
			return nil
		},
		Steps:  s.ResearchSteps(w),
		Render: render,
		Log:    &s.Log,
	}
	return &ResearchSurface{sf: sf, chain: sf.Chain(s.RunOperation)}
}

// Run takes r (op, p, ctx and the surface's own fields set) through the pipeline and
// the surface's renderer, and lets go of what the call held (an idempotency claim).
func (rs *ResearchSurface) Run(r *Request) {
	r.SF = rs.sf
	defer r.finish()
	rs.sf.Render(r, rs.chain(r))
}

// finish lets go of what the request held once its answer is rendered: an
// idempotency claim the operation did not finish is released, so a corrected retry
// can run.
func (r *Request) finish() {
	if r.Claim != nil {
		r.Claim.release()
		r.Claim = nil
	}
}

// scopeStep checks the operation's scope, and for an app session the person's role
// (app/roles.go), before rate limits and decoding, so a caller that can never call the
// operation gets 403, not a 422 about its input. With peek, a refused caller still
// learns its budget.
func (s *Core) scopeStep(peek bool) Middleware {
	return func(next Handler) Handler {
		return func(r *Request) error {
			r.Trace |= StepScope
			if err := r.P.RoleAllows(r.Op); err != nil {
				return err
			}
			if err := r.Op.CheckScope(r.P); err != nil {
				if peek {
					r.setRate(s.Limiter.Peek(s.Now(), r.P.RateKey, r.P.OrgKey, r.Op.Write))
				}
				return err
			}
			return next(r)
		}
	}
}

// rateStep admits the call against the budget the surface counts it in.
func (s *Core) rateStep(budget callBudget) Middleware {
	return func(next Handler) Handler {
		return func(r *Request) error {
			r.Trace |= StepRate
			if budget == BudgetNone {
				return next(r)
			}
			d, err := s.AdmitCall(r.Ctx, r.P, r.Op.Write)
			if ferr := s.settleAfterSharedDecision(r.Ctx); ferr != nil {
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
func bindStep(bind func(r *Request) error) Middleware {
	return func(next Handler) Handler {
		return func(r *Request) error {
			r.Trace |= StepBind
			if err := bind(r); err != nil {
				return err
			}
			return next(r)
		}
	}
}

// bindREST fills r.in from the path, query and JSON body (or the operation's own
// binder, for uploads).
func BindRESTInput(r *Request) error {
	bind := r.Op.bindREST
	if r.Op.RESTBind != nil {
		bind = r.Op.RESTBind
	}
	in, err := bind(r.C)
	if err != nil {
		return err
	}
	r.In = in
	return nil
}

// BindArgsInput fills r.in from one JSON object of named arguments (r.args): the MCP
// and A2A form. A call without arguments is a call with {}.
func BindArgsInput(r *Request) error {
	args := r.Args
	if len(args) == 0 || IsJSONNull(args) {
		args = nil
	}
	in := r.Op.NewInput()
	if err := r.Op.Plan.BindArgs(in, args); err != nil {
		return err
	}
	r.In = in
	return nil
}

// BindBuiltInput checks an input the surface built itself (r.in, from a form) by the
// operation's declarative rules and its own validation, as binding checks any other.
func BindBuiltInput(r *Request) error {
	return r.Op.Plan.Finish(r.In, nil)
}

// RunOperation is the end of every research chain: the input's own scope (setting
// mode to live needs studies:golive), a held idempotency verdict, then the operation
// on the request's context.
func (s *Core) RunOperation(r *Request) error {
	r.Trace |= stepRequiredScope
	if err := r.P.Require(r.Op.RequiredScope(r.In)); err != nil {
		return err
	}
	if r.held != nil { // a replay or a refusal of the key, answered now (idemWire.late)
		return r.held.apply(r)
	}
	r.Trace |= StepOperation
	if s.OnResearch != nil {
		s.OnResearch(ResearchPass{Surface: r.SF.Name, Op: r.Op.Name, Passed: r.Trace})
	}
	out, err := r.Op.Call(r.Ctx, r.P, r.In)
	if err != nil {
		return err
	}
	r.Out, r.Status = out, r.Op.Status
	return nil
}

// setRate keeps the last admission decision for the renderer (REST headers, MCP's
// and A2A's response headers).
func (r *Request) setRate(d ratelimit.Decision) {
	r.Rate, r.Rated = d, true
}
