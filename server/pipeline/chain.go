package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/fasthttp/router"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/ratelimit"
)

// A surface is one way into interviewd (the REST research API, MCP, the participant
// API, the web app, OAuth, ...): an authenticator, the steps every request takes and a
// renderer, composed once when its routes are registered. Request id, recovery of the
// whole process and the access log are the router-wide pipeline (pipeline.go), because
// they must also cover requests no route matches; everything from authentication on is
// the surface's:
//
//	recover → pre → authenticate → steps → group and route steps → handler → render
//
// For the research table the steps and the handler are the research pipeline
// (pipeline_research.go: scope → rate limit → idempotency → bind → required scope →
// operation), the same on every surface that serves it.
//
// Handlers return an error instead of writing one; the surface's renderer writes the
// handler's output or its error, once, in the surface's wire format.

// Request is one request on its way through a surface. It is pooled with the request's
// reqInfo: nothing may keep it, or anything it holds from fasthttp, after the handler
// returns.
type Request struct {
	C    *fasthttp.RequestCtx
	Info *reqInfo
	// Ctx is the request's context: operations run under it. It ends when the server
	// stops; steps may derive from it (idempotency adds its claim). It does not end when
	// the client goes away: fasthttp does not read the connection while a handler runs,
	// so it cannot tell (valyala/fasthttp#468, #965).
	Ctx context.Context
	SF  *Surface
	// Route is the template the route was registered with, as the router matched it
	// ("/v1/api/studies/{study_id}"); it is what logs and metrics show.
	Route string
	// P is the research principal, set by an authenticator that builds one (API key,
	// OAuth token, or the app's session); nil on public surfaces.
	P *Principal
	// Op is the research operation a route of the research table serves.
	Op *Operation
	// in and out are the bound input and the handler's output; status is the success
	// status for out (0 means 200).
	In, Out any
	Status  int
	// Data is the surface's own state: the app keeps its session and page here.
	Data any
	// Written says the response is already complete (an inline download, a response
	// a bridged handler wrote): the renderer is not called for a nil error.
	Written bool
	// Args is the raw input of surfaces that bind from one JSON document (an MCP tool
	// call's arguments).
	Args []byte
	// Rate is the last rate-limit decision (rated says there is one), for the renderer.
	Rate  ratelimit.Decision
	Rated bool
	// Trace is the research pipeline's steps the request has entered
	// (pipeline_research.go).
	Trace ResearchStep
	// Claim is the idempotency key the request holds until its answer is rendered;
	// replayTask, for a replayed A2A message, is the task the first one made.
	Claim      *idemClaim
	ReplayTask *kv.ID
	// held is an idempotency verdict that waits for the input's own scope (idemWire.late).
	held *idemVerdict
}

// Handler is a route's work: it sets r.out (and r.status) or returns an error.
type Handler func(r *Request) error

// Middleware is one step of a surface: it runs before (and may run after) next, or
// refuses the request by returning an error without calling next.
type Middleware func(next Handler) Handler

// authenticator establishes who is calling (r.p, r.data) or returns the error the
// surface's renderer turns into its refusal (401, a sign-in redirect, ...).
type authenticator func(r *Request) error

// renderer writes a request's outcome: r.out with r.status when err is nil, else err in
// the surface's wire shape (REST JSON, an MCP tool result, an HTML page, an OAuth error).
// It is called exactly once per request, unless a nil-error request is r.written.
type renderer func(r *Request, err error)

// Surface binds the steps of one way in. The zero authenticate means public (no
// credential); steps run in order after it.
type Surface struct {
	Name string // for logs and panics: "rest", "participant", "app", ...
	// Pre are steps before authentication (the MCP endpoint's Origin and method checks).
	Pre          []Middleware
	Authenticate authenticator
	Steps        []Middleware
	Render       renderer
	// Log receives panics; Core.Group sets it to the server's log when nil.
	Log *zerolog.Logger
}

// Chain composes the surface around h: recover → pre → authenticate → steps → extra → h.
// extra are route-specific steps (an operation's bind); they run innermost.
func (sf *Surface) Chain(h Handler, extra ...Middleware) Handler {
	for i := len(extra) - 1; i >= 0; i-- {
		h = extra[i](h)
	}
	for i := len(sf.Steps) - 1; i >= 0; i-- {
		h = sf.Steps[i](h)
	}
	if sf.Authenticate != nil {
		auth, next := sf.Authenticate, h
		h = func(r *Request) error {
			if err := auth(r); err != nil {
				return err
			}
			return next(r)
		}
	}
	for i := len(sf.Pre) - 1; i >= 0; i-- {
		h = sf.Pre[i](h)
	}
	return sf.recoverStep(h)
}

// recoverStep turns a panic in the surface's steps or handler into an internal error
// the surface renders in its own shape; the cause is logged, never sent.
func (sf *Surface) recoverStep(next Handler) Handler {
	return func(r *Request) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if sf.Log != nil {
					ev := sf.Log.Error().Str("surface", sf.Name).Interface("panic", v)
					if r.Info != nil {
						ev = ev.Bytes("request_id", r.Info.ID)
					}
					ev.Msg("handler panicked")
				}
				if r.C != nil {
					r.C.Response.ResetBody()
				}
				r.Written = false
				err = &APIError{Status: 500, Code: "internal_error", Detail: ErrInternal,
					cause: fmt.Errorf("%s handler panicked: %v", r.SF.Name, v)}
			}
		}()
		return next(r)
	}
}

// Serve turns a composed chain into the router's handler for one route template; o is
// the research operation the route serves (nil for others).
func (sf *Surface) Serve(tmpl string, o *Operation, h Handler) fasthttp.RequestHandler {
	return func(c *fasthttp.RequestCtx) {
		r := requestOf(c)
		r.SF, r.Route, r.Op = sf, tmpl, o
		r.Info.route = tmpl
		defer r.finish()
		err := h(r)
		if err == nil && r.Written {
			return
		}
		sf.Render(r, err)
	}
}

// routeGroup registers a surface's routes under a path prefix. The template a route is
// registered with is the one its requests are logged and counted under, so it is never
// written twice.
type routeGroup struct {
	r       *router.Router
	sf      *Surface
	prefix  string
	mw      []Middleware // group-wide steps, after the surface's
	actions map[string]*actionRoute
	order   []string
}

// actionRoute is one template whose last segment ends in literal actions
// ("/v1/api/studies/{study_id}" with ":refine" and ":simulate").
type actionRoute struct {
	method, tmpl, param string
	handlers            map[string]fasthttp.RequestHandler
}

// Group returns a route group of sf under prefix ("" for none). mw are steps only this
// group's routes take, after the surface's own.
func (s *Core) Group(r *router.Router, prefix string, sf *Surface, mw ...Middleware) *routeGroup {
	if sf.Log == nil {
		sf.Log = &s.Log
	}
	return &routeGroup{r: r, sf: sf, prefix: prefix, mw: mw}
}

// build composes the group's chain for one route.
func (g *routeGroup) build(tmpl string, o *Operation, h Handler, mw []Middleware) fasthttp.RequestHandler {
	steps := append(append(make([]Middleware, 0, len(g.mw)+len(mw)), g.mw...), mw...)
	return g.sf.Serve(tmpl, o, g.sf.Chain(h, steps...))
}

// Handle registers h for method on prefix+path; mw run after the group's steps.
// It returns the full template.
func (g *routeGroup) Handle(method, path string, h Handler, mw ...Middleware) string {
	return g.HandleOp(method, path, nil, h, mw...)
}

// HandleOp is handle for a route serving research operation o (r.op).
func (g *routeGroup) HandleOp(method, path string, o *Operation, h Handler, mw ...Middleware) string {
	tmpl := g.prefix + path
	g.r.Handle(method, tmpl, g.build(tmpl, o, h, mw))
	return tmpl
}

// GET registers a read; HEAD is answered by the same handler (fasthttp sends no body).
func (g *routeGroup) GET(path string, h Handler, mw ...Middleware) { g.GETOp(path, nil, h, mw...) }

// GETOp is GET for a route serving research operation o.
func (g *routeGroup) GETOp(path string, o *Operation, h Handler, mw ...Middleware) {
	tmpl := g.prefix + path
	fh := g.build(tmpl, o, h, mw)
	g.r.Handle("GET", tmpl, fh)
	g.r.Handle("HEAD", tmpl, fh)
}

// POST registers a form post or API call.
func (g *routeGroup) POST(path string, h Handler, mw ...Middleware) { g.Handle("POST", path, h, mw...) }

// Action registers h for method on prefix+path followed by a literal action
// (":refine"); the route's template, as logged, is the whole of it. The router matches
// whole segments, so every action of one template shares a dispatcher, registered by
// flushActions.
func (g *routeGroup) Action(method, path, action string, o *Operation, h Handler, mw ...Middleware) {
	tmpl := g.prefix + path
	key := method + " " + tmpl
	a := g.actions[key]
	if a == nil {
		if g.actions == nil {
			g.actions = map[string]*actionRoute{}
		}
		a = &actionRoute{method: method, tmpl: tmpl, param: tmpl[strings.LastIndex(tmpl, "{")+1 : len(tmpl)-1],
			handlers: map[string]fasthttp.RequestHandler{}}
		g.actions[key] = a
		g.order = append(g.order, key)
	}
	a.handlers[action] = g.build(tmpl+action, o, h, mw)
}

// FlushActions registers the dispatchers of the group's action routes; a value with no
// known action goes to notFound.
func (g *routeGroup) FlushActions(notFound fasthttp.RequestHandler) {
	for _, key := range g.order {
		a := g.actions[key]
		g.r.Handle(a.method, a.tmpl, func(c *fasthttp.RequestCtx) {
			v, _ := c.UserValue(a.param).(string)
			if i := strings.LastIndexByte(v, ':'); i >= 0 {
				if h := a.handlers[v[i:]]; h != nil {
					c.SetUserValue(a.param, v[:i])
					h(c)
					return
				}
			}
			notFound(c)
		})
	}
	g.actions, g.order = nil, nil
}

// requestOf returns the request of c, reset for a new route. Outside the pipeline
// (a handler called directly) it is a throwaway one.
func requestOf(c *fasthttp.RequestCtx) *Request {
	info := InfoOf(c)
	r := &info.req
	*r = Request{C: c, Info: info, Ctx: info.Ctx}
	if r.Ctx == nil {
		r.Ctx = context.Background()
	}
	return r
}

// PathParam returns the router's value for a path parameter ("" when absent).
func (r *Request) PathParam(name string) string {
	v, _ := r.C.UserValue(name).(string)
	return v
}

// HandlePlain registers a handler that belongs to no surface (health probes, documents,
// static files), recording the template it is registered with for logs and metrics.
func HandlePlain(r *router.Router, method, tmpl string, h fasthttp.RequestHandler) {
	r.Handle(method, tmpl, func(c *fasthttp.RequestCtx) {
		InfoOf(c).route = tmpl
		h(c)
	})
}
