package app

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// The app's side of OAuth: the consent page an authorization request leads to (sign
// in, two-step and workspace are the app's own pages, reached through its access
// steps), and Settings → Connected apps, where connections are listed and ended.

func (s *App) appOAuthRoutes() []appRoute {
	return []appRoute{
		{"GET", "/oauth/authorize", accessSession, s.handleConsentPage},
		{"POST", "/oauth/authorize", accessSession, s.handleConsent},
		{"GET", "/settings/apps", AccessMember, s.handleConnectedApps},
		{"POST", "/settings/apps/{connection_id}/end", AccessMember, s.handleConnectedAppEnd},
	}
}

type appConsentWorkspace struct {
	OrgID, Name, Role string
	Current           bool
}

type appConsentScope struct {
	Name, Desc         string
	Allowed, Requested bool
}

type appConsentPage struct {
	ClientName, ClientHost, ClientID, ReturnTo, ResourceName string
	Document                                                 bool
	Params                                                   []authz.FormParam
	Workspaces                                               []appConsentWorkspace
	OrgID, OrgName, Env                                      string
	Scopes                                                   []appConsentScope
	Errors                                                   []string
}

// consentPage builds the consent page for req in the workspace and environment the
// browser chose (org, env; "" for the session's own).
func (s *App) consentPage(r *pipeline.Request, req *authz.Request, org, env string) (*appPage, error) {
	a := appOf(r)
	orgs, err := s.DB.FindUserOrgs(r.Ctx, a.auth.User.ID)
	if err != nil {
		return nil, err
	}
	if len(orgs) == 0 {
		return nil, appForbidden("You're not a member of any workspace yet, so there is nothing to connect. Ask an owner or admin of your organisation to invite you.")
	}
	chosen := orgs[0]
	want := org
	if want == "" {
		want = a.auth.Org.ID.String()
	}
	for _, o := range orgs {
		if o.Org.ID.String() == want {
			chosen = o
		}
	}
	if !kv.Environment(env).Valid() {
		env = string(a.auth.Session.Environment)
		if chosen.Org.ID != a.auth.Org.ID || env == "" {
			env = string(kv.EnvLive)
		}
	}
	page := appConsentPage{ClientName: req.Client.Name, ClientHost: ClientHostLabel(req.Client, req.Q.RedirectURI),
		ClientID: req.Client.ID, Document: req.Client.Document,
		ReturnTo: returnToLabel(req.Q.RedirectURI), ResourceName: resourceLabel(req.Resource), Params: req.Q.Values(),
		OrgID: chosen.Org.ID.String(), OrgName: chosen.Org.Name, Env: env}
	for _, o := range orgs {
		page.Workspaces = append(page.Workspaces, appConsentWorkspace{OrgID: o.Org.ID.String(), Name: o.Org.Name,
			Role: string(o.Role), Current: o.Org.ID == chosen.Org.ID})
	}
	for _, sc := range req.Scopes {
		page.Scopes = append(page.Scopes, appConsentScope{Name: sc, Desc: appScopeDescs[sc], Requested: true,
			Allowed: chosen.Role.MayHoldScope(sc)})
	}
	// The approval's answer redirects to the client: a form may only lead where the
	// page's form-action allows, so the client's address is added to it.
	r.C.Response.Header.Set("Content-Security-Policy", strings.Replace(CSP, "form-action 'self'",
		"form-action 'self' "+cspSource(req.Q.RedirectURI), 1))
	return &appPage{name: "app_oauth_consent", title: "Connect " + req.Client.Name, bare: true, data: page}, nil
}

// cspSource is the CSP source expression of a redirect URI: its origin, or its scheme
// for a private-use scheme.
func cspSource(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.Scheme == "" {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}

// ClientHostLabel is the host the consent page shows beside a client's name, so a
// person can tell who they are approving whatever the client calls itself: for a
// client described by a metadata document, the document's host (the document vouches
// for the name); otherwise the host the approval is sent back to, or a native app's
// private-use scheme. Hosts are shown in ASCII (IDNA), so a look-alike letter of
// another script shows as the xn-- name it really is.
func ClientHostLabel(c kv.OAuthClient, redirectURI string) string {
	from := redirectURI
	if c.Document {
		from = c.ID
	}
	u, err := url.Parse(from)
	if err != nil {
		return ""
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	host := u.Hostname()
	if ascii, err := idna.Lookup.ToASCII(host); err == nil {
		host = ascii
	}
	if port := u.Port(); port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// returnToLabel is how the consent page names where the browser is sent back.
func returnToLabel(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	if u.Scheme == "http" && kv.IsLoopbackHost(u.Hostname()) {
		return "an app on this computer (" + u.Host + ")"
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}

func resourceLabel(resource string) string {
	if resource == pipeline.ResourceAPI {
		return "the interviewd REST API"
	}
	return "the interviewd MCP server"
}

func (s *App) handleConsentPage(r *pipeline.Request) error {
	q, err := authz.DecodeAuthorize(string(r.C.URI().QueryString()))
	if err != nil {
		return s.authorizeRefused(r, authz.PageRefusal(400, "The authorization request's query is not validly encoded."))
	}
	req, refusal := s.clients.CheckAuthorize(r.Ctx, q)
	if refusal != nil {
		return s.authorizeRefused(r, refusal)
	}
	args := r.C.QueryArgs()
	page, err := s.consentPage(r, req, string(args.Peek("org")), string(args.Peek("env")))
	if err != nil {
		return err
	}
	r.Out = page
	return nil
}

// handleConsent is the person's answer: deny (access_denied back to the client) or
// approve the ticked scopes in the chosen workspace (a code back to the client).
func (s *App) handleConsent(r *pipeline.Request) error {
	form, err := formOf(r)
	if err != nil {
		return err
	}
	vals := url.Values{}
	for _, name := range authz.AuthorizeParams {
		for _, v := range form.PeekMulti(name) {
			vals.Add(name, string(v))
		}
	}
	q := authz.QueryFromValues(vals)
	req, refusal := s.clients.CheckAuthorize(r.Ctx, q)
	if refusal != nil {
		return s.authorizeRefused(r, refusal)
	}
	if formValue(r, "decision") != "approve" {
		r.Info.Code = "access_denied"
		r.Out = appRedirect{to: s.clients.RefusalRedirect(r.C, &authz.Refusal{Q: q, Code: "access_denied", Desc: "The person denied the request."})}
		return nil
	}
	a := appOf(r)
	orgID, _ := kv.ParseID(formValue(r, "org"))
	env := kv.Environment(formValue(r, "env"))
	var grant []string
	for _, sc := range formValues(r, "grant") {
		if slices.Contains(req.Scopes, sc) { // never more than the client asked for
			grant = append(grant, sc)
		}
	}
	again := func(msg string, status int) error {
		page, err := s.consentPage(r, req, orgID.String(), string(env))
		if err != nil {
			return err
		}
		page.data = withConsentError(page.data, msg)
		page.status = status
		r.Out = page
		return nil
	}
	if len(grant) == 0 {
		return again("Tick at least one permission to allow, or deny the request.", 422)
	}
	_, code, err := s.DB.Approve(r.Ctx, kv.ApproveInput{UserID: a.auth.User.ID, TwoStepPassed: a.auth.Session.TwoStepPassed,
		TwoStepByEmail: a.auth.Session.TwoStepByEmail, OrgID: orgID, Environment: env, Client: req.Client, Scopes: grant, Resource: req.Resource,
		RedirectURI: q.RedirectURI, Challenge: q.Challenge})
	switch {
	case err == nil:
	case pipeline.ToAPIError(err).Code == "two_step_required":
		// The workspace requires two-step: make it the session's, pass the check, and
		// come back here.
		if _, err := s.DB.ChooseWorkspace(r.Ctx, kv.WorkspaceInput{Token: a.token, OrgID: orgID, Environment: env}); err != nil {
			return err
		}
		next := "/app/oauth/authorize?" + q.Encode() + "&" + url.Values{"org": {orgID.String()}, "env": {string(env)}}.Encode()
		r.Out = appRedirect{to: "/app/twostep" + nextQuery(SafeNext(next))}
		return nil
	case kv.ErrorCode(err) == kv.EFORBIDDEN || kv.ErrorCode(err) == kv.EINVALID:
		return again(pipeline.ToAPIError(err).Detail, pipeline.ToAPIError(err).Status)
	default:
		return err
	}
	// iss is the issuer the client discovered: the consent page is at the origin the
	// authorization endpoint was reached at, which discovery named (discovery.go).
	v := url.Values{"code": {code}, "iss": {s.BaseFor(r.C)}}
	if q.State != "" {
		v.Set("state", q.State)
	}
	r.Out = appRedirect{to: authz.ClientRedirect(q.RedirectURI, v)}
	return nil
}

func withConsentError(data any, msg string) any {
	p := data.(appConsentPage)
	p.Errors = append(p.Errors, msg)
	return p
}

type appConnectionRow struct {
	ID, ClientName, Env, Resource string
	Scopes                        []string
	Approved, LastUsed, Ends      string
	Approver                      string
}

type appConnectedAppsPage struct {
	Connections []appConnectionRow
	SeesAll     bool
	Connect     appConnectSection
}

// handleConnectedApps is Settings → Connected apps: owners and admins see the
// organisation's connections, members their own, and everyone how to connect one.
func (s *App) handleConnectedApps(r *pipeline.Request) error {
	a := appOf(r)
	conns, err := s.DB.FindConnectionsFor(r.Ctx, a.auth.Org.ID, a.auth.User.ID)
	if err != nil {
		return err
	}
	emails := map[kv.ID]string{}
	page := appConnectedAppsPage{SeesAll: a.auth.Role.Manages(), Connect: s.connectSection(r, a.auth.Role)}
	for _, c := range conns {
		if _, ok := emails[c.UserID]; !ok {
			u, err := s.DB.FindUserByID(r.Ctx, c.UserID)
			if err == nil {
				emails[c.UserID] = u.Email
			}
		}
		row := appConnectionRow{ID: c.ID.String(), ClientName: c.ClientName, Env: string(c.Environment),
			Resource: strings.TrimPrefix(resourceLabel(c.Resource), "the interviewd "), Scopes: c.Scopes,
			Approved: appDate(c.ApprovedAt), Ends: appDate(c.EndsAt), Approver: pipeline.OrDefault(emails[c.UserID], "former member")}
		if c.LastUsedAt != nil {
			row.LastUsed = appDateTime(*c.LastUsedAt)
		}
		page.Connections = append(page.Connections, row)
	}
	r.Out = &appPage{name: "app_settings_apps", title: "Connected apps", nav: webui.NavSettings, sub: "apps", data: page}
	return nil
}

// appDateTime formats a moment for a page, to the minute, in UTC.
func appDateTime(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") }

func (s *App) handleConnectedAppEnd(r *pipeline.Request) error {
	a := appOf(r)
	id, ok := kv.ParseID(r.PathParam("connection_id"))
	if !ok {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "Connection not found."}
	}
	if err := s.DB.EndConnection(r.Ctx, kv.EndConnectionInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, ConnectionID: id}); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/apps?done=connection_ended"}
	return nil
}
