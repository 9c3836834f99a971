// Package mcp is the MCP server at /v1/mcp: the research table as tools over
// Streamable HTTP (both protocol eras), through the official SDK behind a net/http
// bridge and a fast path for a lone tools/call, each call through the research
// pipeline. It depends on the shared pipeline alone.
package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"

	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// mcpEndpoint is the MCP server: Streamable HTTP, stateless, JSON responses only.
//
// The official SDK speaks the protocol (both eras: initialize up to 2025-11-25, and
// server/discover with Mcp-Method headers from 2026-07-28). In front of it, in fasthttp,
// runs what the SDK cannot do behind a bridge: the Origin check, the method check and
// authentication through the same resolveToken as REST; and the fast path for the
// one request that is most of the traffic, a single tools/call (see fastpath.go).
type Endpoint struct {
	s *Side
	// sdk is built on the first request the fast path does not answer: adding every
	// tool to the SDK resolves its schemas, which was a third of a server's start-up.
	sdk     func() http.Handler
	origins originPolicy
	tools   map[string]*pipeline.Operation
	// serverInfo is the Implementation as JSON, for results of the 2026-07-28 era.
	serverInfo func() []byte
	// fast turns the tools/call fast path on; off, every request goes to the SDK.
	fast bool
	// Serve is the endpoint's whole chain (surface), as the router calls it.
	Serve fasthttp.RequestHandler
}

func (s *Side) NewEndpoint(fast bool) *Endpoint {
	m := &Endpoint{
		s: s,
		sdk: sync.OnceValue(func() http.Handler {
			sdk := s.newMCPServer()
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, &mcp.StreamableHTTPOptions{
				Stateless:           true,
				JSONResponse:        true,
				MaxRequestBodyBytes: pipeline.MCPMaxBody,
				// The bridge gives the SDK no local address, so its own Host-header check
				// never runs; the Origin check is what stops a foreign web page.
				DisableLocalhostProtection: true,
			})
		}),
		origins:    NewOriginPolicy(s.BaseURL),
		tools:      make(map[string]*pipeline.Operation, len(s.Ops)),
		serverInfo: pipeline.LazyJSON(func() any { return mcpImplementation() }),
		fast:       fast,
	}
	m.origins.listed = s.CORS
	for _, o := range s.Ops {
		m.tools[o.Name] = o
	}
	sf := m.surface()
	sf.Log = &s.Log
	m.Serve = sf.Serve(pipeline.ResourceMCP, nil, sf.Chain(m.serveRPC))
	return m
}

// Side is the MCP surface over the pipeline: the research table as tools.
type Side struct {
	*pipeline.Core
	// tools is the research pipeline as MCP tool calls, shared by the endpoint's fast
	// path and the SDK's tool handlers.
	tools *pipeline.ResearchSurface
}

// routeMCP mounts the MCP endpoint at /v1/mcp and /v1/mcp/, and the protected-resource
// metadata its 401s point at.
func Route(core *pipeline.Core, r *router.Router) *Side {
	s := &Side{Core: core}
	s.tools = core.NewResearchSurface("mcp_tool", Wire, renderTool)
	m := s.NewEndpoint(true)
	r.ANY(pipeline.ResourceMCP, m.Serve)
	// "/v1/mcp/" is the same endpoint. The router keeps it only as a trailing-slash
	// twin of "/v1/mcp" (it takes no second handler and, with redirects off, sends it
	// to NotFound), so it is served on its way to NotFound: before any not-found answer.
	notFound := r.NotFound
	r.NotFound = func(c *fasthttp.RequestCtx) {
		if string(c.Path()) == pipeline.ResourceMCP+"/" {
			m.Serve(c)
			return
		}
		notFound(c)
	}
	pipeline.RouteResourceMetadata(s.Core, r)
	return s
}

// surface is the MCP endpoint as a route: CORS → Origin → bearer credential → method →
// the JSON-RPC body. The credential comes before the method so that any first probe
// without one, a GET included, is answered with the 401 whose challenge starts OAuth
// discovery. Errors before JSON-RPC is spoken are REST-shaped (a client that is refused
// at the door reads them like any HTTP API), a body that is not JSON at all is a
// JSON-RPC parse error. Each tool call runs the research pipeline (Side.tools).
func (m *Endpoint) surface() *pipeline.Surface {
	return &pipeline.Surface{
		Name:         "mcp",
		Pre:          []pipeline.Middleware{m.cors, m.checkOrigin},
		Authenticate: m.s.BearerAuthenticator(pipeline.ResourceMCP),
		Steps:        []pipeline.Middleware{checkMCPMethod, pipeline.ReadRPCBody},
		Render:       m.s.renderMCP,
	}
}

func (m *Endpoint) checkOrigin(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		if !m.origins.Allows(r.C.Request.Header.Peek("Origin")) {
			return &pipeline.APIError{Status: 403, Code: "forbidden_origin",
				Detail: "Requests from this Origin are not accepted; MCP clients in a browser must be served from " + m.origins.Origin + " or from an origin the operator lists in --cors-origins."}
		}
		return next(r)
	}
}

func checkMCPMethod(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		if !r.C.IsPost() {
			// Stateless and JSON-only: there is no stream to GET and no session to DELETE.
			r.C.Response.Header.Set("Allow", "POST")
			return &pipeline.APIError{Status: 405, Code: "method_not_allowed",
				Detail: "The MCP endpoint accepts only POST (Streamable HTTP, stateless, JSON responses)."}
		}
		return next(r)
	}
}

// renderMCP writes the refusals made before JSON-RPC is spoken; answers themselves are
// written by the fast path or the SDK.
func (s *Side) renderMCP(r *pipeline.Request, err error) {
	var pe *pipeline.ErrRPCParse
	if errors.As(err, &pe) {
		pipeline.WriteJSONRPCError(r.C, 400, -32700, pe.Msg)
		return
	}
	s.WriteRESTError(r.C, err, pipeline.ResourceMCP)
	addDefaultScope(r.C)
}

// serveRPC answers one authenticated JSON-RPC request: the fast path or the SDK.
func (m *Endpoint) serveRPC(r *pipeline.Request) error {
	c, s := r.C, m.s
	r.Written = true
	acceptJSON(&c.Request.Header)
	call := &mcpCall{principal: r.P}
	ctx := context.WithValue(r.Ctx, mcpCallKey{}, call)
	defer func() {
		if d := call.rate.Load(); d != nil {
			s.SetRateHeaders(c, *d)
		}
	}()
	if m.fast && m.ServeToolCall(c, ctx, r.P) {
		return nil
	}
	refused, isBatch := refuseLargeBatch(c, c.PostBody())
	if refused {
		return nil
	}
	if !utf8.Valid(c.PostBody()) {
		// The SDK would decode it replacing the bad bytes; a tools/call the fast path
		// took has had its arguments refused by the same rule as REST (checkText).
		pipeline.WriteJSONRPCError(c, 400, -32700, "The request body is not valid UTF-8.")
		return nil
	}
	limit := 0
	if isBatch {
		limit = mcpMaxBatchAnswer
	}
	if !pipeline.ServeHTTPBridge(c, m.sdk(), ctx, limit) {
		pipeline.WriteJSONRPCError(c, 400, -32600, fmt.Sprintf(
			"Invalid Request: the answers to this batch together exceed %d MiB; send its requests in smaller batches or one at a time.", mcpMaxBatchAnswer>>20))
		return nil
	}
	if e := call.internalErr.Load(); e != nil {
		r.Info.Err = *e
	}
	transportErrorAsJSONRPC(c)
	return nil
}

// acceptJSON lets a client that accepts JSON (or names nothing) in: the transport wants
// both JSON and an event stream named in Accept, but this endpoint only ever answers
// JSON, so a client that cannot take a stream loses nothing.
func acceptJSON(h *fasthttp.RequestHeader) {
	jsonOK, streamOK := accepts(string(h.Peek("Accept")))
	if !streamOK && (jsonOK || len(h.Peek("Accept")) == 0) {
		h.Set("Accept", "application/json, text/event-stream")
	}
}

// accepts reports whether an Accept value admits JSON and an event stream, by the
// transport's rules (wildcards count).
func accepts(accept string) (jsonOK, streamOK bool) {
	for token := range strings.SplitSeq(accept, ",") {
		base, _, _ := strings.Cut(token, ";")
		switch strings.ToLower(strings.TrimSpace(base)) {
		case "application/json", "application/*":
			jsonOK = true
		case "text/event-stream", "text/*":
			streamOK = true
		case "*/*":
			jsonOK, streamOK = true, true
		}
	}
	return jsonOK, streamOK
}

// transportErrorAsJSONRPC turns the SDK's plain-text refusals of a request it could
// not take as JSON-RPC at all (bad JSON, wrong Content-Type, a batch) into JSON-RPC
// error objects, which is what an MCP client knows how to read.
func transportErrorAsJSONRPC(c *fasthttp.RequestCtx) {
	if c.Response.StatusCode() < 400 || !bytes.HasPrefix(c.Response.Header.ContentType(), []byte("text/plain")) {
		return
	}
	code := -32600 // invalid request
	if !json.Valid(c.PostBody()) {
		code = -32700 // parse error
	}
	msg := strings.TrimSpace(string(c.Response.Body()))
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…" // the SDK may quote the whole body back
	}
	c.Response.Header.Del("X-Content-Type-Options")
	pipeline.WriteJSONRPCError(c, c.Response.StatusCode(), code, msg)
}

// mcpCall is what one authenticated MCP request hands to its tool handlers.
type mcpCall struct {
	principal *pipeline.Principal
	// internalErr carries an internal failure's cause back to the access log line;
	// tool handlers run on the SDK's goroutines, hence the atomic.
	internalErr atomic.Pointer[string]
	// rate is the last tool call's rate-limit decision, for the response headers.
	rate atomic.Pointer[ratelimit.Decision]
}

type mcpCallKey struct{}

// mcpCallFrom returns the request's call, or nil outside an authenticated request.
func mcpCallFrom(ctx context.Context) *mcpCall {
	call, _ := ctx.Value(mcpCallKey{}).(*mcpCall)
	return call
}
