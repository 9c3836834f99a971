package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/pipeline"
)

// appUser is a signed-in browser of the app as a test holds it: the session cookie's
// token and the session's CSRF secret.
type appUser struct {
	email string
	token string
	csrf  string
	user  kv.ID
}

// mustAppSession signs email in through the store (the code RequestSignInCode returns,
// as the emailed one would be) and chooses org and env; a zero org chooses nothing.
// The user must exist (be a member of something).
func (e *testEnv) mustAppSession(email string, org kv.ID, env kv.Environment) appUser {
	e.t.Helper()
	ctx := context.Background()
	code, err := e.db.RequestSignInCode(ctx, email, "")
	if err != nil || !code.Send {
		e.t.Fatalf("sign-in code for %s: send=%v %v", email, code.Send, err)
	}
	start, err := e.db.SignIn(ctx, kv.SignInInput{Email: email, Code: code.Code, UserAgent: "test"})
	if err != nil {
		e.t.Fatal(err)
	}
	u := appUser{email: email, token: start.Token, csrf: start.Session.CSRF, user: start.User.ID}
	if !org.IsZero() {
		if _, err := e.db.ChooseWorkspace(ctx, kv.WorkspaceInput{Token: u.token, OrgID: org, Environment: env}); err != nil {
			e.t.Fatal(err)
		}
	}
	return u
}

// mustMember adds email to org with role.
func (e *testEnv) mustMember(org kv.ID, email string, role kv.Role) kv.User {
	e.t.Helper()
	u, err := e.db.AddMember(context.Background(), org, email, role)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// appDo sends one app request with no redirect following. as may be nil (signed
// out). form is an urlencoded body for posts; csrf adds the session's token to it.
func (e *testEnv) appDo(method, path string, as *appUser, form url.Values, csrf bool) response {
	e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if csrf && as != nil {
		form.Set("csrf", as.csrf)
	}
	var body io.Reader
	if method != "GET" {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if method != "GET" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if as != nil {
		req.AddCookie(&http.Cookie{Name: app.SessionCookie, Value: as.token})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// appFixtures are the objects the authorization table points routes at: for every
// path parameter, a value in organisation A (the caller's) and one in organisation B.
type appFixtures struct {
	owner, admin, member appUser // of organisation A, live
	viewer               appUser // of organisation A, live
	own, other           map[string]string
}

// appParamFixtures makes, for each path parameter of the app's routes, an object of
// organisation A and one of organisation B. A route with a parameter missing here
// fails the table: whoever adds a parameter adds its fixtures.
func (e *testEnv) appParamFixtures() appFixtures {
	e.t.Helper()
	ctx := context.Background()
	f := appFixtures{own: map[string]string{}, other: map[string]string{}}
	e.mustMember(e.orgA.ID, "admin@a.example", kv.RoleAdmin)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	e.mustMember(e.orgA.ID, "second@a.example", kv.RoleMember)
	e.mustMember(e.orgA.ID, "viewer@a.example", kv.RoleViewer)
	f.owner = e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	f.admin = e.mustAppSession("admin@a.example", e.orgA.ID, kv.EnvLive)
	f.member = e.mustAppSession("member@a.example", e.orgA.ID, kv.EnvLive)
	f.viewer = e.mustAppSession("viewer@a.example", e.orgA.ID, kv.EnvLive)
	b := e.mustAppSession("b@example.com", e.orgB.ID, kv.EnvLive)

	// key_id: a key of A's member (so owner, admin and that member may act on it).
	keyA, _, err := e.db.CreateKey(ctx, kv.KeyInput{OrgID: e.orgA.ID, UserID: f.member.user, Name: "fixture", Environment: kv.EnvLive, Scopes: []string{kv.ScopeStudiesRead}})
	if err != nil {
		e.t.Fatal(err)
	}
	keyB, _, err := e.db.CreateKey(ctx, kv.KeyInput{OrgID: e.orgB.ID, Name: "fixture", Environment: kv.EnvLive, Scopes: []string{kv.ScopeStudiesRead}})
	if err != nil {
		e.t.Fatal(err)
	}
	f.own["key_id"], f.other["key_id"] = keyA.ID.String(), keyB.ID.String()

	// user_id: a member of A who may be changed; B's owner.
	second, err := e.db.FindUserByEmail(ctx, "second@a.example")
	if err != nil {
		e.t.Fatal(err)
	}
	f.own["user_id"], f.other["user_id"] = second.ID.String(), b.user.String()

	// invitation_id and token.
	invA, tokA, err := e.db.CreateInvitation(ctx, kv.InvitationInput{OrgID: e.orgA.ID, Actor: f.owner.user, Email: "new@a.example", Role: kv.RoleMember})
	if err != nil {
		e.t.Fatal(err)
	}
	invB, tokB, err := e.db.CreateInvitation(ctx, kv.InvitationInput{OrgID: e.orgB.ID, Actor: b.user, Email: "new@b.example", Role: kv.RoleMember})
	if err != nil {
		e.t.Fatal(err)
	}
	f.own["invitation_id"], f.other["invitation_id"] = invA.ID.String(), invB.ID.String()
	f.own["token"], f.other["token"] = tokA, tokB

	// session_id: another session of the caller; a session of B's owner. The table
	// signs in each role afresh, so "another session" is one of the owner's, made here.
	extra := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	sessions, err := e.db.FindSessions(ctx, extra.user)
	if err != nil || len(sessions) == 0 {
		e.t.Fatalf("sessions: %v", err)
	}
	bs, err := e.db.FindSessions(ctx, b.user)
	if err != nil || len(bs) == 0 {
		e.t.Fatalf("sessions of B: %v", err)
	}
	f.own["session_id"], f.other["session_id"] = sessions[0].ID.String(), bs[0].ID.String()

	// connection_id: an OAuth connection approved by A's member; one of B's owner.
	fixtureClient := kv.OAuthClient{ID: "svcc_fixture", Name: "Fixture app"}
	connA, _, err := e.db.Approve(ctx, kv.ApproveInput{UserID: f.member.user, OrgID: e.orgA.ID, Environment: kv.EnvLive,
		Client: fixtureClient, Scopes: []string{kv.ScopeStudiesRead}, Resource: pipeline.ResourceMCP})
	if err != nil {
		e.t.Fatal(err)
	}
	connB, _, err := e.db.Approve(ctx, kv.ApproveInput{UserID: b.user, OrgID: e.orgB.ID, Environment: kv.EnvLive,
		Client: fixtureClient, Scopes: []string{kv.ScopeStudiesRead}, Resource: pipeline.ResourceMCP})
	if err != nil {
		e.t.Fatal(err)
	}
	f.own["connection_id"], f.other["connection_id"] = connA.ID.String(), connB.ID.String()

	// Research pages. study_id: a live study of A and of B. job_id: one job of each
	// (the routes of authoring, simulation and export jobs all find a job only in the
	// caller's partition, of their own kind). interview_id: a finished interview of each.
	stA := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Fixture A", "Why?"))
	stB := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, plainBrief("Fixture B", "Why?"))
	f.own["study_id"], f.other["study_id"] = stA.ID.String(), stB.ID.String()
	// link_id: a participant link of each study.
	f.own["link_id"] = kv.LinkIDOf(e.linkFor(stA, "group", nil, "")).String()
	f.other["link_id"] = kv.LinkIDOf(e.linkFor(stB, "group", nil, "")).String()
	jobA := e.mustAuthoringJob(kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive})
	jobB := e.mustAuthoringJob(kv.Partition{Org: e.orgB.ID, Env: kv.EnvLive})
	f.own["job_id"], f.other["job_id"] = jobA.String(), jobB.String()
	e.completeInterview(stA.LinkToken, []string{"Because."})
	if _, err := e.db.AddCredits(ctx, e.orgB.ID, 1); err != nil { // B starts with none
		e.t.Fatal(err)
	}
	e.completeInterview(stB.LinkToken, []string{"Because."})
	f.own["interview_id"], f.other["interview_id"] = e.interviewsOf(stA)[0].ID.String(), e.interviewsOf(stB)[0].ID.String()
	e.annotationParamFixtures(&f, e.interviewsOf(stA)[0], e.interviewsOf(stB)[0])
	return f
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// fill puts fixture values into a route template; ok is false for a parameter with no
// fixture.
func fill(path string, values map[string]string) (string, string, bool) {
	missing := ""
	out := pathParam.ReplaceAllStringFunc(path, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := values[name]
		if !ok {
			missing = name
		}
		return url.PathEscape(v)
	})
	return out, missing, missing == ""
}

// workspaceAccess reports whether a route needs a chosen workspace (and so a role).
func workspaceAccess(a app.Access) bool {
	return a == app.AccessMember || a == app.AccessAdmin || a == app.AccessOwner || a == app.AccessResearch
}

// TestAppAuthorizationTable checks every registered app route: signed out → sign-in
// redirect; another organisation's object → 404; a member (researcher) on an
// admin-only route and a viewer on any route that changes research → 403; a post
// without its CSRF token → 403.
func TestAppAuthorizationTable(t *testing.T) {
	e := mustServe(t)
	routes := e.srv.app.Routes
	if len(routes) < 20 {
		t.Fatalf("only %d app routes registered", len(routes))
	}
	f := e.appParamFixtures()
	for _, rt := range routes {
		own, missing, ok := fill("/app"+rt.Path, f.own)
		if !ok {
			t.Fatalf("route %s %s: no fixture for path parameter %q (add it in appParamFixtures)", rt.Method, rt.Path, missing)
		}
		other, _, _ := fill("/app"+rt.Path, f.other)
		name := rt.Method + " " + rt.Path
		t.Run(name, func(t *testing.T) {
			if rt.Access != app.AccessPublic {
				t.Run("ErrSignedOut", func(t *testing.T) {
					r := e.appDo(rt.Method, own, nil, nil, false)
					loc := r.header.Get("Location")
					if r.status != 303 || !strings.HasPrefix(loc, "/app/signin") {
						t.Fatalf("signed out: %d Location %q, want 303 to /app/signin", r.status, loc)
					}
					if rt.Method == "GET" && !strings.Contains(loc, "next="+url.QueryEscape(own)) {
						t.Fatalf("signed out GET: Location %q does not return to %s", loc, own)
					}
				})
			}
			if rt.Method != "GET" {
				t.Run("ErrNoCSRF", func(t *testing.T) {
					as := &f.owner
					if rt.Access == app.AccessPublic {
						as = nil // a sign-in form without the pre-session token
					}
					r := e.appDo(rt.Method, own, as, url.Values{"csrf": {"forged"}}, false)
					if r.status != 403 {
						t.Fatalf("post without CSRF token: %d %s, want 403", r.status, r.body)
					}
				})
			}
			if rt.Access == app.AccessAdmin || rt.Access == app.AccessOwner || rt.Access == app.AccessResearch {
				t.Run("ErrViewerForbidden", func(t *testing.T) {
					r := e.appDo(rt.Method, own, &f.viewer, nil, true)
					if r.status != 403 {
						t.Fatalf("viewer on %s route: %d, want 403", rt.Access, r.status)
					}
				})
			}
			if rt.Access == app.AccessAdmin || rt.Access == app.AccessOwner {
				t.Run("ErrMemberForbidden", func(t *testing.T) {
					r := e.appDo(rt.Method, own, &f.member, nil, true)
					if r.status != 403 {
						t.Fatalf("member on %s route: %d, want 403", rt.Access, r.status)
					}
				})
			}
			if own != "/app"+rt.Path && workspaceAccess(rt.Access) {
				t.Run("ErrOtherOrgNotFound", func(t *testing.T) {
					// A form that would be valid, so only the object's owner can refuse it.
					r := e.appDo(rt.Method, other, &f.owner, url.Values{"role": {"member"}}, true)
					if r.status != 404 {
						t.Fatalf("another organisation's object: %d %.300s, want 404", r.status, r.body)
					}
				})
			}
		})
	}
}
