// Package app is the web app at /app: server-rendered pages for people, signed in
// with a session cookie. It is its own surface (pipeline.Surface): an authenticator
// that turns the session cookie into a principal, a CSRF check on every
// state-changing request, and an HTML renderer (error pages; a signed-out browser is
// sent to sign in and brought back). Every route states the least access it needs
// (Access), so the authorization table test is generated from the registered routes.
// Pages call the same operations as the API, through the research pipeline and the
// principal the session yields (Call). The OAuth authorization endpoint and consent
// page are app pages (oauth_authorize.go, oauth.go), over server/authz. It depends on
// the shared pipeline, never on another surface.
package app

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/sms"
	"interviewd/webui"
)

// Access is the least a route needs from the browser's session.
type Access uint8

const (
	// AccessPublic: anyone (sign-in pages). A session, if any, is still loaded.
	AccessPublic Access = iota
	// accessSession: a signed-in session that has passed its two-step check if one is
	// due, with or without a chosen workspace (choose workspace, accept an invitation).
	accessSession
	// accessMember: a chosen workspace, any role.
	AccessMember
	// accessAdmin: a chosen workspace where the user is an owner or admin.
	AccessAdmin
	// accessOwner: a chosen workspace where the user is an owner.
	AccessOwner
	// accessTwoStep: a signed-in session, two-step check due or not (the check's own
	// pages and sign-out).
	accessTwoStep
	// accessResearch: a chosen workspace where the user may change research: any role
	// but viewer (roles.go).
	AccessResearch
)

func (a Access) String() string {
	return [...]string{"public", "session", "member", "admin", "owner", "two-step", "research"}[a]
}

// appRoute is one route of the app. Path is under /app ("/settings/developer"); a page
// file lists its routes in a function that appRouteSets names.
type appRoute struct {
	Method  string // GET or POST
	Path    string
	Access  Access
	Handler pipeline.Handler
}

// appRouteSets lists the app's routes, one set per page file. A new page file adds its
// set here (one line).
func (s *App) appRouteSets() [][]appRoute {
	return [][]appRoute{
		s.appShellRoutes(),
		s.appSignInRoutes(),
		s.appTwoStepRoutes(),
		s.appDeveloperRoutes(),
		s.appMembersRoutes(),
		s.appSecurityRoutes(),
		s.appPhoneRoutes(),
		s.appStudyRoutes(),
		s.appLinksRoutes(),
		s.appAnalysisRoutes(),
		s.appInterviewRoutes(),
		s.appAnnotationRoutes(),
		s.appExportRoutes(),
		s.appRedactionRoutes(),
		s.appParticipantRoutes(),
		s.appOAuthRoutes(),
		s.appCreditsRoutes(),
	}
}

// App is what the app needs beside the store: its routes (for the authorization
// table and /app's start), the sign-in limits and the mail sender.
type App struct {
	*research.Service
	// actions is the research pipeline as the app's actions (studies_ops.go).
	actions *pipeline.ResearchSurface
	// transcripts keeps rendered transcript pages by interview and length.
	transcripts *transcriptRenders
	// sms texts two-step codes; nil: no provider, texts not offered.
	sms sms.Sender
	// clients finds OAuth clients and checks authorization requests (the consent page).
	clients *authz.Clients
	Routes  []appRoute
	// PreKey authenticates pre-session tokens (pre_session.go).
	PreKey []byte
}

// Cookie names. The session cookie holds the session token; the pre-session cookie a
// random value the sign-in forms echo (their CSRF token before a session exists).
const (
	SessionCookie = "interviewd_session"
	PreCookie     = "interviewd_pre"
)

// appCSP: the app's own scripts, styles and API only; images may be data: URIs (QR
// codes); nothing inline, no framing, forms post only here.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// maxAppForm bounds an urlencoded form body (uploads have their own limits).
const maxAppForm = 64 << 10

// appSession is the app's per-request state (request.data): the resolved session, if
// any, and the parsed form of a post.
type appSession struct {
	auth   kv.SessionAuth
	token  string // the session cookie's token; "" when signed out
	signed bool   // auth holds a live session
	pre    string // the pre-session token (sign-in forms)
	form   *fasthttp.Args
	route  appRoute
}

// app returns the request's app state.
func appOf(r *pipeline.Request) *appSession {
	a, _ := r.Data.(*appSession)
	if a == nil {
		a = &appSession{}
		r.Data = a
	}
	return a
}

// appPage is a handler's output: a page of webui to render.
type appPage struct {
	name   string // the template, "app_settings_developer"
	status int    // 0: 200
	title  string
	nav    string // webui.Nav*
	sub    string // the settings tab
	bare   bool   // no navigation (sign-in, two-step, workspace)
	flash  string
	bad    bool // flash is a problem
	data   any
}

// appRedirect is a handler's output that sends the browser elsewhere (303 See Other,
// so a form post is followed by a GET). to is a local path.
type appRedirect struct{ to string }

// Refusals the renderer turns into redirects.
var (
	errAppSignIn    = errors.New("app: sign in first")
	errAppTwoStep   = errors.New("app: two-step check due")
	errAppWorkspace = errors.New("app: choose a workspace")
)

// appForbidden is the 403 of a role that may not do something, or a form without its
// CSRF token.
func appForbidden(detail string) error {
	return &pipeline.APIError{Status: 403, Code: "forbidden", Detail: detail}
}

var errAppCSRF = &pipeline.APIError{Status: 403, Code: "csrf_failed",
	Detail: "This form has expired or did not come from this app. Go back, reload the page and try again."}

// appSurfaceOf builds the app surface: the session is loaded for every route (never
// refused here: access is the route's own step), then the security headers.
func (s *App) appSurfaceOf() *pipeline.Surface {
	return &pipeline.Surface{
		Name:         "app",
		Authenticate: s.appAuthenticate,
		Steps:        []pipeline.Middleware{appHeaders},
		Render:       s.appRender,
	}
}

// routeApp mounts the app: GET / and every route of appRouteSets under /app.
func Route(svc *research.Service, r *router.Router, smsSender sms.Sender, clients *authz.Clients) *App {
	s := &App{
		Service:     svc,
		actions:     svc.NewResearchSurface("app_action", appWire, renderAppAction),
		transcripts: newTranscriptRenders(),
		sms:         smsSender,
		clients:     clients,
		PreKey:      DerivedKey(svc.DB.Secret(), "app pre-session"),
	}
	sf := s.appSurfaceOf()
	public := s.appRequire(appRoute{Access: AccessPublic})
	s.AppNotFound = sf.Serve("/app/*", nil, sf.Chain(func(*pipeline.Request) error {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "No such page."}
	}, public))
	s.AppNotAllowed = sf.Serve("/app/*", nil, sf.Chain(func(*pipeline.Request) error {
		return &pipeline.APIError{Status: 405, Code: "method_not_allowed", Detail: "This page cannot be opened that way. Go back and use the page's own buttons."}
	}, public))
	root := s.Group(r, "", sf)
	root.GET("/", s.handleAppRoot)
	g := s.Group(r, "/app", sf)
	for _, set := range s.appRouteSets() {
		for _, rt := range set {
			mw := []pipeline.Middleware{s.appRequire(rt)}
			if rt.Method != "GET" {
				mw = append(mw, s.appCSRF)
			}
			switch rt.Method {
			case "GET":
				g.GET(rt.Path, rt.Handler, mw...)
			default:
				g.POST(rt.Path, rt.Handler, mw...)
			}
			s.Routes = append(s.Routes, rt)
		}
	}
	s.routeAuthorize(r) // the authorization endpoint is one of the app's pages
	return s
}

// appHeaders sets the security headers of every app answer. Every app page is about
// one person's data, so none may sit in a cache.
func appHeaders(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		h := &r.C.Response.Header
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		return next(r)
	}
}

// appAuthenticate loads the session named by the cookie, if any. A bad or expired
// cookie is the same as none (the route's access step decides what that means).
func (s *App) appAuthenticate(r *pipeline.Request) error {
	a := appOf(r)
	// A pre-session token the server did not issue is no token (pre_session.go).
	if pre := string(r.C.Request.Header.Cookie(PreCookie)); s.ValidPre(pre) {
		a.pre = pre
	}
	tok := string(r.C.Request.Header.Cookie(SessionCookie))
	if tok == "" {
		return nil
	}
	auth, err := s.DB.AuthenticateSession(r.Ctx, tok, string(r.C.UserAgent()), s.ClientIP(r.C).String())
	switch {
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED:
		return nil
	case err != nil:
		return err
	}
	a.auth, a.token, a.signed = auth, tok, true
	if !auth.Org.ID.IsZero() {
		r.P = pipeline.AppPrincipal(auth)
		r.Info.Org = r.P.OrgKey
	}
	return nil
}

// appRequire is a route's access step.
func (s *App) appRequire(rt appRoute) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(r *pipeline.Request) error {
			a := appOf(r)
			a.route = rt
			if rt.Access == AccessPublic {
				return next(r)
			}
			if !a.signed {
				return errAppSignIn
			}
			if rt.Access == accessTwoStep {
				return next(r)
			}
			if a.auth.TwoStepDue() {
				return errAppTwoStep
			}
			if rt.Access == accessSession {
				return next(r)
			}
			if a.auth.Org.ID.IsZero() || a.auth.Session.Environment == "" {
				return errAppWorkspace
			}
			if err := RoleRefusal(rt.Access, a.auth.Role, a.auth.Org.Name); err != nil {
				return err
			}
			return next(r)
		}
	}
}

// appCSRF refuses a state-changing request whose token does not match: the session's
// CSRF secret, or before sign-in the pre-session cookie. The token comes from the form
// field "csrf" (urlencoded forms) or the X-CSRF-Token header (scripts, uploads).
func (s *App) appCSRF(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		a := appOf(r)
		presented := string(r.C.Request.Header.Peek("X-CSRF-Token"))
		if presented == "" && isURLEncoded(r.C) {
			form, err := formOf(r)
			if err != nil {
				return err
			}
			presented = string(form.Peek("csrf"))
		}
		if !a.checkCSRF(presented) {
			return errAppCSRF
		}
		return next(r)
	}
}

// checkCSRF compares in constant time with the session's secret, or with the
// pre-session token when no session is signed in.
func (a *appSession) checkCSRF(presented string) bool {
	if a.signed {
		return a.auth.Session.CheckCSRF(presented)
	}
	return a.pre != "" && len(presented) == len(a.pre) &&
		subtle.ConstantTimeCompare([]byte(a.pre), []byte(presented)) == 1
}

// browser names the browser a sign-in code belongs to: its pre-session token, or its
// session when one is signed in (a session whose two-step is due signs in again).
func (a *appSession) browser() string {
	if a.pre != "" {
		return a.pre
	}
	return a.token
}

// csrf returns the token forms must carry.
func (a *appSession) csrf() string {
	if a.signed {
		return a.auth.Session.CSRF
	}
	return a.pre
}

func isURLEncoded(c *fasthttp.RequestCtx) bool {
	return bytes.HasPrefix(c.Request.Header.ContentType(), []byte("application/x-www-form-urlencoded"))
}

// form returns the posted urlencoded form, read once (at most maxAppForm bytes).
func formOf(r *pipeline.Request) (*fasthttp.Args, error) {
	a := appOf(r)
	if a.form != nil {
		return a.form, nil
	}
	a.form = &fasthttp.Args{}
	if !isURLEncoded(r.C) {
		return a.form, nil
	}
	body, err := pipeline.ReadBody(r.C, maxAppForm)
	if err != nil {
		return nil, err
	}
	a.form.ParseBytes(body)
	return a.form, nil
}

// formValue returns a posted form field, trimmed.
func formValue(r *pipeline.Request, name string) string {
	f, err := formOf(r)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(f.Peek(name)))
}

// formValues returns every value of a repeated form field (checkboxes).
func formValues(r *pipeline.Request, name string) []string {
	f, err := formOf(r)
	if err != nil {
		return nil
	}
	var out []string
	for _, v := range f.PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

// handleAppRoot is GET /: the app when signed in, else the sign-in page.
func (s *App) handleAppRoot(r *pipeline.Request) error {
	if appOf(r).signed {
		r.Out = appRedirect{to: "/app"}
	} else {
		r.Out = appRedirect{to: "/app/signin"}
	}
	return nil
}

// SafeNext returns next when it is a path inside the app (so a sign-in can return
// there), else "". Anything that could leave the site — a scheme, a host, "//", a
// backslash — is refused.
func SafeNext(next string) string {
	if next == "" || len(next) > 2000 || !strings.HasPrefix(next, "/app") {
		return ""
	}
	if strings.ContainsAny(next, "\\\r\n\t") || strings.HasPrefix(next, "//") {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil ||
		!(u.Path == "/app" || strings.HasPrefix(u.Path, "/app/")) {
		return ""
	}
	return next
}

// returnPath is where a refused GET should come back to after sign-in: its own path
// and query. A refused post returns to the app's start.
func returnPath(r *pipeline.Request) string {
	if !r.C.IsGet() {
		return ""
	}
	return SafeNext(string(r.C.RequestURI()))
}

// appGates are the refusals that send the browser to a page of its own, and back to
// where it was going afterwards: sign in, two-step, a workspace to choose.
var appGates = []struct {
	err        error
	code, page string
}{
	{errAppSignIn, "signed_out", "/app/signin"},
	{errAppTwoStep, "two_step_due", "/app/twostep"},
	{errAppWorkspace, "no_workspace", "/app/workspace"},
}

// appRender writes an app request's outcome: a page, a redirect, or an error page.
func (s *App) appRender(r *pipeline.Request, err error) {
	if err == nil {
		switch out := r.Out.(type) {
		case *appPage:
			s.renderAppPage(r, out)
		case appRedirect:
			s.appRedirectTo(r, out.to)
		default:
			s.renderAppError(r, &pipeline.APIError{Status: 500, Code: "internal_error", Detail: pipeline.ErrInternal})
		}
		return
	}
	for _, g := range appGates {
		if errors.Is(err, g.err) {
			r.Info.Code = g.code
			to := g.page
			if next := returnPath(r); next != "" {
				to += "?next=" + url.QueryEscape(next)
			}
			s.appRedirectTo(r, to)
			return
		}
	}
	ae := pipeline.ToAPIError(err)
	if ae.Status == 401 {
		// A session that ended between the authenticator and the operation.
		r.Info.Code = ae.Code
		s.appRedirectTo(r, "/app/signin")
		return
	}
	s.renderAppError(r, ae)
}

func (s *App) appRedirectTo(r *pipeline.Request, to string) {
	r.C.Response.Header.Set("Location", to)
	r.C.SetStatusCode(fasthttp.StatusSeeOther)
}

// appErrorPage is the data of app_error.
type appErrorPage struct {
	Heading, Message, RequestID string
}

// renderAppError writes an error page in the app's layout. Internal errors say nothing
// but the request id, which the log line carries with the cause.
func (s *App) renderAppError(r *pipeline.Request, ae *pipeline.APIError) {
	r.Info.Code = ae.Code
	if ae.Status >= 500 {
		r.Info.Err = ae.Error()
	}
	heading, msg := "Something went wrong", "We couldn't complete that. Please try again in a moment."
	switch ae.Status {
	case 400, 405, 413, 422:
		heading, msg = "That didn't work", ae.Detail
	case 403:
		heading, msg = "Not allowed", ae.Detail
	case 404:
		heading, msg = "Not found", "There is nothing here, or it belongs to another workspace."
	case 409:
		heading, msg = "That can't be done right now", ae.Detail
	case 429:
		heading, msg = "Slow down a little", ae.Detail
		if ae.RetryAfter > 0 {
			r.C.Response.Header.Set("Retry-After", strconv.Itoa(ae.RetryAfter))
		}
	case 503:
		if ae.Code == "storage_unavailable" { // a sentence written for people, and when to retry
			heading, msg = "Files are out of reach", ae.Detail
			r.C.Response.Header.Set("Retry-After", strconv.Itoa(max(ae.RetryAfter, 1)))
		}
	}
	page := &appPage{name: "app_error", status: ae.Status, title: heading,
		bare: !appOf(r).signed || appOf(r).auth.Org.ID.IsZero(),
		data: appErrorPage{Heading: heading, Message: msg}}
	if ae.Status >= 500 {
		page.data = appErrorPage{Heading: heading, Message: msg, RequestID: string(r.Info.ID)}
	}
	s.renderAppPage(r, page)
}

// renderAppPage renders p in the layout, with the shell filled from the session.
func (s *App) renderAppPage(r *pipeline.Request, p *appPage) {
	a := appOf(r)
	shell := webui.AppShell{
		Title: p.title, Nav: p.nav, Sub: p.sub, Bare: p.bare,
		SignedIn: a.signed, CSRF: a.csrf(), Flash: p.flash, FlashError: p.bad,
		Path: string(r.C.Path()),
	}
	if a.signed {
		shell.Email = a.auth.User.Email
		if !a.auth.Org.ID.IsZero() && a.auth.Session.Environment != "" {
			shell.OrgName = a.auth.Org.Name
			shell.Env = string(a.auth.Session.Environment)
			shell.Role = string(a.auth.Role)
			shell.Credits = a.auth.Org.Credits
			shell.CreditsLow = a.auth.Org.LowCredits()
		} else {
			shell.Bare = true
		}
	}
	if shell.CSRF == "" {
		// A first visit to a sign-in page: give the browser its pre-session token.
		shell.CSRF = s.setPreCookie(r)
	}
	if flash := string(r.C.QueryArgs().Peek("done")); flash != "" && shell.Flash == "" {
		shell.Flash = appFlashes[flash]
	}
	// RenderApp writes the page in one piece or not at all, straight into the body.
	r.C.Response.ResetBody()
	if err := s.UI.RenderApp(r.C, p.name, webui.AppPage{Shell: shell, Data: p.data}); err != nil {
		r.Info.Err = err.Error()
		r.C.SetStatusCode(fasthttp.StatusInternalServerError)
		r.C.SetContentType("text/plain; charset=utf-8")
		r.C.SetBodyString("Internal error.")
		return
	}
	status := p.status
	if status == 0 {
		status = fasthttp.StatusOK
	}
	r.C.SetStatusCode(status)
	r.C.SetContentType("text/html; charset=utf-8")
}

// appFlashes are the confirmations a redirect may ask for with ?done=NAME: a fixed
// list, so a crafted link cannot put words on the page.
var appFlashes = map[string]string{
	"key_revoked":        "Key revoked. It stopped working at once.",
	"invited":            "Invitation sent.",
	"invitation_revoked": "Invitation cancelled.",
	"role_changed":       "Role changed.",
	"member_removed":     "Member removed.",
	"joined":             "Welcome! You've joined the workspace.",
	"totp_off":           "Two-step verification is off.",
	"fallback_on":        "Codes by email are allowed as a fallback.",
	"fallback_off":       "Codes by email are no longer accepted for two-step.",
	"phone_added":        "Text messages are on: each sign-in now asks for a code we text you.",
	"phone_removed":      "Phone number removed. Codes are no longer texted to it.",
	"session_revoked":    "That session is signed out.",
	"sessions_revoked":   "Every other session is signed out.",
	"policy_saved":       "Policy saved.",
	"email_codes_on":     "Codes by email now count as a second step in this organisation.",
	"email_codes_off":    "Codes by email no longer count as a second step in this organisation.",
	"workspace":          "Workspace switched.",
	"reverified":         "Confirmed. For the next 10 minutes you can change your two-step settings.",
	"highlighted":        "Highlight saved.",
	"highlight_deleted":  "Highlight deleted.",
	"tag_added":          "Tag added.",
	"tag_renamed":        "Tag renamed.",
	"tag_deleted":        "Tag deleted, and taken off every highlight.",
	"connection_ended":   "Connection ended. The app stopped working at once.",
	"credit_alert_saved": "Low-credit warning saved.",
}

// setAppCookie sets an app cookie: HttpOnly, SameSite=Lax, Secure under https, for
// the whole site. maxAge < 0 deletes it; 0 makes it last for the browser's session.
func (s *App) setAppCookie(r *pipeline.Request, name, value string, maxAge int) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(name)
	ck.SetValue(value)
	ck.SetPath("/")
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	ck.SetSecure(s.SecureCookies)
	switch {
	case maxAge < 0:
		ck.SetValue("")
		ck.SetExpire(fasthttp.CookieExpireDelete)
	case maxAge > 0:
		ck.SetMaxAge(maxAge)
	}
	r.C.Response.Header.SetCookie(ck)
}

// appShellRoutes are the app's own entry points.
func (s *App) appShellRoutes() []appRoute {
	return []appRoute{
		{"GET", "", AccessMember, s.handleAppHome},
		{"GET", "/settings", AccessMember, s.handleAppSettings},
	}
}

// handleAppHome is /app: the first section of the navigation that exists.
func (s *App) handleAppHome(r *pipeline.Request) error {
	for _, to := range []string{"/studies", "/settings/developer"} {
		if s.hasAppRoute("GET", to) {
			r.Out = appRedirect{to: "/app" + to}
			return nil
		}
	}
	return nil
}

func (s *App) handleAppSettings(r *pipeline.Request) error {
	r.Out = appRedirect{to: "/app/settings/developer"}
	return nil
}

// hasAppRoute reports whether the app registered method path (under /app).
func (s *App) hasAppRoute(method, path string) bool {
	for _, rt := range s.Routes {
		if rt.Method == method && rt.Path == path {
			return true
		}
	}
	return false
}
