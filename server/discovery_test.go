package server

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// listenerPort is the port the test server listens on.
func listenerPort(t *testing.T, e *testEnv) string {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// checkDiscoveryAt asserts that a client reaching the server under the Host name host
// is told base in the 401's challenge of both protected surfaces, in their
// protected-resource documents (resource, authorization server) and in the
// authorization server's document (issuer and every endpoint).
func checkDiscoveryAt(t *testing.T, e *testEnv, host, base string) {
	t.Helper()
	for _, p := range []struct{ method, probe, resource string }{
		{"POST", "/v1/mcp", pipeline.ResourceMCP},
		{"GET", "/v1/mcp", pipeline.ResourceMCP},
		{"GET", "/v1/api/me", pipeline.ResourceAPI},
	} {
		r := e.do(p.method, p.probe, "", "", "Host", host)
		want := `Bearer resource_metadata="` + base + "/.well-known/oauth-protected-resource" + p.resource + `"`
		if got := r.header.Get("WWW-Authenticate"); r.status != 401 || !strings.HasPrefix(got, want) {
			t.Fatalf("%s %s at %s: %d, WWW-Authenticate %q, want %q", p.method, p.probe, host, r.status, got, want)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		r = e.do("GET", "/.well-known/oauth-protected-resource"+p.resource, "", "", "Host", host)
		r.json(t, &doc)
		if r.status != 200 || doc.Resource != base+p.resource || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != base {
			t.Fatalf("protected resource %s at %s: %d %s, want %s", p.resource, host, r.status, r.body, base)
		}
	}
	var md map[string]any
	r := e.do("GET", "/.well-known/oauth-authorization-server", "", "", "Host", host)
	r.json(t, &md)
	for field, want := range map[string]string{
		"issuer":                 base,
		"authorization_endpoint": base + "/v1/oauth/authorize",
		"token_endpoint":         base + "/v1/oauth/token",
		"registration_endpoint":  base + "/v1/oauth/register",
		"revocation_endpoint":    base + "/v1/oauth/revoke",
	} {
		if md[field] != want {
			t.Fatalf("authorization server at %s: %s = %v, want %s", host, field, md[field], want)
		}
	}
}

// TestDiscoveryFollowsLoopbackOrigin: with no configured base URL (it follows the
// listen address: http://localhost:PORT), a client that reached the server by another
// loopback name on the listening port is answered for the origin it used, so that a
// client given http://127.0.0.1:PORT/v1/mcp finds that very resource (mcp-remote and
// the MCP TypeScript SDK refuse any other). Any other Host, or another port, gets the
// base URL; a configured base URL is kept whatever the Host.
func TestDiscoveryFollowsLoopbackOrigin(t *testing.T) {
	e := mustServe(t, withDerivedBaseURL())
	port := listenerPort(t, e)
	base := "http://localhost:" + port
	for _, c := range []struct{ name, host, want string }{
		{"OK_IPv4Loopback", "127.0.0.1:" + port, "http://127.0.0.1:" + port},
		{"OK_Localhost", "localhost:" + port, base},
		{"OK_IPv6Loopback", "[::1]:" + port, "http://[::1]:" + port},
		{"OK_AnyOf127/8", "127.9.8.7:" + port, "http://127.9.8.7:" + port},
		{"Base_OtherHost", "research.example:" + port, base},
		{"Base_PrivateAddress", "192.168.1.20:" + port, base},
		{"Base_OtherPort", "127.0.0.1:1", base},
		{"Base_NoPort", "127.0.0.1", base},
	} {
		t.Run(c.name, func(t *testing.T) { checkDiscoveryAt(t, e, c.host, c.want) })
	}
	t.Run("Base_Configured", func(t *testing.T) {
		conf := mustServe(t, withListenerBaseURL())
		checkDiscoveryAt(t, conf, "localhost:"+listenerPort(t, conf), conf.url)
	})
}

// TestResourceIndicatorOrigins: a resource indicator (RFC 8707) names a protected
// surface at the base URL, or with no configured base URL at any loopback origin on
// the listening port; nothing else.
func TestResourceIndicatorOrigins(t *testing.T) {
	e := mustServe(t, withDerivedBaseURL())
	port := listenerPort(t, e)
	conf := mustServe(t, withListenerBaseURL())
	confPort := listenerPort(t, conf)
	for _, c := range []struct {
		name     string
		srv      *Server
		resource string
		want     string
	}{
		{"OK_Base", e.srv, "http://localhost:" + port + "/v1/mcp", pipeline.ResourceMCP},
		{"OK_IPv4Loopback", e.srv, "http://127.0.0.1:" + port + "/v1/mcp/", pipeline.ResourceMCP},
		{"OK_IPv6Loopback", e.srv, "http://[::1]:" + port + "/v1/api", pipeline.ResourceAPI},
		{"ErrOtherPort", e.srv, "http://127.0.0.1:1/v1/mcp", ""},
		{"ErrOtherScheme", e.srv, "https://127.0.0.1:" + port + "/v1/mcp", ""},
		{"ErrOtherHost", e.srv, "http://research.example:" + port + "/v1/mcp", ""},
		{"ErrUserInfo", e.srv, "http://u@127.0.0.1:" + port + "/v1/mcp", ""},
		{"ErrPathBefore", e.srv, "http://127.0.0.1:" + port + "/x/v1/mcp", ""},
		{"ErrOtherSurface", e.srv, "http://127.0.0.1:" + port + "/v1/a2a", ""},
		{"OK_Configured", conf.srv, conf.url + "/v1/mcp", pipeline.ResourceMCP},
		{"ErrConfiguredOtherLoopbackName", conf.srv, "http://localhost:" + confPort + "/v1/mcp", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.srv.clients.ResourcePath(c.resource); got != c.want {
				t.Fatalf("resourcePath(%q) = %q, want %q", c.resource, got, c.want)
			}
		})
	}
}

// TestOAuthAtLoopbackOrigin: with no configured base URL, a client that found the
// server at http://127.0.0.1:PORT (not the base's localhost) is authorized there: the
// redirect back names that issuer (RFC 9207), the code is exchanged at localhost with
// the resource named there, and the token works at both names.
func TestOAuthAtLoopbackOrigin(t *testing.T) {
	e := mustServe(t, withDerivedBaseURL())
	localhost := "localhost:" + listenerPort(t, e)
	u := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	clientID := e.mustPublicClient(t)
	verifier, challenge := newVerifier()
	back := e.mustApprove(t, u, authorizeQuery(clientID, challenge, "", e.url+pipeline.ResourceMCP, "st-1"), e.orgA.ID, kv.EnvLive, nil)
	if back.Get("iss") != e.url || back.Get("code") == "" {
		t.Fatalf("redirect back: %v, want iss %s", back, e.url)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {testRedirect},
		"code_verifier": {verifier}, "client_id": {clientID}, "resource": {"http://" + localhost + pipeline.ResourceMCP}}
	r := e.do("POST", "/v1/oauth/token", "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Host", localhost)
	var tok map[string]any
	r.json(t, &tok)
	access, _ := tok["access_token"].(string)
	if r.status != 200 || access == "" {
		t.Fatalf("token at %s: %d %s", localhost, r.status, r.body)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	for _, host := range []string{localhost, strings.TrimPrefix(e.url, "http://")} {
		r := e.do("POST", "/v1/mcp", "Bearer "+access, call, "Accept", acceptBoth, "Host", host)
		if res := decodeRPC(t, r); r.status != 200 || res.Error != nil || !strings.Contains(string(r.body), `"credential_type":"oauth"`) {
			t.Fatalf("whoami at %s: %d %s", host, r.status, r.body)
		}
	}
	t.Run("ErrForeignResource", func(t *testing.T) {
		_, challenge := newVerifier()
		q := authorizeQuery(clientID, challenge, "", "http://research.example:"+listenerPort(t, e)+pipeline.ResourceMCP, "st-2")
		loc := wantRedirect(t, u.get(t, "/v1/oauth/authorize?"+q.Encode()), testRedirect+"?")
		back, err := url.Parse(loc)
		if err != nil || back.Query().Get("error") != "invalid_target" || back.Query().Get("iss") != e.url {
			t.Fatalf("redirect back %s", loc)
		}
	})
}
