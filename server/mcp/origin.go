package mcp

import (
	"interviewd/server/pipeline"
	"net/url"

	"github.com/valyala/fasthttp"
)

// originPolicy decides which browser origins may call the MCP endpoint. A web page
// can make a victim's browser POST anywhere, so a present Origin must be our own
// (the base URL's) or one the operator lists for cross-origin clients (--cors-origins,
// the same list CORS answers); when the base URL is loopback (a local install), any
// loopback origin is ours too, whatever its port, since local tools pick their own.
// Requests without an Origin (every non-browser client) pass.
type originPolicy struct {
	Origin   string // canonical scheme://host[:port] of the base URL
	Loopback bool
	listed   pipeline.CORSOrigins
}

func NewOriginPolicy(baseURL string) originPolicy {
	u, err := url.Parse(baseURL)
	if err != nil {
		return originPolicy{}
	}
	origin, _ := pipeline.CanonicalOrigin(u)
	return originPolicy{Origin: origin, Loopback: pipeline.IsLoopbackHost(u.Hostname())}
}

// Allows reports whether a request with this Origin header value may proceed.
func (p originPolicy) Allows(origin []byte) bool {
	if len(origin) == 0 {
		return true
	}
	got, ok := pipeline.ParseOrigin(string(origin))
	if !ok {
		return false // "null", "file://", or something that is not an origin at all
	}
	if (p.Origin != "" && got == p.Origin) || p.listed[got] {
		return true
	}
	u, _ := url.Parse(got)
	return p.Loopback && pipeline.IsLoopbackHost(u.Hostname())
}

// cors is the MCP endpoint's first step. A preflight from a listed origin is answered
// here (it carries no credential); one from any other origin is refused. Every other
// request from a listed origin is answered with that origin allowed and the headers an
// MCP client reads exposed, refusals included: a browser client must read the 401's
// challenge to start OAuth.
func (m *Endpoint) cors(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		c := r.C
		raw := c.Request.Header.Peek("Origin")
		if len(raw) == 0 {
			return next(r)
		}
		h := &c.Response.Header
		if len(m.s.CORS) > 0 {
			h.Add("Vary", "Origin")
		}
		origin := m.s.CORS.Listed(raw)
		if pipeline.IsPreflight(c) {
			if origin == "" {
				return &pipeline.APIError{Status: 403, Code: "forbidden_origin",
					Detail: "Cross-origin requests from this Origin are not allowed; the server's operator lists the origins of browser-based MCP clients in --cors-origins."}
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			pipeline.AllowRequestedHeaders(c)
			h.Set("Access-Control-Max-Age", pipeline.CORSMaxAge)
			c.SetStatusCode(fasthttp.StatusNoContent)
			r.Written = true
			return nil
		}
		if origin != "" {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", pipeline.MCPExposedHeaders)
		}
		return next(r)
	}
}
