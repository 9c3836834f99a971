package server

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

func TestOAuthMetadata(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", "/.well-known/oauth-authorization-server", "", "")
	var md map[string]any
	r.json(t, &md)
	if r.status != 200 || md["issuer"] != testBaseURL || md["token_endpoint"] != testBaseURL+"/v1/oauth/token" ||
		md["registration_endpoint"] != testBaseURL+"/v1/oauth/register" || md["revocation_endpoint"] != testBaseURL+"/v1/oauth/revoke" ||
		md["authorization_endpoint"] != testBaseURL+"/v1/oauth/authorize" ||
		md["authorization_response_iss_parameter_supported"] != true || md["client_id_metadata_document_supported"] != true {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for field, want := range map[string]string{
		"response_types_supported":              "code",
		"grant_types_supported":                 "authorization_code refresh_token",
		"code_challenge_methods_supported":      "S256",
		"token_endpoint_auth_methods_supported": "none client_secret_basic client_secret_post",
		"scopes_supported":                      "studies:read studies:write studies:golive links:read links:write export:read",
	} {
		var got []string
		for _, v := range md[field].([]any) {
			got = append(got, v.(string))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s = %v, want %s", field, got, want)
		}
	}
	for _, res := range []string{pipeline.ResourceMCP, pipeline.ResourceAPI} {
		r := e.do("GET", "/.well-known/oauth-protected-resource"+res, "", "")
		var pr map[string]any
		r.json(t, &pr)
		if pr["resource"] != testBaseURL+res || pr["authorization_servers"].([]any)[0] != testBaseURL ||
			pr["bearer_methods_supported"].([]any)[0] != "header" || len(pr["scopes_supported"].([]any)) != 6 {
			t.Fatalf("%s: %s", res, r.body)
		}
	}
	off := mustServe(t, func(c *Config, _ *kv.Options) { c.NoClientMetadata = true })
	var offMD map[string]any
	off.do("GET", "/.well-known/oauth-authorization-server", "", "").json(t, &offMD)
	if _, ok := offMD["client_id_metadata_document_supported"]; ok || offMD["issuer"] != testBaseURL {
		t.Fatalf("metadata documents off, still advertised: %v", offMD)
	}
}

func TestOAuthRegister(t *testing.T) {
	e := mustServe(t)
	t.Run("OK_PublicIgnoresUnknownMetadata", func(t *testing.T) {
		out := e.mustRegister(t, `{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback","http://localhost:33418/cb"],
			"token_endpoint_auth_method":"none","application_type":"native","logo_uri":"https://x.example/l.png","contacts":["a@b.c"],
			"scope":"studies:read offline_access"}`)
		if !strings.HasPrefix(out["client_id"].(string), "svcc_") || out["client_secret"] != nil || out["scope"] != "studies:read" ||
			out["token_endpoint_auth_method"] != "none" || out["logo_uri"] != nil {
			t.Fatalf("%v", out)
		}
	})
	t.Run("OK_ConfidentialGetsSecret", func(t *testing.T) {
		out := e.mustRegister(t, `{"redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"client_secret_post"}`)
		if !strings.HasPrefix(out["client_secret"].(string), "svcs_") || out["client_secret_expires_at"] != float64(0) || out["scope"] == "" {
			t.Fatalf("%v", out)
		}
	})
	for _, tc := range []struct{ name, body, code string }{
		{"ErrNoRedirect", `{"client_name":"x"}`, "invalid_redirect_uri"},
		{"ErrHTTPNotLoopback", `{"redirect_uris":["http://evil.example/cb"]}`, "invalid_redirect_uri"},
		{"ErrJavascript", `{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri"},
		{"ErrFragment", `{"redirect_uris":["https://a.example/cb#f"]}`, "invalid_redirect_uri"},
		{"ErrWrongType", `{"redirect_uris":"https://a.example/cb"}`, "invalid_client_metadata"},
		{"ErrNotJSON", `redirect_uris=x`, "invalid_client_metadata"},
		{"ErrImplicit", `{"redirect_uris":["https://a.example/cb"],"response_types":["token"]}`, "invalid_client_metadata"},
		{"ErrPasswordGrant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["password"]}`, "invalid_client_metadata"},
		{"ErrAuthMethod", `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, "invalid_client_metadata"},
		{"ErrAgentRun", `{"redirect_uris":["https://a.example/cb"],"scope":"agent:run"}`, "invalid_client_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/v1/oauth/register", "", tc.body)
			var out map[string]any
			r.json(t, &out)
			if r.status != 400 || out["error"] != tc.code || out["error_description"] == "" || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %s %v", r.status, r.body, r.header)
			}
		})
	}
	t.Run("ErrRateLimitedPerAddress", func(t *testing.T) {
		limits := pipeline.DefaultRateLimits()
		limits.Registrations = 5
		limited := mustServe(t, withRateLimits(limits))
		body := `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"none"}`
		for i := range limits.Registrations {
			if r := limited.do("POST", "/v1/oauth/register", "", body); r.status != 201 {
				t.Fatalf("registration %d: %d %s", i, r.status, r.body)
			}
		}
		r := limited.do("POST", "/v1/oauth/register", "", body)
		if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"error":"rate_limited"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// TestOAuthEndToEndHTTP: register, authorize, approve, exchange, call REST, refresh,
// revoke: the whole flow over plain HTTP.
func TestOAuthEndToEndHTTP(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	conn := e.mustConnect(t, owner, pipeline.ResourceAPI, e.orgA.ID, kv.EnvLive, "studies:read export:read offline_access")
	if conn.token["token_type"] != "Bearer" || conn.token["expires_in"] != float64(600) || conn.token["scope"] != "export:read studies:read" ||
		!strings.HasPrefix(conn.access, "svca_") || !strings.HasPrefix(conn.refresh, "svcr_") {
		t.Fatalf("token answer %v", conn.token)
	}
	me := e.do("GET", "/v1/api/me", "Bearer "+conn.access, "")
	var who map[string]any
	me.json(t, &who)
	if me.status != 200 || who["credential_type"] != "oauth" || who["client_id"] != conn.clientID || who["grant_id"] == nil ||
		who["key_id"] != nil || who["key_name"] != nil || who["org_name"] != "Org A" || who["environment"] != "live" ||
		who["expires_at"] == nil || who["credits"] != nil {
		t.Fatalf("whoami %d %s", me.status, me.body)
	}
	if r := e.do("GET", "/v1/api/studies", "Bearer "+conn.access, ""); r.status != 200 {
		t.Fatalf("studies: %d %s", r.status, r.body)
	}
	// Scopes as granted: no studies:write.
	if r := e.do("POST", "/v1/api/studies", "Bearer "+conn.access, `{"guidance":"x"}`); r.status != 403 {
		t.Fatalf("write without studies:write: %d %s", r.status, r.body)
	}
	// A token for the REST API is 401 on MCP.
	r := e.do("POST", "/v1/mcp", "Bearer "+conn.access, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"Accept", "application/json, text/event-stream")
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `resource_metadata="`+testBaseURL+`/.well-known/oauth-protected-resource/v1/mcp"`) {
		t.Fatalf("REST token on MCP: %d %v %s", r.status, r.header, r.body)
	}
	// Refresh rotates; the spent refresh token, replayed, ends the connection.
	rr, next := e.tokenCall(t, "/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {conn.refresh}, "client_id": {conn.clientID}}, "")
	if rr.status != 200 || next["refresh_token"] == conn.refresh || rr.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("refresh: %d %s", rr.status, rr.body)
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+next["access_token"].(string), ""); r.status != 200 {
		t.Fatalf("refreshed token: %d", r.status)
	}
	rr, out := e.tokenCall(t, "/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {conn.refresh}, "client_id": {conn.clientID}}, "")
	if rr.status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("replayed refresh: %d %s", rr.status, rr.body)
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+next["access_token"].(string), ""); r.status != 401 {
		t.Fatalf("token of a connection ended by replay: %d", r.status)
	}
}

func TestOAuthRevokeEndsConnection(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvTest, "")
	conn := e.mustConnect(t, owner, pipeline.ResourceMCP, e.orgA.ID, kv.EnvTest, "")
	for _, tok := range []string{"svcr_unknown", "nonsense"} {
		if r, _ := e.tokenCall(t, "/v1/oauth/revoke", url.Values{"token": {tok}, "client_id": {conn.clientID}}, ""); r.status != 200 {
			t.Fatalf("unknown token: %d %s", r.status, r.body)
		}
	}
	if r, out := e.tokenCall(t, "/v1/oauth/revoke", url.Values{"token": {conn.refresh}}, ""); r.status != 401 || out["error"] != "invalid_client" {
		t.Fatalf("revoke without client: %d %s", r.status, r.body)
	}
	if r, _ := e.tokenCall(t, "/v1/oauth/revoke", url.Values{"token": {conn.refresh}, "token_type_hint": {"refresh_token"}, "client_id": {conn.clientID}}, ""); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/v1/mcp", "Bearer "+conn.access, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream")
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("access token after revoking the refresh token: %d %s", r.status, r.body)
	}
}

// TestOAuthConnectedApps: the list in Settings, who sees what, and ending one → the
// client's next call is 401.
func TestOAuthConnectedApps(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	mine := e.mustConnect(t, member, pipeline.ResourceMCP, e.orgA.ID, kv.EnvLive, "studies:read")
	ownerConn := e.mustConnect(t, owner, pipeline.ResourceAPI, e.orgA.ID, kv.EnvTest, "studies:read links:read")
	if r := e.do("POST", "/v1/mcp", "Bearer "+mine.access, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream"); r.status != 200 {
		t.Fatalf("MCP with its token: %d %s", r.status, r.body)
	}
	page := wantPage(t, owner.get(t, "/app/settings/apps"), 200, "Test tool", "m@example.com", "a@example.com", "links:read")
	if strings.Count(page, "data-connection=") != 2 {
		t.Fatalf("owner sees %d connections", strings.Count(page, "data-connection="))
	}
	page = wantPage(t, member.get(t, "/app/settings/apps"), 200, "m@example.com")
	if strings.Count(page, "data-connection=") != 1 || strings.Contains(page, "a@example.com</td>") {
		t.Fatalf("member's list:\n%s", page)
	}
	conns, _ := e.db.FindConnectionsFor(context.Background(), e.orgA.ID, owner.userID(t))
	var ownerID kv.ID
	for _, c := range conns {
		if c.ClientID == ownerConn.clientID {
			ownerID = c.ID
		}
	}
	if r := member.post(t, "/app/settings/apps/"+ownerID.String()+"/end", nil); r.status != 404 {
		t.Fatalf("member ended the owner's connection: %d", r.status)
	}
	wantRedirect(t, owner.post(t, "/app/settings/apps/"+ownerID.String()+"/end", nil), "/app/settings/apps?done=connection_ended")
	if r := e.do("GET", "/v1/api/me", "Bearer "+ownerConn.access, ""); r.status != 401 {
		t.Fatalf("ended connection still works: %d", r.status)
	}
	if r := e.do("POST", "/v1/mcp", "Bearer "+mine.access, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream"); r.status != 200 {
		t.Fatalf("the member's connection ended too: %d", r.status)
	}
}

// TestOAuthTokenRefusals is the token endpoint's table: every rule, RFC 6749's shape.
func TestOAuthTokenRefusals(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	clientID := e.mustPublicClient(t)
	conf := e.mustRegister(t, `{"redirect_uris":["`+testRedirect+`"],"token_endpoint_auth_method":"client_secret_basic"}`)
	confID, confSecret := conf["client_id"].(string), conf["client_secret"].(string)
	newCode := func(id string) (code, verifier string) {
		verifier, challenge := newVerifier()
		back := e.mustApprove(t, owner, authorizeQuery(id, challenge, "studies:read", testBaseURL+pipeline.ResourceAPI, "s"), e.orgA.ID, kv.EnvLive, nil)
		return back.Get("code"), verifier
	}
	exchange := func(code, verifier, id string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {id}}
	}
	code, verifier := newCode(clientID)
	with := func(base url.Values, k, v string) url.Values {
		out := url.Values{}
		for kk, vv := range base {
			out[kk] = vv
		}
		if v == "" {
			out.Del(k)
		} else {
			out.Set(k, v)
		}
		return out
	}
	good := exchange(code, verifier, clientID)
	for _, tc := range []struct {
		name   string
		form   url.Values
		basic  string
		status int
		code   string
	}{
		{"ErrNoGrantType", with(good, "grant_type", ""), "", 400, "invalid_request"},
		{"ErrPasswordGrant", with(good, "grant_type", "password"), "", 400, "unsupported_grant_type"},
		{"ErrClientCredentials", with(good, "grant_type", "client_credentials"), "", 400, "unsupported_grant_type"},
		{"ErrNoClient", with(good, "client_id", ""), "", 401, "invalid_client"},
		{"ErrUnknownClient", with(good, "client_id", "svcc_nobody"), "", 401, "invalid_client"},
		{"ErrNoVerifier", with(good, "code_verifier", ""), "", 400, "invalid_request"},
		{"ErrNoRedirect", with(good, "redirect_uri", ""), "", 400, "invalid_request"},
		{"ErrWrongVerifier", with(good, "code_verifier", strings.Repeat("x", 43)), "", 400, "invalid_grant"},
		{"ErrOtherRedirect", with(good, "redirect_uri", "http://127.0.0.1:5555/other"), "", 400, "invalid_grant"},
		{"ErrUnknownCode", with(good, "code", "svco_x"), "", 400, "invalid_grant"},
		{"ErrOtherResource", with(good, "resource", testBaseURL+pipeline.ResourceMCP), "", 400, "invalid_target"},
		{"ErrForeignResource", with(good, "resource", "https://elsewhere.example/v1/api"), "", 400, "invalid_target"},
		{"ErrConfidentialWithoutSecret", exchange(code, verifier, confID), "", 401, "invalid_client"},
		{"ErrConfidentialWrongSecret", with(exchange(code, verifier, ""), "client_id", ""), confID + ":" + confSecret + "x", 401, "invalid_client"},
		{"ErrCodeOfAnotherClient", with(exchange(code, verifier, ""), "client_id", ""), confID + ":" + confSecret, 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, out := e.tokenCall(t, "/v1/oauth/token", tc.form, tc.basic)
			if r.status != tc.status || out["error"] != tc.code || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if tc.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	t.Run("ErrDuplicateParameter", func(t *testing.T) {
		form := with(good, "grant_type", "")
		form["grant_type"] = []string{"authorization_code", "authorization_code"}
		if r, out := e.tokenCall(t, "/v1/oauth/token", form, ""); r.status != 400 || out["error"] != "invalid_request" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrNotAForm", func(t *testing.T) {
		r := e.do("POST", "/v1/oauth/token", "", `{"grant_type":"authorization_code"}`)
		if r.status != 400 || !strings.Contains(string(r.body), `"error":"invalid_request"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	// The code still works after all those refusals, once.
	if r, _ := e.tokenCall(t, "/v1/oauth/token", good, ""); r.status != 200 {
		t.Fatalf("good exchange: %d %s", r.status, r.body)
	}
	t.Run("ErrCodeReplayEndsConnection", func(t *testing.T) {
		if r, out := e.tokenCall(t, "/v1/oauth/token", good, ""); r.status != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if list, _ := e.db.FindConnectionsFor(context.Background(), e.orgA.ID, owner.userID(t)); len(list) != 0 {
			t.Fatalf("connection survived its code's replay: %+v", list)
		}
	})
	t.Run("OK_ConfidentialBasicAndPost", func(t *testing.T) {
		code, verifier := newCode(confID)
		r, tok := e.tokenCall(t, "/v1/oauth/token", with(exchange(code, verifier, ""), "client_id", ""), confID+":"+confSecret)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {confID}, "client_secret": {confSecret}}
		form.Set("scope", "studies:read studies:write")
		if r, out := e.tokenCall(t, "/v1/oauth/token", form, ""); r.status != 400 || out["error"] != "invalid_scope" {
			t.Fatalf("refresh widening the grant: %d %s", r.status, r.body)
		}
		form.Set("scope", "studies:read offline_access") // the refused refresh spent nothing
		if r, _ := e.tokenCall(t, "/v1/oauth/token", form, ""); r.status != 200 {
			t.Fatalf("refresh with client_secret_post: %d %s", r.status, r.body)
		}
	})
	t.Run("ErrCodeAfterFiveMinutes", func(t *testing.T) {
		code, verifier := newCode(clientID)
		clock.Advance(5 * time.Minute)
		if r, out := e.tokenCall(t, "/v1/oauth/token", exchange(code, verifier, clientID), ""); r.status != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OK_AccessTokenLastsTenMinutes", func(t *testing.T) {
		code, verifier := newCode(clientID)
		_, tok := e.tokenCall(t, "/v1/oauth/token", exchange(code, verifier, clientID), "")
		access := tok["access_token"].(string)
		clock.Advance(10*time.Minute - time.Second)
		if r := e.do("GET", "/v1/api/me", "Bearer "+access, ""); r.status != 200 {
			t.Fatalf("before ten minutes: %d", r.status)
		}
		clock.Advance(time.Second)
		if r := e.do("GET", "/v1/api/me", "Bearer "+access, ""); r.status != 401 {
			t.Fatalf("after ten minutes: %d", r.status)
		}
	})
}

// userID returns the signed-in user's id.
func (u *appClient) userID(t *testing.T) kv.ID {
	t.Helper()
	auth, err := u.e.db.AuthenticateSession(context.Background(), u.cookie, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return auth.User.ID
}
