package server

import (
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestOAuthAuthorizeRedirectRules: the authorization endpoint holds a presented
// redirect_uri to the rules registration holds it to: an exact match of a registered
// URI, any port only for a loopback http URI (RFC 8252 §7.3), and never user
// information or a fragment. A refused URI is an error page; nothing is sent there,
// neither from the authorization request nor from the consent form.
func TestOAuthAuthorizeRedirectRules(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	const loopback, web = "http://127.0.0.1:19299/cb", "https://app.example/cb"
	out := e.mustRegister(t, `{"client_name":"Rules tool","redirect_uris":["`+loopback+`","`+web+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code"]}`)
	clientID := out["client_id"].(string)
	_, challenge := newVerifier()
	query := func(redirect string) url.Values {
		q := authorizeQuery(clientID, challenge, "studies:read", testBaseURL+pipeline.ResourceMCP, "xyz")
		q.Set("redirect_uri", redirect)
		return q
	}
	for _, tc := range []struct{ name, redirect, page string }{
		{"ErrUserInfo", "http://evil.example@127.0.0.1:19299/cb", "user information"},
		{"ErrUserInfoOtherPort", "http://evil.example@127.0.0.1:8080/cb", "user information"},
		{"ErrUserAndPassword", "http://u:p@127.0.0.1:19299/cb", "user information"},
		{"ErrEmptyUserInfo", "http://@127.0.0.1:19299/cb", "user information"},
		{"ErrUserInfoHTTPS", "https://evil.example@app.example/cb", "user information"},
		{"ErrFragment", loopback + "#frag", "fragment"},
		{"ErrHTTPSOtherPort", "https://app.example:8443/cb", "not one the app registered"},
		{"ErrLoopbackOtherHost", "http://localhost:19299/cb", "not one the app registered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := query(tc.redirect)
			r := owner.get(t, "/v1/oauth/authorize?"+q.Encode())
			if r.status != 400 || r.header.Get("Location") != "" || !strings.Contains(string(r.body), tc.page) ||
				!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
				t.Fatalf("%d Location %q:\n%s", r.status, r.header.Get("Location"), r.body)
			}
			// The consent form, posted directly, refuses it the same way.
			form := url.Values{"decision": {"deny"}, "csrf": {owner.csrf}}
			for k, v := range q {
				form[k] = v
			}
			r = owner.post(t, "/app/oauth/authorize", form)
			if r.status != 400 || r.header.Get("Location") != "" || !strings.Contains(string(r.body), tc.page) {
				t.Fatalf("consent form: %d Location %q:\n%s", r.status, r.header.Get("Location"), r.body)
			}
		})
	}
	for _, tc := range []struct{ name, redirect string }{
		{"OK_Exact", loopback},
		{"OK_LoopbackAnyPort", "http://127.0.0.1:8080/cb"},
		{"OK_HTTPSExact", web},
	} {
		t.Run(tc.name, func(t *testing.T) {
			back := e.mustApproveTo(t, owner, query(tc.redirect), e.orgA.ID, kv.EnvLive, nil, tc.redirect)
			if back.Get("code") == "" || back.Get("state") != "xyz" {
				t.Fatalf("redirect back %v", back)
			}
		})
	}
}
