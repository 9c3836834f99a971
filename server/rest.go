package server

import (
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// resourceAPI is the REST surface's protected-resource path suffix.
const resourceAPI = "/v1/api"

// routeREST binds every operation to its REST route. Operations whose path ends in a
// literal action (":refine", ":simulate") share one route per template, dispatched on
// the suffix, because the router matches whole segments.
func (s *Server) routeREST(r *router.Router) {
	r.GET("/v1/api/exports/{job_id}/artifact", s.handleSignedDownload)
	r.HEAD("/v1/api/exports/{job_id}/artifact", s.handleSignedDownload)
	type group struct {
		param   string
		actions map[string]*Operation
	}
	groups := map[string]*group{}
	var order []string
	for _, o := range s.ops {
		tmpl, action := o.restPathAction()
		if action == "" {
			h := s.restHandler(o)
			r.Handle(o.Method, tmpl, h)
			if o.Method == "GET" { // HEAD is a read like GET; fasthttp sends no body for it
				r.Handle("HEAD", tmpl, h)
			}
			continue
		}
		key := o.Method + " " + tmpl
		g := groups[key]
		if g == nil {
			param := tmpl[strings.LastIndex(tmpl, "{")+1 : len(tmpl)-1]
			g = &group{param: param, actions: map[string]*Operation{}}
			groups[key] = g
			order = append(order, key)
		}
		g.actions[action] = o
	}
	for _, key := range order {
		g := groups[key]
		handlers := map[string]fasthttp.RequestHandler{}
		for action, o := range g.actions {
			handlers[action] = s.restHandler(o)
		}
		method, tmpl, _ := strings.Cut(key, " ")
		r.Handle(method, tmpl, func(c *fasthttp.RequestCtx) {
			v, _ := c.UserValue(g.param).(string)
			if i := strings.LastIndexByte(v, ':'); i >= 0 {
				if h := handlers[v[i:]]; h != nil {
					c.SetUserValue(g.param, v[:i])
					h(c)
					return
				}
			}
			s.handleNotFound(c)
		})
	}
}

// restHandler is one operation's REST handler: authenticate → scope → decode and
// validate → operation → encode. Each step is a small function; this is their order.
func (s *Server) restHandler(o *Operation) fasthttp.RequestHandler {
	return func(c *fasthttp.RequestCtx) {
		info := infoOf(c)
		info.route = o.Path
		p, err := s.authenticateLimited(c, resourceAPI)
		if err != nil {
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		info.org = p.Partition.Org
		if err := o.checkScope(p); err != nil {
			s.setRateHeaders(c, s.limiter.peek(s.now(), p.RateKey, p.OrgKey, o.Write))
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		if err := s.admit(c, p, o.Write); err != nil {
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		ctx := s.ctx
		if o.Idempotent {
			var done bool
			var release func()
			ctx, release, done = s.claimIdempotency(c, p)
			if done {
				return
			}
			defer release()
		}
		bind := o.bindREST
		if o.restBind != nil {
			bind = o.restBind
		}
		in, err := bind(c)
		if err != nil {
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		if err := p.require(o.requiredScope(in)); err != nil {
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		out, err := o.call(ctx, p, in)
		if err != nil {
			s.writeRESTError(c, err, resourceAPI)
			return
		}
		if o.restRespond != nil && o.restRespond(c, out) {
			return
		}
		s.writeREST(c, o.Status, out)
	}
}

// writeREST encodes an operation's output: lists as a bare JSON array with the next
// cursor in X-Next-Cursor, everything else as its JSON object.
func (s *Server) writeREST(c *fasthttp.RequestCtx, status int, out any) {
	body := out
	if l, ok := out.(listResult); ok {
		body = l.restItems()
		if next := l.nextCursor(); next != "" {
			c.Response.Header.Set("X-Next-Cursor", next)
		}
	}
	raw, err := encodeOutput(body)
	if err != nil {
		s.writeRESTError(c, err, resourceAPI)
		return
	}
	c.SetStatusCode(status)
	c.SetContentType("application/json")
	c.SetBody(raw)
}
