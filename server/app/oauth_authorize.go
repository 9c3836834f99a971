package app

import (
	"interviewd/server/authz"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"

	"github.com/fasthttp/router"
)

// authorizeRefused answers a refusal: back to the client, or the app's error page.
func (s *App) authorizeRefused(r *pipeline.Request, e *authz.Refusal) error {
	r.Info.Code = e.Code
	if e.ToClient {
		r.Out = appRedirect{to: s.clients.RefusalRedirect(r.C, e)}
		return nil
	}
	return &pipeline.APIError{Status: e.PageStatus, Code: e.Code, Detail: e.Desc}
}

func (s *App) handleAuthorize(r *pipeline.Request) error {
	q, err := authz.DecodeAuthorize(string(r.C.URI().QueryString()))
	if err != nil {
		return s.authorizeRefused(r, authz.PageRefusal(400, "The authorization request's query is not validly encoded."))
	}
	if _, refusal := s.clients.CheckAuthorize(r.Ctx, q); refusal != nil {
		return s.authorizeRefused(r, refusal)
	}
	to := "/app/oauth/authorize?" + q.Encode()
	if SafeNext(to) == "" {
		// The consent page's address travels through sign-in and two-step as their
		// return path, which is bounded; a request past that would be lost on the way.
		return s.authorizeRefused(r, authz.PageRefusal(400, "The authorization request is too long (its parameters exceed 2000 characters)."))
	}
	r.Out = appRedirect{to: to}
	return nil
}

// authorizeAdmit puts the authorization endpoint under the per-address budget of the
// other OAuth endpoints: a request may make this server fetch a client metadata
// document, which must not be done at a stranger's pace.
func (s *App) authorizeAdmit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		d := s.Limiter.AdmitIP(s.Now(), "oauth "+ratelimit.AddrKey(s.ClientIP(r.C)).String())
		s.SetRateHeaders(r.C, d)
		if !d.OK {
			return &pipeline.APIError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
				Detail: "Too many authorization requests from your network; wait a moment and try again."}
		}
		return next(r)
	}
}

// routeAuthorize mounts GET /v1/oauth/authorize on the app's surface: its refusals are
// pages of the app, and a good request goes on to the consent page.
func (s *App) routeAuthorize(r *router.Router) {
	g := s.Group(r, "/v1/oauth", s.appSurfaceOf())
	g.GET("/authorize", s.handleAuthorize, s.appRequire(appRoute{Access: AccessPublic}), s.authorizeAdmit)
}
