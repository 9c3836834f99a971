// Package oauth is the OAuth 2.1 authorization server's endpoints at /v1/oauth:
// registration (RFC 7591), the token and revocation endpoints (RFC 6749, 7009) as a
// JSON surface of their own with RFC 6749's error shape and Cache-Control: no-store,
// limited per client address, and the server's metadata (RFC 8414). The authorization
// endpoint and the consent page are pages of the web app (server/app); what both
// need, finding clients and checking authorization requests, is server/authz. Codes
// and tokens are kv's (kv/oauth_grant.go). It depends on the shared pipeline alone.
package oauth

import (
	"errors"
	"strconv"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// AuthServer is the authorization server's state beside the store.
type AuthServer struct {
	*pipeline.Core
	clients *authz.Clients // OAuth clients and authorization requests
	// Register limits successful registrations per client address (its per-IP class,
	// an hour's window; register_limits.go).
	Register *ratelimit.Limiter
}

// oauthBody is RFC 6749's error body.
type oauthBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// oauthSurfaceOf: public (the client authenticates inside the handler, as RFC 6749
// lets it choose Basic or the form), limited per address by admit, no-store answers.
func (s *AuthServer) oauthSurfaceOf(admit pipeline.Middleware) *pipeline.Surface {
	return &pipeline.Surface{Name: "oauth", Steps: []pipeline.Middleware{admit}, Render: s.renderOAuth}
}

// routeOAuth mounts the authorization server and its metadata.
func Route(core *pipeline.Core, r *router.Router, limits pipeline.RateLimits, clients *authz.Clients) *AuthServer {
	s := &AuthServer{Core: core, clients: clients, Register: newRegistrationLimiter(limits)}
	if st := s.Limiter.Store(); st != nil {
		// Several nodes: one registration budget per address for all of them (its keys
		// are "register <addr>", apart from every other limit's).
		s.Register.ShareIn(st)
	}
	s.routeAuthServerMetadata(r)
	// Registration counts against its own budget only: a client that spent the token
	// endpoint's may still register, and registrations do not spend the token budget.
	s.Group(r, "/v1/oauth", s.oauthSurfaceOf(s.registerAdmit)).POST("/register", s.handleOAuthRegister)
	g := s.Group(r, "/v1/oauth", s.oauthSurfaceOf(s.oauthAdmit))
	g.POST("/token", s.handleOAuthToken)
	g.POST("/revoke", s.handleOAuthRevoke)
	return s
}

// oauthAdmit applies the per-address limit of unauthenticated endpoints (its own
// budget, apart from the participant pages').
func (s *AuthServer) oauthAdmit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		d := s.Limiter.AdmitIP(s.Now(), "oauth "+ratelimit.AddrKey(s.ClientIP(r.C)).String())
		s.SetRateHeaders(r.C, d)
		if !d.OK {
			return &authz.OAuthError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
				Description: "Too many requests from your address; retry after the number of seconds in Retry-After."}
		}
		return next(r)
	}
}

// renderOAuth writes r.out as JSON (nil: an empty 200, as revocation answers) or the
// error in RFC 6749's shape. Nothing the authorization server says may be cached.
func (s *AuthServer) renderOAuth(r *pipeline.Request, err error) {
	c := r.C
	pipeline.AllowAnyOrigin(c) // public by design: browser-based clients register and get tokens too
	c.Response.Header.Set("Cache-Control", "no-store")
	c.Response.Header.Set("Pragma", "no-cache")
	if err == nil {
		status := r.Status
		if status == 0 {
			status = 200
		}
		c.SetStatusCode(status)
		if r.Out == nil {
			return
		}
		body, mErr := json.MarshalNoEscape(r.Out)
		if mErr != nil {
			err = mErr
		} else {
			c.SetContentType("application/json")
			c.SetBody(body)
			return
		}
	}
	oe := toOAuthError(err)
	r.Info.Code = oe.Code
	if oe.Status >= 500 {
		r.Info.Err = err.Error()
	}
	if oe.Status == 401 {
		if oe.Basic {
			c.Response.Header.Set("WWW-Authenticate", `Basic realm="interviewd"`)
		} else {
			c.Response.Header.Set("WWW-Authenticate", `Bearer realm="interviewd"`)
		}
	}
	if oe.Status == 429 {
		c.Response.Header.Set("Retry-After", strconv.Itoa(max(oe.RetryAfter, 1)))
	}
	body, _ := json.MarshalNoEscape(oauthBody{Error: oe.Code, Description: oe.Description})
	c.SetStatusCode(oe.Status)
	c.SetContentType("application/json")
	c.SetBody(body)
}

// toOAuthError maps any error to RFC 6749's vocabulary: kv's reasons are already its
// words (invalid_grant, invalid_redirect_uri, ...); anything uncoded is server_error.
func toOAuthError(err error) *authz.OAuthError {
	var oe *authz.OAuthError
	if errors.As(err, &oe) {
		return oe
	}
	var ke *kv.Error
	if errors.As(err, &ke) {
		switch ke.Code {
		case kv.EUNAUTHORIZED:
			return authz.OAuthRefusal(400, pipeline.OrDefault(ke.Reason, "invalid_grant"), ke.Message)
		case kv.EINVALID:
			reason := ke.Reason
			if reason == "" || reason == "validation_error" {
				reason = "invalid_request"
			}
			return authz.OAuthRefusal(400, reason, ke.Message)
		case kv.ENOTFOUND:
			return authz.ErrOAuthClient
		}
	}
	ae := pipeline.ToAPIError(err)
	switch ae.Status {
	case 413:
		return authz.OAuthRefusal(413, "invalid_request", ae.Detail)
	case 429:
		return &authz.OAuthError{Status: 429, Code: "rate_limited", Description: ae.Detail, RetryAfter: ae.RetryAfter}
	case 400, 422:
		return authz.OAuthRefusal(400, "invalid_request", ae.Detail)
	}
	return authz.OAuthRefusal(500, "server_error", pipeline.ErrInternal)
}
