package pipeline

import (
	"context"

	"github.com/valyala/fasthttp"

	"interviewd/server/ratelimit"
)

// AdmitCall is the one admission decision of a credential's call, whatever the surface:
// a REST request, an MCP tool call, an A2A message (the research pipeline's rate step,
// and the A2A methods that run no skill). It records the call against the credential's
// and its organisation's budgets, or returns a 429 rate_limited error when over either;
// on a shared store the request's credential check (kv's fence) rides on the decision
// under ctx (ratelimit.Limiter.AdmitIn).
func (s *Core) AdmitCall(ctx context.Context, p *Principal, write bool) (ratelimit.Decision, error) {
	d := s.Limiter.AdmitIn(ctx, s.Now(), p.RateKey, p.OrgKey, write)
	if !d.OK {
		return d, &APIError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
			Detail: "Rate limit exceeded; retry after the number of seconds in Retry-After."}
	}
	return d, nil
}

// SetRateHeaders writes an admission decision as the RateLimit-Policy and RateLimit
// headers (IETF draft), on REST answers and on the MCP and A2A endpoints' responses.
func (s *Core) SetRateHeaders(c *fasthttp.RequestCtx, d ratelimit.Decision) {
	var buf [160]byte
	if v := d.AppendPolicy(buf[:0]); len(v) > 0 {
		c.Response.Header.SetBytesV("RateLimit-Policy", v)
	}
	if v := d.AppendRateLimit(buf[:0]); len(v) > 0 {
		c.Response.Header.SetBytesV("RateLimit", v)
	}
}

// RateLimits configures admission (ratelimit.Limits); Config.RateLimits takes one.
type RateLimits = ratelimit.Limits

// DefaultRateLimits returns the limits of the API contract (ratelimit.Defaults).
func DefaultRateLimits() RateLimits { return ratelimit.Defaults() }

// ParseRateLimits parses the --rate-limits setting (ratelimit.Parse).
func ParseRateLimits(s string) (RateLimits, error) { return ratelimit.Parse(s) }
