package pipeline

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// reqInfo travels with one request through the pipeline: what the access log needs.
// It is pooled and reached from the RequestCtx; nothing keeps it after the request.
type reqInfo struct {
	ID    []byte
	route string
	Org   string // the organisation's id as the log writes it, once authenticated
	Err   string
	Code  string // the error code of a refused request (4xx/5xx), logged with it
	Quiet bool   // health probes: logged at debug only
	// Ctx is the context operations of this request run under (see chain.go).
	Ctx context.Context
	req Request // the surface request (chain.go), pooled with the info
}

type infoKey struct{}

var infoPool = sync.Pool{New: func() any { return &reqInfo{ID: make([]byte, 0, 40)} }}

// InfoOf returns the request's info. Handlers reached outside the pipeline (unit tests
// calling a handler directly) get a throwaway one.
func InfoOf(c *fasthttp.RequestCtx) *reqInfo {
	if info, ok := c.UserValue(infoKey{}).(*reqInfo); ok {
		return info
	}
	info := &reqInfo{}
	c.SetUserValue(infoKey{}, info)
	return info
}

// Pipeline is what every request takes, matched by a route or not: request id →
// recover → access log → route. From there each route runs its surface's chain
// (chain.go): recover → authenticate → the surface's steps (for the research table,
// the research pipeline of pipeline_research.go) → handler → the surface's renderer.
func (s *Core) Pipeline(route fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(c *fasthttp.RequestCtx) {
		start := time.Now()
		info := infoPool.Get().(*reqInfo)
		info.ID = strconv.AppendUint(append(info.ID[:0], s.ReqPrefix...), s.reqSeq.Add(1), 36)
		info.route, info.Org, info.Err, info.Code, info.Quiet = "", "", "", "", false
		info.Ctx = s.Ctx
		c.SetUserValue(infoKey{}, info)
		c.Response.Header.SetBytesV("X-Request-Id", info.ID)
		s.secureTransport(c)
		s.recovering(c, route)
		s.account(c, info, start)
		c.RemoveUserValue(infoKey{})
		info.req = Request{}
		info.Ctx = nil
		infoPool.Put(info)
	}
}

// account records a finished request in the metrics and the access log. A panic here
// must not take the process down with it (fasthttp recovers nothing): it is logged and
// the answer already written stands.
func (s *Core) account(c *fasthttp.RequestCtx, info *reqInfo, start time.Time) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error().Bytes("request_id", info.ID).Interface("panic", r).Msg("request accounting panicked")
		}
	}()
	s.Metrics.Observe(c, info.route, time.Since(start).Seconds())
	if s.AccessLog {
		s.logRequest(c, info, time.Since(start))
	}
}

// recovering runs next and turns a panic into a 500 that reveals nothing internal. A
// surface's own recoverStep renders panics in its shape first; this one catches what
// happens outside any surface (the router, unmatched routes, a renderer).
func (s *Core) recovering(c *fasthttp.RequestCtx, next fasthttp.RequestHandler) {
	defer func() {
		if r := recover(); r != nil {
			info := InfoOf(c)
			s.Log.Error().Bytes("request_id", info.ID).Interface("panic", r).Msg("handler panicked")
			c.Response.ResetBody()
			s.WriteRESTError(c, &APIError{Status: 500, Code: "internal_error", Detail: ErrInternal}, "/v1/api")
		}
	}()
	next(c)
}

// logRequest writes the access log line: refusals (4xx) at info with their code,
// server failures at error, health probes at debug so they do not drown the log.
func (s *Core) logRequest(c *fasthttp.RequestCtx, info *reqInfo, d time.Duration) {
	status := c.Response.StatusCode()
	ev := s.Access.Info()
	switch {
	case status >= 500:
		ev = s.Log.Error() // a failure is written at once, not batched
	case info.Quiet:
		ev = s.Access.Debug()
	}
	if ev == nil {
		return
	}
	route := info.route
	if route == "" {
		route = "unmatched"
	}
	ev = ev.Bytes("method", c.Method()).Str("route", route).Int("status", status).
		Float64("duration_ms", float64(d.Microseconds())/1000).Bytes("request_id", info.ID).
		Str("client_ip", s.clientIPText(c)).Str("scheme", s.ClientScheme(c))
	if info.Org != "" {
		ev = ev.Str("org_id", info.Org)
	}
	if info.Code != "" {
		ev = ev.Str("code", info.Code)
	}
	if info.Err != "" {
		ev = ev.Str("error", info.Err)
	}
	ev.Msg("request")
}

func (s *Core) HandleNotFound(c *fasthttp.RequestCtx) {
	if isAppPath(c.Path()) {
		s.AppNotFound(c) // the web app answers in HTML
		return
	}
	s.WriteRESTError(c, &APIError{Status: 404, Code: "not_found", Detail: "No route matches " + string(c.Method()) + " " + string(c.Path()) + "."}, "/v1/api")
}

func (s *Core) HandleMethodNotAllowed(c *fasthttp.RequestCtx) {
	fixAllow(c)
	if isAppPath(c.Path()) {
		s.AppNotAllowed(c)
		return
	}
	s.WriteRESTError(c, &APIError{Status: 405, Code: "method_not_allowed", Detail: "Method " + string(c.Method()) + " is not allowed on " + string(c.Path()) + "."}, "/v1/api")
}
