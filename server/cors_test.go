package server

import (
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

func TestParseCORSOrigins(t *testing.T) {
	for _, c := range []struct {
		name, in, want, err string
	}{
		{"OK_Empty", "", "", ""},
		{"OK_Several", " http://localhost:6274 , https://Inspector.Example.com ", "http://localhost:6274 https://inspector.example.com", ""},
		{"OK_DefaultPortAndSlashDropped", "https://inspector.example.com:443/,http://localhost:6274", "https://inspector.example.com http://localhost:6274", ""},
		{"OK_Duplicate", "http://localhost:6274,http://LOCALHOST:6274", "http://localhost:6274", ""},
		{"ErrWildcard", "*", "", `"*": wildcards are not accepted`},
		{"ErrWildcardHost", "https://*.example.com", "", "wildcards are not accepted"},
		{"ErrPath", "https://inspector.example.com/app", "", `"https://inspector.example.com/app" is not an origin`},
		{"ErrNoScheme", "localhost:6274", "", "is not an origin"},
		{"ErrOtherScheme", "file:///tmp/x.html", "", "is not an origin"},
		{"ErrNull", "null", "", "is not an origin"},
		{"ErrUserInfo", "https://u@inspector.example.com", "", "is not an origin"},
		{"ErrQuery", "https://inspector.example.com?x=1", "", "is not an origin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := pipeline.ParseCORSOrigins(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseCORSOrigins(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != c.want {
				t.Fatalf("ParseCORSOrigins(%q) = %v, %v; want %s", c.in, got, err, c.want)
			}
		})
	}
}

// TestCORSPublicEndpoints: discovery and the authorization server's JSON endpoints
// answer any origin's preflight, for the methods the path serves and the headers asked
// for, and let any origin read their answers, refusals included; never with
// credentials. Other paths answer OPTIONS as before, with no CORS header.
func TestCORSPublicEndpoints(t *testing.T) {
	e := mustServe(t)
	const origin = "https://some-client.example"
	for _, c := range []struct{ path, method string }{
		{"/.well-known/oauth-protected-resource/v1/mcp", "GET"},
		{"/.well-known/oauth-protected-resource/v1/api", "GET"},
		{"/.well-known/oauth-authorization-server", "GET"},
		{"/v1/oauth/register", "POST"},
		{"/v1/oauth/token", "POST"},
		{"/v1/oauth/revoke", "POST"},
	} {
		t.Run("OK_Preflight"+c.path, func(t *testing.T) {
			r := e.do("OPTIONS", c.path, "", "", "Origin", origin, "Access-Control-Request-Method", c.method,
				"Access-Control-Request-Headers", "mcp-protocol-version, content-type, authorization")
			h := r.header
			if r.status != 204 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), c.method) ||
				h.Get("Access-Control-Allow-Headers") != "mcp-protocol-version, content-type, authorization" ||
				h.Get("Access-Control-Allow-Credentials") != "" || h.Get("Access-Control-Max-Age") == "" {
				t.Fatalf("preflight %s: %d %v", c.path, r.status, h)
			}
		})
		t.Run("OK_PlainOptions"+c.path, func(t *testing.T) {
			r := e.do("OPTIONS", c.path, "", "")
			if r.status != 204 || !strings.Contains(r.header.Get("Allow"), c.method) || r.header.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("OPTIONS %s: %d %v", c.path, r.status, r.header)
			}
		})
		t.Run("OK_Answer"+c.path, func(t *testing.T) {
			body := ""
			if c.method == "POST" {
				body = `{}` // refused: the refusal must be readable too
			}
			r := e.do(c.method, c.path, "", body, "Origin", origin)
			if r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Access-Control-Allow-Credentials") != "" {
				t.Fatalf("%s %s: %d %v", c.method, c.path, r.status, r.header)
			}
		})
	}
	for _, path := range []string{"/v1/api/studies", "/v1/a2a", "/v1/oauth/authorize"} {
		t.Run("ErrNotPublic"+path, func(t *testing.T) {
			r := e.do("OPTIONS", path, "", "", "Origin", origin, "Access-Control-Request-Method", "POST")
			if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("preflight %s: %d %v", path, r.status, r.header)
			}
		})
	}
}

// TestCORSMCP: the MCP endpoint answers CORS for the origins the operator listed only,
// with the listed origin itself (never an echo of the request's Origin), the headers an
// MCP client must read exposed, its 401 included; a listed origin also passes the
// DNS-rebinding Origin check; an unlisted origin's preflight is refused and nothing it
// sends is answered with CORS headers.
func TestCORSMCP(t *testing.T) {
	const listed = "http://localhost:6274"
	e := mustServe(t, func(c *Config, _ *kv.Options) { c.CORSOrigins = []string{listed, "https://inspector.example.com"} })
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	wantExposed := []string{"Mcp-Session-Id", "WWW-Authenticate", "Mcp-Protocol-Version"}
	exposes := func(r response) bool {
		got := r.header.Get("Access-Control-Expose-Headers")
		for _, h := range wantExposed {
			if !strings.Contains(got, h) {
				return false
			}
		}
		return true
	}
	t.Run("OK_Preflight", func(t *testing.T) {
		for _, path := range []string{"/v1/mcp", "/v1/mcp/"} {
			r := e.do("OPTIONS", path, "", "", "Origin", listed, "Access-Control-Request-Method", "POST",
				"Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version")
			h := r.header
			if r.status != 204 || h.Get("Access-Control-Allow-Origin") != listed || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "authorization") || h.Get("Vary") != "Origin" || len(r.body) != 0 {
				t.Fatalf("%s: %d %v %s", path, r.status, h, r.body)
			}
		}
	})
	t.Run("OK_Unauthenticated", func(t *testing.T) {
		r := e.do("POST", "/v1/mcp", "", list, "Origin", listed, "Accept", acceptBoth)
		if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != listed || !exposes(r) || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	t.Run("OK_Call", func(t *testing.T) {
		// The base URL (http://interviewd.test) is not loopback: without the list, this
		// Origin is refused by the DNS-rebinding check (TestMCPOrigin).
		for _, origin := range []string{listed, "https://inspector.example.com"} {
			r := e.do("POST", "/v1/mcp", "a_live", list, "Origin", origin, "Accept", acceptBoth)
			if res := decodeRPC(t, r); r.status != 200 || res.Error != nil || r.header.Get("Access-Control-Allow-Origin") != origin || !exposes(r) {
				t.Fatalf("%s: %d %v %.200s", origin, r.status, r.header, r.body)
			}
		}
	})
	t.Run("OK_MethodNotAllowed", func(t *testing.T) {
		r := e.do("GET", "/v1/mcp", "a_live", "", "Origin", listed, "Accept", "text/event-stream")
		if r.status != 405 || r.header.Get("Access-Control-Allow-Origin") != listed {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	t.Run("OK_CanonicalNotEchoed", func(t *testing.T) {
		r := e.do("POST", "/v1/mcp", "a_live", list, "Origin", "http://LOCALHOST:6274", "Accept", acceptBoth)
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != listed {
			t.Fatalf("%d ACAO %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
		}
	})
	for _, origin := range []string{"https://evil.example", "http://localhost:6275", "null", listed + ".evil.example", listed + "/"} {
		t.Run("ErrUnlistedPreflight_"+origin, func(t *testing.T) {
			r := e.do("OPTIONS", "/v1/mcp", "", "", "Origin", origin, "Access-Control-Request-Method", "POST")
			if r.status != 403 || !strings.Contains(string(r.body), `"code":"forbidden_origin"`) ||
				r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
		})
		t.Run("ErrUnlisted_"+origin, func(t *testing.T) {
			r := e.do("POST", "/v1/mcp", "a_live", list, "Origin", origin, "Accept", acceptBoth)
			if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Expose-Headers") != "" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
		})
	}
	t.Run("OK_NoList", func(t *testing.T) {
		// By default no origin is listed: a loopback install lets local origins through
		// the DNS-rebinding check, but answers none of them with CORS headers.
		def := mustServe(t, withListenerBaseURL())
		r := def.do("POST", "/v1/mcp", "a_live", list, "Origin", listed, "Accept", acceptBoth)
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Vary") != "" {
			t.Fatalf("%d %v", r.status, r.header)
		}
		r = def.do("OPTIONS", "/v1/mcp", "", "", "Origin", listed, "Access-Control-Request-Method", "POST")
		if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight %d %v", r.status, r.header)
		}
	})
}
