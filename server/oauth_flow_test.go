package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
)

// Helpers that drive the authorization server over HTTP as a client and a person
// would: register, authorize, approve on the consent page, exchange, refresh.

const testRedirect = "http://127.0.0.1:5555/callback"

func newVerifier() (verifier, challenge string) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	verifier = base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// mustRegister registers a client with body and returns the answer.
func (e *testEnv) mustRegister(t *testing.T, body string) map[string]any {
	t.Helper()
	r := e.do("POST", "/v1/oauth/register", "", body)
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	var out map[string]any
	r.json(t, &out)
	return out
}

// mustPublicClient registers a public client redirecting to testRedirect.
func (e *testEnv) mustPublicClient(t *testing.T) string {
	t.Helper()
	out := e.mustRegister(t, `{"client_name":"Test tool","redirect_uris":["`+testRedirect+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`)
	return out["client_id"].(string)
}

// authorizeQuery builds an authorization request's query.
func authorizeQuery(clientID, challenge, scope, resource, state string) url.Values {
	v := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {testRedirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {state}}
	if scope != "" {
		v.Set("scope", scope)
	}
	if resource != "" {
		v.Set("resource", resource)
	}
	return v
}

// mustApprove runs GET /v1/oauth/authorize, the consent page and its approval as u in
// org/env, granting grant (nil: everything pre-ticked), and returns the redirect back
// to the client, parsed.
func (e *testEnv) mustApprove(t *testing.T, u *appClient, q url.Values, org kv.ID, env kv.Environment, grant []string) url.Values {
	t.Helper()
	return e.mustApproveTo(t, u, q, org, env, grant, testRedirect)
}

// mustApproveTo is mustApprove for a client whose redirect back goes to redirect.
func (e *testEnv) mustApproveTo(t *testing.T, u *appClient, q url.Values, org kv.ID, env kv.Environment, grant []string, redirect string) url.Values {
	t.Helper()
	loc := wantRedirect(t, u.get(t, "/v1/oauth/authorize?"+q.Encode()), "/app/oauth/authorize?")
	page := wantPage(t, u.get(t, loc), 200, "Connect")
	form := url.Values{"org": {org.String()}, "env": {string(env)}, "decision": {"approve"}}
	for k, v := range q {
		form[k] = v
	}
	if grant == nil {
		for _, sc := range kv.OAuthScopes {
			if strings.Contains(page, `name="grant" value="`+sc+`" checked`) {
				grant = append(grant, sc)
			}
		}
	}
	form["grant"] = grant
	back := wantRedirect(t, u.post(t, "/app/oauth/authorize", form), redirect+"?")
	pu, err := url.Parse(back)
	if err != nil {
		t.Fatal(err)
	}
	return pu.Query()
}

// tokenCall posts a token or revocation form; basic, when set, is "id:secret".
func (e *testEnv) tokenCall(t *testing.T, path string, form url.Values, basic string) (response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", e.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != "" {
		id, secret, _ := strings.Cut(basic, ":")
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r response
	r.status, r.header = resp.StatusCode, resp.Header
	if r.body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(r.body) > 0 {
		r.json(t, &out)
	}
	return r, out
}

// oauthConnected is a client that went through the whole flow.
type oauthConnected struct {
	clientID, access, refresh string
	token                     map[string]any
}

// mustConnect registers a public client, has u approve it for resource (a path:
// resourceMCP or resourceAPI) in org/env, and exchanges the code.
func (e *testEnv) mustConnect(t *testing.T, u *appClient, resource string, org kv.ID, env kv.Environment, scope string) oauthConnected {
	t.Helper()
	clientID := e.mustPublicClient(t)
	verifier, challenge := newVerifier()
	back := e.mustApprove(t, u, authorizeQuery(clientID, challenge, scope, testBaseURL+resource, "st-1"), org, env, nil)
	if back.Get("state") != "st-1" || back.Get("iss") != testBaseURL || back.Get("code") == "" {
		t.Fatalf("redirect back: %v", back)
	}
	r, tok := e.tokenCall(t, "/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")},
		"redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {clientID}}, "")
	if r.status != 200 {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	return oauthConnected{clientID: clientID, access: tok["access_token"].(string), refresh: tok["refresh_token"].(string), token: tok}
}
