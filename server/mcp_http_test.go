package server

import (
	stdjson "encoding/json"
	"fmt"
	"interviewd/server/mcp"
	"interviewd/server/pipeline"
	"strings"
	"testing"
)

const acceptBoth = "application/json, text/event-stream"

// modernMeta is the per-request _meta a 2026-07-28 client sends with every call.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"by-hand","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// rpc is a JSON-RPC response as it comes off the wire.
type rpc struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      any            `json:"id"`
	Result  map[string]any `json:"result"`
	Error   *rpcError      `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func decodeRPC(tb testing.TB, r response) rpc {
	tb.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("content type %q (status %d): %s", ct, r.status, r.body)
	}
	var out rpc
	if err := stdjson.Unmarshal(r.body, &out); err != nil || out.JSONRPC != "2.0" {
		tb.Fatalf("not a JSON-RPC response (%v): %s", err, r.body)
	}
	return out
}

func TestMCPAuthentication(t *testing.T) {
	e := mustServe(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	want := `Bearer resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource/v1/mcp"`
	// The scopes a connection asks for by default (mcp/scope.go).
	scope := `, scope="studies:read studies:write studies:golive links:read links:write export:read"`
	for _, path := range []string{"/v1/mcp", "/v1/mcp/"} {
		cases := []struct {
			name, key, wantCode, wantHeader string
		}{
			{"ErrNoCredential", "", "missing_token", want + scope},
			{"ErrNotBearer", "Basic dXNlcjpwYXNz", "invalid_token", want + `, error="invalid_token"` + scope},
			{"ErrUnknownKey", "jsk_live_" + strings.Repeat("A", 49), "invalid_token", want + `, error="invalid_token"` + scope},
			{"ErrOAuthShapedToken", "svca_nothing", "invalid_token", want + `, error="invalid_token"` + scope},
		}
		for _, c := range cases {
			t.Run(c.name+"_"+path, func(t *testing.T) {
				r := e.do("POST", path, c.key, body, "Accept", acceptBoth)
				if r.status != 401 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if got := r.header.Get("WWW-Authenticate"); got != c.wantHeader {
					t.Fatalf("WWW-Authenticate %q, want %q", got, c.wantHeader)
				}
				if !strings.Contains(string(r.body), `"code":"`+c.wantCode+`"`) {
					t.Fatalf("body %s", r.body)
				}
			})
		}
	}
}

// TestMCPMethodNotAllowed: with a credential, any method but POST is a 405; without
// one, every method is first a 401 whose challenge starts OAuth discovery, so a client
// that probes with GET (as for an event stream) discovers from its first request.
func TestMCPMethodNotAllowed(t *testing.T) {
	e := mustServe(t)
	challenge := `Bearer resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource/v1/mcp"`
	for _, method := range []string{"GET", "DELETE", "PUT"} {
		t.Run("Err"+method, func(t *testing.T) {
			r := e.do(method, "/v1/mcp", "a_live", "", "Accept", "text/event-stream")
			if r.status != 405 || r.header.Get("Allow") != "POST" || !strings.Contains(string(r.body), `"code":"method_not_allowed"`) {
				t.Fatalf("%s: %d Allow=%q %s", method, r.status, r.header.Get("Allow"), r.body)
			}
		})
		t.Run("ErrUnauthenticated"+method, func(t *testing.T) {
			r := e.do(method, "/v1/mcp", "", "", "Accept", "text/event-stream")
			if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), challenge) || r.header.Get("Allow") != "" ||
				!strings.Contains(string(r.body), `"code":"missing_token"`) {
				t.Fatalf("%s: %d WWW-Authenticate=%q Allow=%q %s", method, r.status, r.header.Get("WWW-Authenticate"), r.header.Get("Allow"), r.body)
			}
		})
	}
}

func TestMCPOrigin(t *testing.T) {
	e := mustServe(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name, origin string
		want         int
	}{
		{"OK_NoOrigin", "", 200},
		{"OK_SameOrigin", testBaseURL, 200},
		{"OK_SameOriginDefaultPort", "http://INTERVIEWD.test:80", 200},
		{"ErrOtherScheme", "https://interviewd.test", 403},
		{"ErrOtherPort", "http://interviewd.test:8080", 403},
		{"ErrForeign", "https://evil.example", 403},
		{"ErrNull", "null", 403},
		{"ErrLoopbackWhenBaseIsNot", "http://localhost:3000", 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := []string{"Accept", acceptBoth}
			if c.origin != "" {
				headers = append(headers, "Origin", c.origin)
			}
			r := e.do("POST", "/v1/mcp", "a_live", body, headers...)
			if r.status != c.want {
				t.Fatalf("Origin %q: status %d, want %d: %s", c.origin, r.status, c.want, r.body)
			}
			if c.want == 403 && !strings.Contains(string(r.body), `"code":"forbidden_origin"`) {
				t.Fatalf("body %s", r.body)
			}
		})
	}
	t.Run("ErrForeignBeforeAuthentication", func(t *testing.T) {
		if r := e.do("POST", "/v1/mcp", "", body, "Origin", "https://evil.example"); r.status != 403 {
			t.Fatalf("status %d", r.status)
		}
	})
}

func TestOriginPolicy(t *testing.T) {
	cases := []struct {
		name, base, origin string
		want               bool
	}{
		{"OK_Absent", "https://interviewd.example", "", true},
		{"OK_Same", "https://interviewd.example", "https://interviewd.example", true},
		{"OK_SameExplicitPort", "https://interviewd.example", "https://interviewd.example:443", true},
		{"OK_BaseWithPath", "https://example.org/interviewd/", "https://example.org", true},
		{"OK_BaseWithPort", "http://10.0.0.5:8080", "http://10.0.0.5:8080", true},
		{"OK_LoopbackAnyPort", "http://localhost:8080", "http://localhost:5173", true},
		{"OK_LoopbackIPv4", "http://localhost:8080", "http://127.0.0.1:6274", true},
		{"OK_LoopbackIPv6", "http://127.0.0.1:8080", "http://[::1]:3000", true},
		{"OK_LoopbackSubdomain", "http://localhost:8080", "http://app.localhost:3000", true},
		{"ErrNotLoopbackBase", "https://interviewd.example", "http://localhost:8080", false},
		{"ErrLoopbackBaseForeignOrigin", "http://localhost:8080", "http://evil.example", false},
		{"ErrRebindingLookalike", "http://localhost:8080", "http://localhost.evil.example", false},
		{"ErrSubdomain", "https://interviewd.example", "https://x.interviewd.example", false},
		{"ErrNull", "http://localhost:8080", "null", false},
		{"ErrFile", "http://localhost:8080", "file://", false},
		{"ErrPath", "https://interviewd.example", "https://interviewd.example/x", false},
		{"ErrUserinfo", "https://interviewd.example", "https://u@interviewd.example", false},
		{"ErrGarbage", "https://interviewd.example", "%zz", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mcp.NewOriginPolicy(c.base).Allows([]byte(c.origin)); got != c.want {
				t.Fatalf("base %q origin %q: %v, want %v", c.base, c.origin, got, c.want)
			}
		})
	}
}

// FuzzOriginPolicy: whatever the header holds, the check never panics, an allowed
// non-empty Origin is always an http(s) origin, and it is either the base URL's own
// or (for a loopback base) a loopback one.
func FuzzOriginPolicy(f *testing.F) {
	for _, s := range []string{"", "null", "http://localhost:1", "https://interviewd.example", "http://[::1]:80", "http://%41", "HTTP://LOCALHOST"} {
		f.Add("http://localhost:8080", s)
		f.Add("https://interviewd.example", s)
	}
	f.Fuzz(func(t *testing.T, base, origin string) {
		p := mcp.NewOriginPolicy(base)
		if !p.Allows([]byte(origin)) || origin == "" {
			return
		}
		if !strings.HasPrefix(strings.ToLower(origin), "http://") && !strings.HasPrefix(strings.ToLower(origin), "https://") {
			t.Fatalf("base %q allowed non-http origin %q", base, origin)
		}
		if !p.Loopback && p.Origin == "" {
			t.Fatalf("base %q has no origin, yet %q was allowed", base, origin)
		}
		if p.Origin != "" && !p.Allows([]byte(p.Origin)) {
			t.Fatalf("base %q refuses its own origin %q", base, p.Origin)
		}
	})
}

// TestMCPModernEraByHand walks the 2026-07-28 flow with plain JSON-RPC POSTs: no
// initialize, server/discover first, every call carrying its _meta and the
// Mcp-Method (and, for a tool call, Mcp-Name) headers.
func TestMCPModernEraByHand(t *testing.T) {
	e := mustServe(t)
	post := func(method, name, body string) response {
		headers := []string{"Accept", acceptBoth, "Mcp-Protocol-Version", eraModern}
		if method != "" {
			headers = append(headers, "Mcp-Method", method)
		}
		if name != "" {
			headers = append(headers, "Mcp-Name", name)
		}
		return e.do("POST", "/v1/mcp", "a_live", body, headers...)
	}
	t.Run("OK_Discover", func(t *testing.T) {
		r := post("server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`)
		res := decodeRPC(t, r)
		if r.status != 200 || res.Error != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		versions := fmt.Sprint(res.Result["supportedVersions"])
		for _, v := range []string{eraModern, eraLegacy, "2025-06-18", "2025-03-26"} {
			if !strings.Contains(versions, v) {
				t.Fatalf("supportedVersions %s lacks %s", versions, v)
			}
		}
		caps, _ := res.Result["capabilities"].(map[string]any)
		if _, ok := caps["tools"]; !ok {
			t.Fatalf("capabilities %v lack tools", caps)
		}
		if info := fmt.Sprint(res.Result["_meta"]); !strings.Contains(info, "interviewd") {
			t.Fatalf("_meta %s does not name the server", info)
		}
	})
	t.Run("OK_ToolsList", func(t *testing.T) {
		res := decodeRPC(t, post("tools/list", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+modernMeta+`}}`))
		if res.Error != nil || len(res.Result["tools"].([]any)) != len(e.srv.Operations()) {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("OK_ToolsCall", func(t *testing.T) {
		res := decodeRPC(t, post("tools/call", "whoami", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{},`+modernMeta+`}}`))
		sc, _ := res.Result["structuredContent"].(map[string]any)
		if res.Error != nil || sc["org_id"] != e.orgA.ID.String() || res.Result["isError"] == true {
			t.Fatalf("%+v", res)
		}
	})
	errCases := []struct {
		name, method, toolName, body string
		wantStatus, wantCode         int
	}{
		{"ErrMethodHeaderMissing", "", "", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + modernMeta + `}}`, 400, -32020},
		{"ErrMethodHeaderMismatch", "tools/list", "", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami",` + modernMeta + `}}`, 400, -32020},
		{"ErrNameHeaderMismatch", "tools/call", "get_study", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"whoami",` + modernMeta + `}}`, 400, -32020},
		{"ErrInitializeIsGone", "initialize", "", `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"},` + modernMeta + `}}`, 404, -32601},
		{"ErrUnknownTool", "tools/call", "nope", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope",` + modernMeta + `}}`, 400, -32602},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			r := post(c.method, c.toolName, c.body)
			res := decodeRPC(t, r)
			if r.status != c.wantStatus || res.Error == nil || res.Error.Code != c.wantCode {
				t.Fatalf("status %d, body %s; want %d with error %d", r.status, r.body, c.wantStatus, c.wantCode)
			}
		})
	}
}

// TestMCPLegacyEraByHand: the initialize handshake of 2025-03-26 to 2025-11-25, then
// calls that carry no session (the server is stateless).
func TestMCPLegacyEraByHand(t *testing.T) {
	e := mustServe(t)
	for _, version := range []string{"2025-03-26", "2025-06-18", eraLegacy} {
		t.Run("OK_"+version, func(t *testing.T) {
			r := e.do("POST", "/v1/mcp", "a_live", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+
				`","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}`, "Accept", acceptBoth)
			res := decodeRPC(t, r)
			if res.Error != nil || res.Result["protocolVersion"] != version {
				t.Fatalf("initialize: %s", r.body)
			}
			if r.header.Get("Mcp-Session-Id") != "" {
				t.Fatal("a stateless server handed out a session id")
			}
			headers := []string{"Accept", acceptBoth}
			if version >= "2025-06-18" {
				headers = append(headers, "Mcp-Protocol-Version", version)
			}
			if r := e.do("POST", "/v1/mcp", "a_live", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers...); r.status != 202 {
				t.Fatalf("initialized notification: %d %s", r.status, r.body)
			}
			call := decodeRPC(t, e.do("POST", "/v1/mcp", "a_live", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`, headers...))
			if sc, _ := call.Result["structuredContent"].(map[string]any); call.Error != nil || sc["org_name"] != "Org A" {
				t.Fatalf("tools/call: %+v", call)
			}
		})
	}
	t.Run("ErrDiscoverIsModernOnly", func(t *testing.T) {
		res := decodeRPC(t, e.do("POST", "/v1/mcp", "a_live", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, "Accept", acceptBoth))
		if res.Error == nil || res.Error.Code != -32601 {
			t.Fatalf("%+v", res)
		}
	})
}

func TestMCPTransportErrors(t *testing.T) {
	e := mustServe(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	t.Run("ErrNotJSON", func(t *testing.T) {
		r := e.do("POST", "/v1/mcp", "a_live", `{"jsonrpc":`, "Accept", acceptBoth)
		if res := decodeRPC(t, r); r.status != 400 || res.Error == nil || res.Error.Code != -32700 || res.ID != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrContentType", func(t *testing.T) {
		r := e.do("POST", "/v1/mcp", "a_live", list, "Accept", acceptBoth, "Content-Type", "text/plain")
		if res := decodeRPC(t, r); r.status != 415 || res.Error == nil || res.Error.Code != -32600 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	for _, accept := range []string{"application/json", "*/*", ""} {
		t.Run(fmt.Sprintf("OK_Accept%q", accept), func(t *testing.T) {
			r := e.do("POST", "/v1/mcp", "a_live", list, "Accept", accept)
			if res := decodeRPC(t, r); r.status != 200 || res.Error != nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}

func TestMCPTrailingSlash(t *testing.T) {
	e := mustServe(t)
	for _, era := range eras {
		t.Run("OK_"+era, func(t *testing.T) {
			cs := mustMCPAt(t, e.url+"/v1/mcp/", e.keys["a_live"], era)
			if _, sc := callTool(t, cs, "whoami", nil); sc["key_name"] != "a_live" {
				t.Fatalf("whoami %v", sc)
			}
		})
	}
	if r := e.do("POST", "/v1/mcp/x", "a_live", `{}`); r.status != 404 {
		t.Fatalf("/v1/mcp/x: %d", r.status)
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	e := mustServe(t)
	for _, c := range []struct{ surface, probe, probeMethod string }{
		{"/v1/mcp", "/v1/mcp", "POST"},
		{"/v1/api", "/v1/api/me", "GET"},
	} {
		t.Run("OK"+strings.ReplaceAll(c.surface, "/", "_"), func(t *testing.T) {
			// The address a 401 names is the document served, without a credential.
			unauth := e.do(c.probeMethod, c.probe, "", "")
			h := unauth.header.Get("WWW-Authenticate")
			addr := parseChallenge(t, h)["resource_metadata"]
			if !strings.HasPrefix(addr, testBaseURL+"/.well-known/") {
				t.Fatalf("WWW-Authenticate %q", h)
			}
			r := e.do("GET", strings.TrimPrefix(addr, testBaseURL), "", "")
			if r.status != 200 {
				t.Fatalf("%s: %d", addr, r.status)
			}
			var doc map[string]any
			r.json(t, &doc)
			want := map[string]string{
				"resource":                 testBaseURL + c.surface,
				"authorization_servers":    "[" + testBaseURL + "]",
				"bearer_methods_supported": "[header]",
				"scopes_supported":         "[studies:read studies:write studies:golive links:read links:write export:read]",
			}
			for k, v := range want {
				if fmt.Sprint(doc[k]) != v {
					t.Fatalf("%s = %v, want %s", k, doc[k], v)
				}
			}
			if name, _ := doc["resource_name"].(string); !strings.Contains(name, "interviewd") || len(doc) != 5 {
				t.Fatalf("document %v", doc)
			}
		})
	}
	if r := e.do("GET", "/.well-known/oauth-protected-resource/v1/nothing", "", ""); r.status != 404 {
		t.Fatalf("unknown resource: %d", r.status)
	}
}

func TestMCPBodyLimitAndRateHeaders(t *testing.T) {
	e := mustServe(t, withRateLimits(pipeline.DefaultRateLimits()))
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":"` + strings.Repeat("a", 2<<20) + `"}}}`
	r := e.do("POST", "/v1/mcp", "a_live", big, "Content-Type", "application/json", "Accept", acceptBoth, "Mcp-Protocol-Version", "2025-11-25")
	if r.status != 413 || !strings.Contains(string(r.body), "payload_too_large") {
		t.Fatalf("2 MiB body: %d %.200s", r.status, r.body)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	r = e.do("POST", "/v1/mcp", "a_live", call, "Content-Type", "application/json", "Accept", acceptBoth, "Mcp-Protocol-Version", "2025-11-25")
	if r.status != 200 || r.header.Get("RateLimit") == "" || r.header.Get("RateLimit-Policy") == "" {
		t.Fatalf("tool call: %d headers %v", r.status, r.header)
	}
}
