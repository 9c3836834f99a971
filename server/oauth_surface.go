package server

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// The OAuth 2.1 authorization server at /v1/oauth: registration (RFC 7591), the token
// and revocation endpoints (RFC 6749, 7009) as a JSON surface of their own with RFC
// 6749's error shape and Cache-Control: no-store, limited per client address; the
// authorization endpoint (oauth_authorize.go) hands the browser to the app's consent
// page (app_oauth.go). Codes and tokens are kv's (kv/oauth_grant.go); clients named
// by a metadata document URL are fetched and cached here (oauth_client_metadata.go).

// oauthSide is the authorization server's state beside the store.
type oauthSide struct {
	// register limits successful registrations per client address (its per-IP class,
	// an hour's window; oauth_register_limits.go).
	register *ratelimit.Limiter
	// metadata fetches client ID metadata documents; nil when they are turned off.
	metadata *clientMetadata
}

// oauthError is a refusal in RFC 6749 §5.2's shape: {"error", "error_description"}.
type oauthError struct {
	Status      int
	Code        string
	Description string
	RetryAfter  int
	// Basic says the client tried HTTP Basic authentication: a 401 then names it in
	// WWW-Authenticate (RFC 6749 §5.2).
	Basic bool
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func oauthRefusal(status int, code, desc string) *oauthError {
	return &oauthError{Status: status, Code: code, Description: desc}
}

var errOAuthClient = &oauthError{Status: 401, Code: "invalid_client",
	Description: "Client authentication failed: unknown client_id, or a confidential client without its secret."}

// oauthBody is RFC 6749's error body.
type oauthBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// oauthSurfaceOf: public (the client authenticates inside the handler, as RFC 6749
// lets it choose Basic or the form), limited per address by admit, no-store answers.
func (s *Server) oauthSurfaceOf(admit pipeline.Middleware) *pipeline.Surface {
	return &pipeline.Surface{Name: "oauth", Steps: []pipeline.Middleware{admit}, Render: s.renderOAuth}
}

// routeOAuth mounts the authorization server and its metadata.
func (s *Server) routeOAuth(r *router.Router, cfg Config, limits pipeline.RateLimits) {
	s.oauth = &oauthSide{register: newRegistrationLimiter(limits)}
	if st := s.Limiter.Store(); st != nil {
		// Several nodes: one registration budget per address for all of them (its keys
		// are "register <addr>", apart from every other limit's).
		s.oauth.register.ShareIn(st)
	}
	if !cfg.NoClientMetadata {
		s.oauth.metadata = newClientMetadata(cfg.allowLoopbackMetadata, cfg.metadataRoots)
	}
	s.routeAuthServerMetadata(r)
	// Registration counts against its own budget only: a client that spent the token
	// endpoint's may still register, and registrations do not spend the token budget.
	s.Group(r, "/v1/oauth", s.oauthSurfaceOf(s.registerAdmit)).POST("/register", s.handleOAuthRegister)
	g := s.Group(r, "/v1/oauth", s.oauthSurfaceOf(s.oauthAdmit))
	g.POST("/token", s.handleOAuthToken)
	g.POST("/revoke", s.handleOAuthRevoke)
	s.routeAuthorize(r)
}

// oauthAdmit applies the per-address limit of unauthenticated endpoints (its own
// budget, apart from the participant pages').
func (s *Server) oauthAdmit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		d := s.Limiter.AdmitIP(s.Now(), "oauth "+ratelimit.AddrKey(s.ClientIP(r.C)).String())
		s.SetRateHeaders(r.C, d)
		if !d.OK {
			return &oauthError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
				Description: "Too many requests from your address; retry after the number of seconds in Retry-After."}
		}
		return next(r)
	}
}

// renderOAuth writes r.out as JSON (nil: an empty 200, as revocation answers) or the
// error in RFC 6749's shape. Nothing the authorization server says may be cached.
func (s *Server) renderOAuth(r *pipeline.Request, err error) {
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
func toOAuthError(err error) *oauthError {
	var oe *oauthError
	if errors.As(err, &oe) {
		return oe
	}
	var ke *kv.Error
	if errors.As(err, &ke) {
		switch ke.Code {
		case kv.EUNAUTHORIZED:
			return oauthRefusal(400, pipeline.OrDefault(ke.Reason, "invalid_grant"), ke.Message)
		case kv.EINVALID:
			reason := ke.Reason
			if reason == "" || reason == "validation_error" {
				reason = "invalid_request"
			}
			return oauthRefusal(400, reason, ke.Message)
		case kv.ENOTFOUND:
			return errOAuthClient
		}
	}
	ae := pipeline.ToAPIError(err)
	switch ae.Status {
	case 413:
		return oauthRefusal(413, "invalid_request", ae.Detail)
	case 429:
		return &oauthError{Status: 429, Code: "rate_limited", Description: ae.Detail, RetryAfter: ae.RetryAfter}
	case 400, 422:
		return oauthRefusal(400, "invalid_request", ae.Detail)
	}
	return oauthRefusal(500, "server_error", pipeline.ErrInternal)
}

// findOAuthClient returns the client id names: a registered svcc_ client, or when
// client ID metadata documents are on, the client an https URL's document describes.
// ENOTFOUND invalid_client otherwise; a document that cannot be used is an
// oauthError naming why.
func (s *Server) findOAuthClient(ctx context.Context, id string) (kv.OAuthClient, error) {
	if strings.HasPrefix(id, "https://") && s.oauth.metadata != nil {
		return s.oauth.metadata.client(ctx, id, s.Now())
	}
	return s.DB.FindClient(ctx, id)
}

// resourcePath returns the protected resource a resource parameter names ("/v1/mcp"
// or "/v1/api" at an origin discovery names; a trailing slash is dropped), or "" when
// it names neither.
func (s *Server) resourcePath(resource string) string {
	resource = strings.TrimSuffix(resource, "/")
	for _, path := range []string{pipeline.ResourceMCP, pipeline.ResourceAPI} {
		if origin, ok := strings.CutSuffix(resource, path); ok && s.OwnsOrigin(origin) {
			return path
		}
	}
	return ""
}
