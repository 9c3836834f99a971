package server

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestOAuthTokenSurfaces: an access token works on the resource it was issued for and
// nowhere else (401 on the other research surface and on the account access API, 403
// on A2A, which takes API keys only); a refresh token is no bearer credential.
func TestOAuthTokenSurfaces(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	mcpConn := e.mustConnect(t, owner, pipeline.ResourceMCP, e.orgA.ID, kv.EnvLive, "")
	mcpCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	accept := []string{"Accept", "application/json, text/event-stream"}
	if r := e.do("POST", "/v1/mcp", "Bearer "+mcpConn.access, mcpCall, accept...); r.status != 200 || !strings.Contains(string(r.body), `"credential_type":"oauth"`) {
		t.Fatalf("MCP token on MCP: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		name, method, path, auth, body string
		status                         int
		wwwAuth                        string
	}{
		{"ErrMCPTokenOnREST", "GET", "/v1/api/me", "Bearer " + mcpConn.access, "", 401, `resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource/v1/api", error="invalid_token"`},
		{"ErrMCPTokenOnA2A", "POST", "/v1/a2a", "Bearer " + mcpConn.access, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, 403, ""},
		{"ErrMCPTokenOnAccessAPI", "POST", "/v1/access/verify-email", "Bearer " + mcpConn.access, `{}`, 401, ""},
		{"ErrRefreshTokenAsBearer", "POST", "/v1/mcp", "Bearer " + mcpConn.refresh, mcpCall, 401, `error="invalid_token"`},
		{"ErrNoToken", "POST", "/v1/mcp", "", mcpCall, 401, `Bearer resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource/v1/mcp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.auth, tc.body, append(accept, "A2A-Version", "1.0")...)
			if r.status != tc.status || !strings.Contains(r.header.Get("WWW-Authenticate"), tc.wwwAuth) {
				t.Fatalf("%d %v %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
			}
		})
	}
}

// TestOAuthRateLimits: each connection has its own budget, as a key does, and the
// token endpoint is limited per client address in RFC 6749's shape.
func TestOAuthRateLimits(t *testing.T) {
	e := mustServe(t, withRateLimits(pipeline.RateLimits{Read: 3, Write: 20, OrgRead: 100, OrgWrite: 100, IP: 5, FailedAuth: 100, Window: time.Minute}))
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	one := e.mustConnect(t, owner, pipeline.ResourceAPI, e.orgA.ID, kv.EnvLive, "studies:read")
	two := e.mustConnect(t, owner, pipeline.ResourceAPI, e.orgA.ID, kv.EnvLive, "studies:read")
	for i := range 3 {
		if r := e.do("GET", "/v1/api/me", "Bearer "+one.access, ""); r.status != 200 || r.header.Get("RateLimit") == "" {
			t.Fatalf("read %d: %d %v", i, r.status, r.header)
		}
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+one.access, ""); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("fourth read of one connection: %d", r.status)
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+two.access, ""); r.status != 200 {
		t.Fatalf("another connection shares the budget: %d", r.status)
	}
	// Each mustConnect made two requests under this budget (authorize, token; its
	// registration counts against registration's own); the fifth is the last this
	// minute.
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {two.refresh}, "client_id": {two.clientID}}
	if r, _ := e.tokenCall(t, "/v1/oauth/token", form, ""); r.status != 200 {
		t.Fatalf("fifth request: %d %s", r.status, r.body)
	}
	_, challenge := newVerifier()
	if r := owner.get(t, "/v1/oauth/authorize?"+authorizeQuery(one.clientID, challenge, "", "", "s").Encode()); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("authorize past the limit: %d", r.status)
	}
	r, out := e.tokenCall(t, "/v1/oauth/token", form, "")
	if r.status != 429 || out["error"] != "rate_limited" || r.header.Get("Retry-After") == "" || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("seventh request: %d %v %s", r.status, r.header, r.body)
	}
}
