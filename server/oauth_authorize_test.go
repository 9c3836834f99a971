package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestOAuthAuthorizeRefusals is DECISIONS §15's table: a bad client or redirect URI is
// an error page (never a redirect); every other refusal goes back to the client with
// error, state and iss.
func TestOAuthAuthorizeRefusals(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	clientID := e.mustPublicClient(t)
	_, challenge := newVerifier()
	good := authorizeQuery(clientID, challenge, "studies:read", testBaseURL+pipeline.ResourceMCP, "xyz")
	with := func(k, v string) string {
		q := url.Values{}
		for kk, vv := range good {
			q[kk] = vv
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q.Encode()
	}
	for _, tc := range []struct{ name, query, page string }{
		{"ErrNoClient", with("client_id", ""), "no client_id"},
		{"ErrUnknownClient", with("client_id", "svcc_unknown"), "not known"},
		{"ErrNoRedirect", with("redirect_uri", ""), "no redirect_uri"},
		{"ErrUnregisteredRedirect", with("redirect_uri", "https://evil.example/cb"), "not one the app registered"},
		{"ErrLoopbackOtherPath", with("redirect_uri", "http://127.0.0.1:5555/other"), "not one the app registered"},
		{"ErrTwoRedirects", good.Encode() + "&redirect_uri=" + url.QueryEscape(testRedirect), "more than once"},
		{"ErrBadEncoding", "client_id=%zz", "not validly encoded"},
		{"ErrTooLong", with("scope", strings.Repeat("studies:read ", 200)), "too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := owner.get(t, "/v1/oauth/authorize?"+tc.query)
			if r.status != 400 || r.header.Get("Location") != "" || !strings.Contains(string(r.body), tc.page) ||
				!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
				t.Fatalf("%d Location %q:\n%s", r.status, r.header.Get("Location"), r.body)
			}
		})
	}
	for _, tc := range []struct{ name, query, code string }{
		{"ErrNoPKCE", with("code_challenge", ""), "invalid_request"},
		{"ErrPlainPKCE", with("code_challenge_method", "plain"), "invalid_request"},
		{"ErrNoPKCEMethod", with("code_challenge_method", ""), "invalid_request"},
		{"ErrShortChallenge", with("code_challenge", "abc"), "invalid_request"},
		{"ErrTokenResponse", with("response_type", "token"), "unsupported_response_type"},
		{"ErrAgentRun", with("scope", "studies:read agent:run"), "invalid_scope"},
		{"ErrForeignResource", with("resource", "https://other.example/v1/mcp"), "invalid_target"},
		{"ErrA2AResource", with("resource", testBaseURL+"/v1/a2a"), "invalid_target"},
		{"ErrTwoStates", good.Encode() + "&state=again", "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc := wantRedirect(t, owner.get(t, "/v1/oauth/authorize?"+tc.query), testRedirect+"?")
			back, _ := url.Parse(loc)
			q := back.Query()
			if q.Get("error") != tc.code || q.Get("error_description") == "" || q.Get("iss") != testBaseURL ||
				(tc.name != "ErrTwoStates" && q.Get("state") != "xyz") {
				t.Fatalf("redirect %s", loc)
			}
		})
	}
	consentScopes := func(t *testing.T, query string) string {
		t.Helper()
		loc := wantRedirect(t, owner.get(t, "/v1/oauth/authorize?"+query), "/app/oauth/authorize?")
		return wantPage(t, owner.get(t, loc), 200, "Test tool")
	}
	t.Run("OK_UnknownScopesDropped", func(t *testing.T) {
		page := consentScopes(t, with("scope", "offline_access studies:read openid"))
		if !strings.Contains(page, `value="studies:read" checked`) || strings.Contains(page, `value="offline_access"`) {
			t.Fatalf("consent page:\n%s", page)
		}
	})
	t.Run("OK_NoScopeMeansRegistered", func(t *testing.T) {
		page := consentScopes(t, with("scope", ""))
		for _, sc := range kv.OAuthScopes {
			if !strings.Contains(page, `value="`+sc+`" checked`) {
				t.Fatalf("%s not offered:\n%s", sc, page)
			}
		}
	})
	t.Run("OK_TrailingSlashResource", func(t *testing.T) {
		consentScopes(t, with("resource", testBaseURL+pipeline.ResourceAPI+"/"))
	})
	t.Run("OK_ConsentFormMayLeadToTheClient", func(t *testing.T) {
		loc := wantRedirect(t, owner.get(t, "/v1/oauth/authorize?"+good.Encode()), "/app/oauth/authorize?")
		r := owner.get(t, loc)
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:5555") {
			t.Fatalf("CSP %q", csp)
		}
	})
	t.Run("OK_Deny", func(t *testing.T) {
		form := url.Values{"decision": {"deny"}}
		for k, v := range good {
			form[k] = v
		}
		loc := wantRedirect(t, owner.post(t, "/app/oauth/authorize", form), testRedirect+"?")
		back, _ := url.Parse(loc)
		if q := back.Query(); q.Get("error") != "access_denied" || q.Get("state") != "xyz" || q.Get("iss") != testBaseURL {
			t.Fatalf("%s", loc)
		}
	})
	t.Run("ErrSignedOutGoesToSignIn", func(t *testing.T) {
		r := e.do("GET", "/v1/oauth/authorize?"+good.Encode(), "", "")
		_ = r // http.DefaultClient follows: the sign-in page, returning to the consent page
		if r.status != 200 || !strings.Contains(string(r.body), `name="next" value="/app/oauth/authorize?`) {
			t.Fatalf("%d:\n%s", r.status, r.body)
		}
	})
}

// TestOAuthConsentRules: fewer scopes than asked, the role's limits, nothing ticked,
// and a workspace that requires two-step.
func TestOAuthConsentRules(t *testing.T) {
	e := mustServe(t)
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	clientID := e.mustPublicClient(t)
	_, challenge := newVerifier()
	q := authorizeQuery(clientID, challenge, "studies:read export:read studies:golive", testBaseURL+pipeline.ResourceMCP, "s")
	loc := wantRedirect(t, member.get(t, "/v1/oauth/authorize?"+q.Encode()), "/app/oauth/authorize?")
	page := wantPage(t, member.get(t, loc), 200, "owners and admins only")
	if !strings.Contains(page, `value="export:read" disabled`) || !strings.Contains(page, `value="studies:read" checked`) {
		t.Fatalf("a member's consent page:\n%s", page)
	}
	post := func(grant ...string) response {
		form := url.Values{"decision": {"approve"}, "org": {e.orgA.ID.String()}, "env": {"test"}, "grant": grant}
		for k, v := range q {
			form[k] = v
		}
		return member.post(t, "/app/oauth/authorize", form)
	}
	wantPage(t, post(), 422, "Tick at least one permission")
	wantPage(t, post("export:read"), 403, "cannot grant export:read")
	wantPage(t, post("links:write"), 422, "Tick at least one") // never more than asked
	back := wantRedirect(t, post("studies:read"), testRedirect+"?code=")
	if !strings.Contains(back, "state=s") {
		t.Fatal(back)
	}

	t.Run("OK_TwoStepRequiredFirst", func(t *testing.T) {
		owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
		if _, err := e.db.SetRequireMFA(context.Background(), kv.RequireMFAInput{OrgID: e.orgB.ID, Actor: e.orgBOwner(t), On: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.AddMember(context.Background(), e.orgB.ID, "a@example.com", kv.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		e.acceptEmailCodes(e.orgB.ID, "b@example.com") // the check below is passed by email
		form := url.Values{"decision": {"approve"}, "org": {e.orgB.ID.String()}, "env": {"live"}, "grant": {"studies:read"}}
		for k, v := range q {
			form[k] = v
		}
		loc := wantRedirect(t, owner.post(t, "/app/oauth/authorize", form), "/app/twostep?next=")
		next, _ := url.Parse(loc)
		back := next.Query().Get("next")
		if !strings.HasPrefix(back, "/app/oauth/authorize?") {
			t.Fatalf("two-step does not return to the consent page: %s", loc)
		}
		// The person passes two-step (a code by email) and comes back to approve.
		ctx := context.Background()
		code, err := e.db.RequestTwoStepEmailCode(ctx, owner.cookie)
		if err != nil {
			t.Fatal(err)
		}
		passed, err := e.db.PassTwoStep(ctx, kv.PassTwoStepInput{Token: owner.cookie, Method: kv.MethodEmail, Code: code.Code})
		if err != nil {
			t.Fatal(err)
		}
		owner.cookie, owner.csrf = passed.Token, passed.Session.CSRF
		wantPage(t, owner.get(t, back), 200, "Permissions in Org B (live data)")
		form.Del("csrf") // the rotated session has its own
		wantRedirect(t, owner.post(t, "/app/oauth/authorize", form), testRedirect+"?code=")
	})
}

// orgBOwner returns the id of organisation B's owner.
func (e *testEnv) orgBOwner(t *testing.T) kv.ID {
	t.Helper()
	u, err := e.db.FindUserByEmail(context.Background(), "b@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
