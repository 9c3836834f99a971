package server

import (
	"context"
	"github.com/valyala/fasthttp"
)

// admitCall is the one admission decision every surface makes (rateStep: REST requests, MCP
// tool calls): a 429 rate_limited error when over a limit.
func (s *Server) admitCall(p *Principal, write bool) (rateDecision, error) {
	return s.admitCallIn(context.Background(), p, write)
}

// admitCallIn is admitCall for a request running under ctx (see rateLimiter.admitIn).
func (s *Server) admitCallIn(ctx context.Context, p *Principal, write bool) (rateDecision, error) {
	d := s.limiter.admitIn(ctx, s.now(), p.RateKey, p.OrgKey, write)
	if !d.OK {
		return d, &apiError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
			Detail: "Rate limit exceeded; retry after the number of seconds in Retry-After."}
	}
	return d, nil
}

func (s *Server) setRateHeaders(c *fasthttp.RequestCtx, d rateDecision) {
	var buf [160]byte
	if v := d.appendPolicy(buf[:0]); len(v) > 0 {
		c.Response.Header.SetBytesV("RateLimit-Policy", v)
	}
	if v := d.appendRateLimit(buf[:0]); len(v) > 0 {
		c.Response.Header.SetBytesV("RateLimit", v)
	}
}
