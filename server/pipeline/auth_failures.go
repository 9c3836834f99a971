package pipeline

import (
	"errors"

	"github.com/valyala/fasthttp"
)

// Failed credentials count against the client address's budget (ratelimit.Failures
// says why only failures are counted and refused).

// authenticateLimited is authenticate under the failed-credential limit.
func (s *Core) authenticateLimited(c *fasthttp.RequestCtx, resource string) (*Principal, error) {
	p, err := s.authenticate(c, resource)
	if err != nil {
		return nil, s.LimitAuthFailure(c, err)
	}
	return p, nil
}

// LimitAuthFailure counts a refused credential (a 401 for a credential that was sent)
// against the client address's budget and returns err, or a 429 once the budget is
// spent.
func (s *Core) LimitAuthFailure(c *fasthttp.RequestCtx, err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Code == "missing_token" {
		return err
	}
	if wait := s.AuthFails.Fail(s.Now(), s.ClientIP(c)); wait > 0 {
		return &APIError{Status: 429, Code: "rate_limited", RetryAfter: wait,
			Detail: "Too many failed authentication attempts from your address; wait before trying again."}
	}
	return err
}
