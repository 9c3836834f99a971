package server

import (
	"strings"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// authenticate resolves the request's bearer credential into a Principal, or a 401.
func (s *Server) authenticate(c *fasthttp.RequestCtx, resource string) (*Principal, error) {
	h := c.Request.Header.Peek(fasthttp.HeaderAuthorization)
	if len(h) == 0 {
		return nil, &apiError{Status: 401, Code: "missing_token", Detail: "Send a credential as Authorization: Bearer <token>."}
	}
	tok, ok := bearerToken(h)
	if !ok {
		return nil, &apiError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The Authorization header must be Bearer <token>."}
	}
	return s.resolveToken(tok, resource)
}

// resolveToken is the one place a presented token becomes a Principal, whatever the
// surface: API keys here; OAuth access tokens are verified here too once issued.
func (s *Server) resolveToken(tok, resource string) (*Principal, error) {
	if strings.HasPrefix(tok, "jsk_") {
		cred, err := s.db.Authenticate(s.ctx, tok)
		if kv.ErrorCode(err) == kv.EUNAUTHORIZED {
			return nil, &apiError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The API key is invalid, expired or revoked."}
		}
		if err != nil {
			return nil, err
		}
		return principalFromKey(cred), nil
	}
	return nil, &apiError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The access token is invalid, expired or revoked."}
}
