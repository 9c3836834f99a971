package server

import (
	"context"
	stdjson "encoding/json"
	"net"
	"reflect"
	"testing"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/mcp"
	"interviewd/server/pipeline"
)

// mcpExchange sends one request straight to an endpoint's handler (the same handler
// the router calls) and returns the response.
func mcpExchange(m *mcp.Endpoint, secret, body string, headers ...string) *fasthttp.Response {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/v1/mcp")
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", acceptBoth)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.SetBodyString(body)
	var c fasthttp.RequestCtx
	c.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	m.Serve(&c)
	var resp fasthttp.Response
	c.Response.CopyTo(&resp)
	return &resp
}

// TestMCPFastPathMatchesSDK holds the tools/call fast path to the SDK: every request
// is answered by an endpoint with the fast path and by one without, and the answers
// must agree in status, headers and JSON. The fast cases must really take the fast
// path; the others must fall through to the SDK untouched.
func TestMCPFastPathMatchesSDK(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Mine")
	e.mustStudy(e.orgA.ID, kv.EnvLive, "Also mine")
	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")
	fast, sdk := e.srv.mcp.NewEndpoint(true), e.srv.mcp.NewEndpoint(false)

	call := func(id, name, args, meta string) string {
		b := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"`
		if args != "" {
			b += `,"arguments":` + args
		}
		if meta != "" {
			b += `,"_meta":` + meta
		}
		return b + `}}`
	}
	studyArgs := `{"study_id":"` + st.ID.String() + `"}`
	modernMeta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(name string) []string {
		return []string{"Mcp-Protocol-Version", eraModern, "Mcp-Method", "tools/call", "Mcp-Name", name}
	}
	cases := []struct {
		name    string
		key     string
		body    string
		headers []string
		fast    bool
	}{
		{"Fast_LegacyWhoami", "a_live", call("1", "whoami", "", ""), nil, true},
		{"Fast_LegacyWhoamiNullArguments", "a_live", call("2", "whoami", "null", ""), nil, true},
		{"Fast_LegacyGetStudyWithHeader", "a_live", call(`"abc"`, "get_study", studyArgs, ""), []string{"Mcp-Protocol-Version", "2025-06-18"}, true},
		{"Fast_LegacyGetInterviewLink", "a_live", call("0", "get_interview_link", studyArgs, ""), []string{"Mcp-Protocol-Version", "2025-03-26"}, true},
		{"Fast_LegacyListPage", "a_live", call("-7", "list_studies", `{"limit":1}`, ""), nil, true},
		{"Fast_LegacyProgressToken", "a_live", call("3", "whoami", "{}", `{"progressToken":"p1"}`), nil, true},
		{"Fast_LegacyNotFound", "a_live", call("4", "get_study", `{"study_id":"`+other.ID.String()+`"}`, ""), nil, true},
		{"Fast_LegacyBadUUID", "a_live", call("5", "get_study", `{"study_id":"<nope>"}`, ""), nil, true},
		{"Fast_LegacyArgumentsNotObject", "a_live", call("6", "list_studies", `[1]`, ""), nil, true},
		{"Fast_LegacyScopeMissing", "a_links_only", call("7", "get_study", studyArgs, ""), nil, true},
		{"Fast_AcceptWildcard", "a_live", call("8", "whoami", "", ""), []string{"Accept", "*/*"}, true},
		{"Fast_ContentTypeCharset", "a_live", call("9", "whoami", "", ""), []string{"Content-Type", "application/json; charset=utf-8"}, true},
		{"Fast_ModernWhoami", "a_live", call("10", "whoami", "{}", modernMeta), modern("whoami"), true},
		{"Fast_ModernGetStudyError", "a_live", call("11", "get_study", `{"study_id":"x"}`, modernMeta), modern("get_study"), true},
		{"Fast_ModernNoClientInfo", "a_live", call("12", "whoami", "", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`), modern("whoami"), true},

		{"SDK_Batch", "a_live", "[" + call("20", "whoami", "", "") + "]", nil, false},
		{"SDK_UnknownTool", "a_live", call("21", "drop_tables", "", ""), nil, false},
		{"SDK_OtherMethod", "a_live", `{"jsonrpc":"2.0","id":22,"method":"tools/list"}`, nil, false},
		{"SDK_Notification", "a_live", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"whoami"}}`, nil, false},
		{"SDK_NullID", "a_live", call("null", "whoami", "", ""), nil, false},
		{"SDK_FractionalID", "a_live", call("1.5", "whoami", "", ""), nil, false},
		{"SDK_NotJSONRPC2", "a_live", `{"jsonrpc":"1.0","id":23,"method":"tools/call","params":{"name":"whoami"}}`, nil, false},
		{"SDK_ExtraMember", "a_live", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"whoami"},"x":1}`, nil, false},
		{"SDK_ExtraParam", "a_live", `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"whoami","requestState":"s"}}`, nil, false},
		{"SDK_LegacyWithModernHeader", "a_live", call("26", "whoami", "", ""), []string{"Mcp-Protocol-Version", eraModern}, false},
		{"SDK_UnsupportedHeader", "a_live", call("27", "whoami", "", ""), []string{"Mcp-Protocol-Version", "1999-01-01"}, false},
		{"SDK_ModernNoHeaders", "a_live", call("28", "whoami", "", modernMeta), nil, false},
		{"SDK_ModernMethodMismatch", "a_live", call("29", "whoami", "", modernMeta), []string{"Mcp-Protocol-Version", eraModern, "Mcp-Method", "tools/list", "Mcp-Name", "whoami"}, false},
		{"SDK_ModernNameMismatch", "a_live", call("30", "whoami", "", modernMeta), modern("get_study"), false},
		{"SDK_ModernNoCapabilities", "a_live", call("31", "whoami", "", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), modern("whoami"), false},
		{"SDK_ModernBadClientInfo", "a_live", call("32", "whoami", "", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":5,"io.modelcontextprotocol/clientCapabilities":{}}`), modern("whoami"), false},
		{"SDK_OldMetaVersion", "a_live", call("33", "whoami", "", `{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}`), nil, false},
		{"SDK_ContentType", "a_live", call("34", "whoami", "", ""), []string{"Content-Type", "text/plain"}, false},
		{"SDK_Garbage", "a_live", `{"jsonrpc":`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mcpExchange(fast, e.keys[c.key], c.body, c.headers...)
			want := mcpExchange(sdk, e.keys[c.key], c.body, c.headers...)
			if got.StatusCode() != want.StatusCode() {
				t.Fatalf("status %d, SDK %d\nfast: %s\nSDK:  %s", got.StatusCode(), want.StatusCode(), got.Body(), want.Body())
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
				if g, w := string(got.Header.Peek(h)), string(want.Header.Peek(h)); g != w {
					t.Fatalf("%s %q, SDK %q", h, g, w)
				}
			}
			var gotJSON, wantJSON any
			_ = stdjson.Unmarshal(got.Body(), &gotJSON)
			_ = stdjson.Unmarshal(want.Body(), &wantJSON)
			if !reflect.DeepEqual(gotJSON, wantJSON) || (len(want.Body()) == 0) != (len(got.Body()) == 0) {
				t.Fatalf("answers differ\nfast: %s\nSDK:  %s", got.Body(), want.Body())
			}

			// Did the fast path take it (and only then write anything)?
			var req fasthttp.Request
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.Header.Set("Accept", acceptBoth)
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			req.SetBodyString(c.body)
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, nil, nil)
			p, err := e.srv.ResolveToken(e.keys[c.key], pipeline.ResourceMCP)
			if err != nil {
				t.Fatal(err)
			}
			took := fast.ServeToolCall(&ctx, context.Background(), p)
			if took != c.fast {
				t.Fatalf("fast path took it: %v, want %v", took, c.fast)
			}
			if !took && len(ctx.Response.Body()) != 0 {
				t.Fatalf("fast path declined but wrote %s", ctx.Response.Body())
			}
		})
	}
}

// FuzzMCPFastPath: whatever the body, when the fast path answers a request, the SDK
// answers it the same way.
func FuzzMCPFastPath(f *testing.F) {
	db := mustOpenDB(f)
	// Limits off: the two endpoints share the server's limiter, so with limits on the
	// fuzzer soon runs the credential out and the two answers are 429s whose
	// Retry-After moved between the calls. Admission parity is TestMCPFastPathMatchesSDK's.
	off := pipeline.RateLimits{Off: true}
	srv := New(Config{DB: db, BaseURL: testBaseURL, RateLimits: &off})
	ctx := f.Context()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Fuzz", Email: "fuzz@example.com"})
	if err != nil {
		f.Fatal(err)
	}
	_, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "fuzz", Environment: kv.EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		f.Fatal(err)
	}
	title := "Fuzz"
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: kv.Partition{Org: org.ID, Env: kv.EnvLive}, Brief: kv.Brief{Title: &title}})
	if err != nil {
		f.Fatal(err)
	}
	p, err := srv.ResolveToken(secret, pipeline.ResourceMCP)
	if err != nil {
		f.Fatal(err)
	}
	fast, sdk := srv.mcp.NewEndpoint(true), srv.mcp.NewEndpoint(false)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_study","arguments":{"study_id":"` + st.ID.String() + `"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_studies","arguments":{"limit":1,"cursor":null}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_interview_link","arguments":{"study_id":"` + st.ID.String() + `"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"whoami","name":"get_study"}}`,
		`{"id":5,"jsonrpc":"2.0","params":{"arguments":{},"name":"whoami"},"method":"tools/call"}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, modern bool) {
		var headers []string
		if modern {
			headers = []string{"Mcp-Protocol-Version", eraModern, "Mcp-Method", "tools/call", "Mcp-Name", "whoami"}
		}
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		req.Header.Set("Accept", acceptBoth)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		req.SetBodyString(body)
		var c fasthttp.RequestCtx
		c.Init(&req, nil, nil)
		if !fast.ServeToolCall(&c, context.Background(), p) {
			return
		}
		want := mcpExchange(sdk, secret, body, headers...)
		var gotJSON, wantJSON any
		if err := stdjson.Unmarshal(c.Response.Body(), &gotJSON); err != nil {
			t.Fatalf("fast path answered invalid JSON %q", c.Response.Body())
		}
		_ = stdjson.Unmarshal(want.Body(), &wantJSON)
		if want.StatusCode() != 200 || !reflect.DeepEqual(gotJSON, wantJSON) {
			t.Fatalf("body %q\nfast: %s\nSDK (%d): %s", body, c.Response.Body(), want.StatusCode(), want.Body())
		}
	})
}
