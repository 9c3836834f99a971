// Package a2a is the A2A agent at /v1/a2a: the research table as skills over A2A's
// JSON-RPC binding (the official SDK behind a net/http bridge, and a fast path for a
// plain SendMessage), tasks that follow jobs, event streams, and the agent card. Each
// skill runs through the research pipeline. It depends on the shared pipeline alone.
package a2a

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// resourceA2A is the A2A surface's path.
const Resource = "/v1/a2a"

// a2aKeepAlive is how often an idle event stream carries a comment, so proxies keep it
// open and a client that went away is noticed.
const a2aKeepAlive = 15 * time.Second

// a2aEndpoint is the A2A 1.0 surface: JSON-RPC over HTTP with server-sent events for
// the streaming methods. The SDK's JSON-RPC binding speaks the protocol; in front of it,
// in fasthttp, run what belongs to interviewd: the method check, the API key (Bearer or
// X-API-Key, agent:run) and the body limit. Skills are the research operations, run by
// a2aHandler through the research pipeline, as REST routes and MCP tools are.
type Endpoint struct {
	s       *Agent
	handler *a2aHandler
	rpc     http.Handler
	// logs is what the SDK logs through (its lines join the server's log).
	logs *slog.Logger
	// fast turns the SendMessage fast path on (fastpath.go); off, every request
	// goes to the SDK's binding.
	fast bool
	// Serve is the endpoint's whole chain (surface), as the router calls it.
	Serve fasthttp.RequestHandler
}

func (s *Agent) NewEndpoint(fast bool) *Endpoint {
	h := &a2aHandler{s: s}
	e := &Endpoint{s: s, handler: h, fast: fast, logs: slog.New(&zerologHandler{log: &s.Log})}
	e.rpc = a2asrv.NewJSONRPCHandler(h, a2asrv.WithTransportKeepAlive(a2aKeepAlive),
		// A panic while a stream is written would otherwise be re-raised on a goroutine
		// nothing recovers: it is logged and answered as an internal error.
		a2asrv.WithTransportPanicHandler(func(v any) error {
			s.Log.Error().Str("surface", "a2a").Interface("panic", v).Msg("handler panicked")
			return a2a.NewError(a2a.ErrInternalError, pipeline.ErrInternal)
		}))
	sf := &pipeline.Surface{
		Name:         "a2a",
		Authenticate: s.a2aAuthenticate,
		Steps:        []pipeline.Middleware{pipeline.ReadRPCBody},
		Render:       s.renderA2A,
		Log:          &s.Log,
	}
	e.Serve = sf.Serve(Resource, nil, sf.Chain(e.serveRPC))
	return e
}

// routeA2A mounts the A2A endpoint and the agent card. Only POST is routed: any other
// method gets the router's JSON 405.
// streams is the context of event streams, which outlive their handler: it ends when
// a shutdown begins, so open streams end and let it finish. writeTimeout bounds each
// write of a stream.
func Route(core *pipeline.Core, r *router.Router, streams context.Context, writeTimeout time.Duration) *Agent {
	s := &Agent{Core: core, streams: streams, slots: newStreamSlots(), writeTimeout: writeTimeout}
	s.skills = core.NewResearchSurface("a2a_skill", a2aWire, renderSkill)
	r.POST(Resource, s.NewEndpoint(true).Serve)
	s.routeAgentCard(r)
	return s
}

// Agent is the A2A surface over the pipeline: the research table as skills.
type Agent struct {
	*pipeline.Core
	// skills is the research pipeline as A2A skills.
	skills *pipeline.ResearchSurface
	// streams is the context of event streams (see routeA2A); slots counts each
	// credential's open streams (streams.go).
	streams      context.Context
	slots        *streamSlots
	writeTimeout time.Duration
}

// a2aToken returns the API key of a request: Authorization: Bearer, else X-API-Key.
func a2aToken(h *fasthttp.RequestHeader) (string, error) {
	if v := h.Peek(fasthttp.HeaderAuthorization); len(v) > 0 {
		tok, ok := pipeline.BearerToken(v)
		if !ok {
			return "", &pipeline.APIError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The Authorization header must be Bearer <API key>."}
		}
		return tok, nil
	}
	if v := strings.TrimSpace(string(h.Peek("X-API-Key"))); v != "" {
		return v, nil
	}
	return "", &pipeline.APIError{Status: 401, Code: "missing_token",
		Detail: "Send an API key holding agent:run as Authorization: Bearer <key> or in an X-API-Key header."}
}

// a2aAuthenticate accepts API keys only (the agent:run scope cannot be granted to an
// OAuth connection), under the same failed-credential limit as every surface. An
// OAuth token is looked up all the same: a working one is refused for what it is
// (403), one that is unknown or ended is no credential (401, a failure counted like a
// wrong key), so a token's shape alone never earns an answer saying it is real.
func (s *Agent) a2aAuthenticate(r *pipeline.Request) error {
	tok, err := a2aToken(&r.C.Request.Header)
	if err != nil {
		return s.LimitAuthFailure(r.C, err)
	}
	if strings.HasPrefix(tok, "svca_") || strings.HasPrefix(tok, "svcr_") {
		live, err := s.DB.OAuthTokenLive(r.Ctx, tok)
		switch {
		case err != nil:
			return err
		case !live:
			return s.LimitAuthFailure(r.C, &pipeline.APIError{Status: 401, Code: "invalid_token", TokenSent: true,
				Detail: "The token is invalid, expired or revoked; the A2A surface takes an API key holding agent:run."})
		}
		return &pipeline.APIError{Status: 403, Code: "oauth_token_not_accepted",
			Detail: "OAuth tokens are not accepted by the A2A surface; use an API key holding agent:run."}
	}
	p, err := s.ResolveTokenIn(r.Ctx, tok, Resource)
	if err != nil {
		return s.LimitAuthFailure(r.C, err)
	}
	r.P = p
	r.Info.Org = p.OrgKey
	return p.Require(kv.ScopeAgentRun)
}

// renderA2A writes the refusals made before JSON-RPC is spoken (method, credential,
// body): the HTTP status an HTTP client expects, with a JSON-RPC error body an A2A
// client can read. Answers themselves are written by the SDK's binding.
func (s *Agent) renderA2A(r *pipeline.Request, err error) {
	c := r.C
	var pe *pipeline.ErrRPCParse
	if errors.As(err, &pe) {
		pipeline.WriteJSONRPCError(c, 400, -32700, pe.Msg)
		return
	}
	ae := pipeline.ToAPIError(err).LocatedREST(nil)
	h := &c.Response.Header
	switch ae.Status {
	case 401:
		v := `Bearer realm="` + s.BaseURL + Resource + `", scope="` + kv.ScopeAgentRun + `"`
		if ae.TokenSent {
			v += `, error="invalid_token"`
		}
		h.Set("WWW-Authenticate", v)
	case 403:
		if ae.Code == "insufficient_scope" {
			h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+ae.Scope+`"`)
		}
	case 429:
		h.Set("Retry-After", strconv.Itoa(max(ae.RetryAfter, 1)))
	}
	info := pipeline.InfoOf(c)
	info.Code = ae.Code
	if ae.Status >= 500 {
		info.Err = ae.Error()
	}
	body, _ := json.MarshalNoEscape(map[string]any{"jsonrpc": "2.0", "id": nil, "error": a2aErrorObject(ae)})
	c.SetStatusCode(ae.Status)
	c.SetContentType("application/json")
	c.SetBody(body)
}

// a2aErrorObject is a refusal as a JSON-RPC error object, coded as the A2A SDKs read
// them, with the REST error's code in the ErrorInfo metadata.
func a2aErrorObject(ae *pipeline.APIError) map[string]any {
	code, reason := -32603, "INTERNAL_ERROR"
	switch ae.Status {
	case 401:
		code, reason = -31401, "UNAUTHENTICATED"
	case 403:
		code, reason = -31403, "UNAUTHORIZED"
	case 405, 413:
		code, reason = -32600, "INVALID_REQUEST"
	case 429:
		code, reason = -32000, "SERVER_ERROR"
	}
	meta := map[string]string{"code": ae.Code}
	if ae.Scope != "" {
		meta["scope"] = ae.Scope
	}
	msg := ae.Detail
	if ae.Status >= 500 {
		msg = pipeline.ErrInternal
	}
	return map[string]any{"code": code, "message": msg, "data": []any{map[string]any{
		"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org", "metadata": meta,
	}}}
}

// a2aCall is what one authenticated A2A request hands to the handler.
type Call struct {
	P *pipeline.Principal
	// rate is the last admission decision, for the response headers; the SDK runs the
	// handler on its own goroutines for streams, hence the atomic.
	rate atomic.Pointer[ratelimit.Decision]
}

type CallKey struct{}

func a2aCallFrom(ctx context.Context) *Call {
	call, _ := ctx.Value(CallKey{}).(*Call)
	return call
}

// serveRPC hands one authenticated JSON-RPC request to the SDK's binding: buffered for
// the request/response methods, as a stream for SendStreamingMessage and
// SubscribeToTask.
func (e *Endpoint) serveRPC(r *pipeline.Request) error {
	c, s := r.C, e.s
	r.Written = true
	call := &Call{P: r.P}
	env := PeekRPC(c.PostBody())
	if err := env.CheckMessageText(); err != nil {
		writeRPCRefusal(c, &env, err)
		return nil
	}
	if env.streaming() {
		// The stream outlives the handler (fasthttp writes it after the handler
		// returns), so it runs under the server's stream context, which ends when a
		// shutdown begins, never under anything of this request.
		serveStreamBridge(c, e.rpc, a2alog.AttachLogger(context.WithValue(s.streams, CallKey{}, call), e.logs), s.writeTimeout)
		return nil
	}
	ctx := a2alog.AttachLogger(context.WithValue(r.Ctx, CallKey{}, call), e.logs)
	if !e.fast || !e.ServeSendFast(c, ctx, call) {
		pipeline.ServeHTTPBridge(c, e.rpc, ctx, 0)
	}
	if d := call.rate.Load(); d != nil {
		s.SetRateHeaders(c, *d)
	}
	return nil
}

// serveStreamBridge runs a net/http handler that answers with server-sent events. The
// status and headers are sent first; the handler then runs in fasthttp's body stream
// writer, and every Flush the handler makes sends what it wrote at once, so events
// reach the client as they happen. A client that goes away makes the next write
// fail, which cancels the handler's context: the stream stops, and nothing it was
// watching (a task, its job) is cancelled.
func serveStreamBridge(c *fasthttp.RequestCtx, h http.Handler, ctx context.Context, writeTimeout time.Duration) {
	req := pipeline.BridgeRequest(c, ctx)
	conn := c.Conn()
	c.SetStatusCode(fasthttp.StatusOK)
	c.SetContentType("text/event-stream")
	c.Response.Header.Set("Cache-Control", "no-cache")
	c.Response.Header.Set("X-Accel-Buffering", "no")
	c.SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		h.ServeHTTP(&streamResponse{w: w, header: http.Header{}, cancel: cancel, conn: conn, timeout: writeTimeout}, req.WithContext(ctx))
	})
}

// streamResponse is the http.ResponseWriter of a streamed answer. The status line and
// headers have been sent already, so the handler's own are ignored. fasthttp gives a
// whole response one write deadline (the server's WriteTimeout); a stream lasts as long
// as its task, so each write gets its own deadline instead: a client that stops
// reading is still dropped, one that reads is kept.
type streamResponse struct {
	w       *bufio.Writer
	header  http.Header
	cancel  context.CancelFunc
	conn    net.Conn
	timeout time.Duration
	err     error
}

func (s *streamResponse) extend() {
	if s.conn != nil && s.timeout > 0 {
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	}
}

func (s *streamResponse) Header() http.Header { return s.header }
func (s *streamResponse) WriteHeader(int)     {}

func (s *streamResponse) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.extend() // the buffer may flush
	n, err := s.w.Write(p)
	if err != nil {
		s.fail(err)
	}
	return n, err
}

// Flush sends what was written; a failure means the client is gone.
func (s *streamResponse) Flush() {
	if s.err != nil {
		return
	}
	s.extend()
	if err := s.w.Flush(); err != nil {
		s.fail(err)
	}
}

func (s *streamResponse) fail(err error) {
	s.err = err
	s.cancel()
}
