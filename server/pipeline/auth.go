package pipeline

import (
	"context"
	"strings"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// authenticate resolves the request's bearer credential into a Principal, or a 401.
func (s *Core) authenticate(c *fasthttp.RequestCtx, resource string) (*Principal, error) {
	h := c.Request.Header.Peek(fasthttp.HeaderAuthorization)
	if len(h) == 0 {
		return nil, &APIError{Status: 401, Code: "missing_token", Detail: "Send a credential as Authorization: Bearer <token>."}
	}
	tok, ok := BearerToken(h)
	if !ok {
		return nil, &APIError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The Authorization header must be Bearer <token>."}
	}
	ctx := InfoOf(c).Ctx
	if ctx == nil { // a handler called outside the pipeline
		ctx = s.Ctx
	}
	return s.ResolveTokenIn(ctx, tok, resource)
}

// ResolveToken is resolveTokenIn under the server's lifetime, for callers outside a
// request.
func (s *Core) ResolveToken(tok, resource string) (*Principal, error) {
	return s.ResolveTokenIn(s.Ctx, tok, resource)
}

// ResolveTokenIn is the one place a presented token becomes a Principal, whatever the
// surface: API keys, and OAuth access tokens, which work only on the resource they
// were issued for (resource: "/v1/api" or "/v1/mcp"; any other surface refuses them).
func (s *Core) ResolveTokenIn(ctx context.Context, tok, resource string) (*Principal, error) {
	if strings.HasPrefix(tok, "jsk_") {
		cred, err := s.DB.AuthenticateShared(ctx, tok)
		if kv.ErrorCode(err) == kv.EUNAUTHORIZED {
			return nil, &APIError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The API key is invalid, expired or revoked."}
		}
		if err != nil {
			return nil, err
		}
		// Made once per cached credential, not on every request.
		return cred.Derived(func() any { return PrincipalFromKey(*cred) }).(*Principal), nil
	}
	if strings.HasPrefix(tok, "svca_") {
		cred, err := s.DB.AuthenticateAccess(ctx, tok)
		if kv.ErrorCode(err) == kv.EUNAUTHORIZED || (err == nil && cred.Connection.Resource != resource) {
			return nil, &APIError{Status: 401, Code: "invalid_token", TokenSent: true,
				Detail: "The access token is invalid, expired or revoked, or was issued for another resource; reconnect the app."}
		}
		if err != nil {
			return nil, err
		}
		return principalFromConnection(cred), nil
	}
	return nil, &APIError{Status: 401, Code: "invalid_token", TokenSent: true, Detail: "The access token is invalid, expired or revoked."}
}
