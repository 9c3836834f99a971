package server

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// The two protocol eras: initialize (up to 2025-11-25) and server/discover (2026-07-28).
const (
	eraLegacy = "2025-11-25"
	eraModern = "2026-07-28"
)

var eras = []string{eraLegacy, eraModern}

// bearerTransport adds an Authorization header to every request.
type bearerTransport struct {
	secret string
	base   http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return b.base.RoundTrip(r)
}

// mustMCP connects the SDK's own client to the server with the named key, speaking
// the given protocol version.
func (e *testEnv) mustMCP(tb testing.TB, key, version string) *mcp.ClientSession {
	tb.Helper()
	return mustMCPAt(tb, e.url+"/v1/mcp", e.keys[key], version)
}

func mustMCPAt(tb testing.TB, endpoint, secret, version string) *mcp.ClientSession {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "interviewd-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearerTransport{secret: secret, base: http.DefaultTransport}},
		// The server is stateless and never streams: nothing to GET.
		DisableStandaloneSSE: true,
	}
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connect (%s): %v", version, err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		tb.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// callTool calls a tool and returns its result with structuredContent decoded.
func callTool(tb testing.TB, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s: %v", name, err)
	}
	raw, err := stdjson.Marshal(res.StructuredContent)
	if err != nil {
		tb.Fatal(err)
	}
	var sc map[string]any
	if err := stdjson.Unmarshal(raw, &sc); err != nil {
		tb.Fatalf("structuredContent of %s is not an object: %s", name, raw)
	}
	if len(res.Content) != 1 && len(res.Content) != 2 {
		tb.Fatalf("%s: %d content blocks, want the text copy (and at most a note)", name, len(res.Content))
	}
	if len(res.Content) == 2 {
		if note, ok := res.Content[1].(*mcp.TextContent); !ok || note.Text == "" || strings.HasPrefix(note.Text, "{") {
			tb.Fatalf("%s: a second block %#v, want a note in words", name, res.Content[1])
		}
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	var fromText map[string]any
	if err := stdjson.Unmarshal([]byte(text.Text), &fromText); err != nil || !reflect.DeepEqual(fromText, sc) {
		tb.Fatalf("%s: text block %q is not a copy of structuredContent %s", name, text.Text, raw)
	}
	return res, sc
}

// mustGeneric round-trips v through JSON, as a client sees it.
func mustGeneric(tb testing.TB, v any) any {
	tb.Helper()
	raw, err := stdjson.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var out any
	if err := stdjson.Unmarshal(raw, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// outputSchemas resolves every tool's advertised output schema, as a validating
// client does.
func outputSchemas(tb testing.TB, cs *mcp.ClientSession) map[string]*jsonschema.Resolved {
	tb.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range res.Tools {
		raw, _ := stdjson.Marshal(tool.OutputSchema)
		var sc jsonschema.Schema
		if err := stdjson.Unmarshal(raw, &sc); err != nil {
			tb.Fatalf("%s output schema: %v", tool.Name, err)
		}
		resolved, err := sc.Resolve(nil)
		if err != nil {
			tb.Fatalf("%s output schema: %v", tool.Name, err)
		}
		out[tool.Name] = resolved
	}
	return out
}

// mustConform fails unless structuredContent validates against the tool's schema.
func mustConform(tb testing.TB, schemas map[string]*jsonschema.Resolved, tool string, sc map[string]any) {
	tb.Helper()
	if err := schemas[tool].Validate(sc); err != nil {
		tb.Fatalf("%s: structuredContent %v does not conform to the advertised output schema: %v", tool, sc, err)
	}
}

// restJSON decodes a REST response body into a generic value for comparison.
func restJSON(tb testing.TB, r response) any {
	tb.Helper()
	var v any
	if err := stdjson.Unmarshal(r.body, &v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

func TestMCPToolsList(t *testing.T) {
	e := mustServe(t)
	for _, era := range eras {
		t.Run("OK_"+era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			tools := map[string]*mcp.Tool{}
			for _, tool := range res.Tools {
				tools[tool.Name] = tool
			}
			ops := e.srv.Operations()
			if len(tools) != len(ops) || len(res.Tools) != len(ops) {
				t.Fatalf("%d tools for %d operations", len(res.Tools), len(ops))
			}
			for _, o := range ops {
				tool := tools[o.Name]
				if tool == nil {
					t.Fatalf("operation %s has no tool", o.Name)
				}
				in, _ := tool.InputSchema.(map[string]any)
				if in["type"] != "object" || in["additionalProperties"] != false {
					t.Fatalf("%s input schema %v: want a closed object", o.Name, in)
				}
				props, _ := in["properties"].(map[string]any)
				if len(props) != len(o.Plan.Fields) {
					t.Fatalf("%s input schema has %d properties for %d fields", o.Name, len(props), len(o.Plan.Fields))
				}
				// The output schema is the operation's output or the error body.
				out, _ := tool.OutputSchema.(map[string]any)
				alts, _ := out["anyOf"].([]any)
				if out["type"] != "object" || len(alts) != 2 {
					t.Fatalf("%s output schema %v", o.Name, out)
				}
				if want := mustGeneric(t, o.OutputSchema()); !reflect.DeepEqual(alts[0], want) {
					t.Fatalf("%s output schema %v, want the operation's %v", o.Name, alts[0], want)
				}
				if req := fmt.Sprint(alts[1].(map[string]any)["required"]); req != "[code detail]" {
					t.Fatalf("%s error schema requires %s", o.Name, req)
				}
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != (o.Method == "GET") {
					t.Fatalf("%s annotations %+v for a %s operation", o.Name, tool.Annotations, o.Method)
				}
				if !strings.HasPrefix(tool.Description, o.Summary) || (o.Scope != "" && !strings.Contains(tool.Description, o.Scope)) {
					t.Fatalf("%s description %q lacks the summary or the scope %q", o.Name, tool.Description, o.Scope)
				}
			}
			// The schemas a client sees are the ones the table generates.
			ls := tools["list_studies"]
			limit := ls.InputSchema.(map[string]any)["properties"].(map[string]any)["limit"].(map[string]any)
			if limit["minimum"] != 1.0 || limit["maximum"] != 200.0 {
				t.Fatalf("list_studies limit schema %v", limit)
			}
			outProps := ls.OutputSchema.(map[string]any)["anyOf"].([]any)[0].(map[string]any)["properties"].(map[string]any)
			if _, ok := outProps["items"]; !ok {
				t.Fatalf("list_studies output %v lacks items", outProps)
			}
			if _, ok := outProps["next_cursor"]; !ok {
				t.Fatalf("list_studies output %v lacks next_cursor", outProps)
			}
			req := tools["get_study"].InputSchema.(map[string]any)["required"]
			if fmt.Sprint(req) != "[study_id]" {
				t.Fatalf("get_study required %v", req)
			}
		})
	}
}

func TestMCPCallTools(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Checkout friction")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			schemas := outputSchemas(t, cs)
			cases := []struct {
				name     string
				tool     string
				args     any
				restPath string
			}{
				{"OK_Whoami", "whoami", map[string]any{}, "/v1/api/me"},
				{"OK_WhoamiNoArguments", "whoami", nil, "/v1/api/me"},
				{"OK_GetStudy", "get_study", map[string]any{"study_id": st.ID.String()}, "/v1/api/studies/" + st.ID.String()},
				{"OK_GetInterviewLink", "get_interview_link", map[string]any{"study_id": st.ID.String()}, "/v1/api/studies/" + st.ID.String() + "/interview-link"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					res, sc := callTool(t, cs, c.tool, c.args)
					if res.IsError {
						t.Fatalf("isError: %v", sc)
					}
					mustConform(t, schemas, c.tool, sc)
					rest := e.do("GET", c.restPath, "a_live", "")
					if rest.status != 200 {
						t.Fatalf("REST twin: %d %s", rest.status, rest.body)
					}
					if want := restJSON(t, rest); !reflect.DeepEqual(any(sc), want) {
						t.Fatalf("tool result %v differs from REST %v", sc, want)
					}
				})
			}
			t.Run("OK_ListStudies", func(t *testing.T) {
				_, sc := callTool(t, cs, "list_studies", map[string]any{"limit": 10})
				mustConform(t, schemas, "list_studies", sc)
				items := sc["items"].([]any)
				if len(items) != 1 || items[0].(map[string]any)["id"] != st.ID.String() || sc["next_cursor"] != nil {
					t.Fatalf("list %v", sc)
				}
			})
		})
	}
}

func TestMCPListStudiesPaging(t *testing.T) {
	e := mustServe(t)
	var want []string
	for i := 0; i < 120; i++ {
		want = append(want, e.mustStudy(e.orgA.ID, kv.EnvLive, fmt.Sprint("s", i)).ID.String())
	}
	e.mustStudy(e.orgB.ID, kv.EnvLive, "not mine")
	for _, era := range eras {
		t.Run("OK_"+era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			var got []string
			var sizes []int
			args := map[string]any{}
			for {
				res, sc := callTool(t, cs, "list_studies", args)
				if res.IsError {
					t.Fatalf("page %d: %v", len(sizes), sc)
				}
				items := sc["items"].([]any)
				sizes = append(sizes, len(items))
				for _, it := range items {
					got = append(got, it.(map[string]any)["id"].(string))
				}
				next, _ := sc["next_cursor"].(string)
				if next == "" {
					if _, present := sc["next_cursor"]; !present {
						t.Fatal("the last page leaves next_cursor out instead of null")
					}
					break
				}
				args = map[string]any{"cursor": next}
			}
			if fmt.Sprint(sizes) != "[50 50 20]" {
				t.Fatalf("page sizes %v, want the default limit 50", sizes)
			}
			for i := range want {
				if got[i] != want[len(want)-1-i] {
					t.Fatalf("row %d is not newest first", i)
				}
			}
		})
	}
}

func TestMCPToolErrors(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Mine")
	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")
	cases := []struct {
		name     string
		key      string
		tool     string
		args     any
		wantCode string
		check    func(t *testing.T, sc map[string]any)
	}{
		{name: "ErrNotFound", key: "a_live", tool: "get_study", args: map[string]any{"study_id": kv.NewV4().String()}, wantCode: "not_found"},
		{name: "ErrNotFound_OtherOrg", key: "a_live", tool: "get_study", args: map[string]any{"study_id": other.ID.String()}, wantCode: "not_found"},
		{name: "ErrBadUUID", key: "a_live", tool: "get_study", args: map[string]any{"study_id": "nope"}, wantCode: "validation_error",
			check: func(t *testing.T, sc map[string]any) {
				want := `[map[loc:[path study_id] msg:Input should be a valid UUID. type:uuid_parsing]]`
				if fmt.Sprint(sc["errors"]) != want {
					t.Fatalf("errors %v, want %s", sc["errors"], want)
				}
				if sc["detail"] != "Request validation failed: study_id: Input should be a valid UUID." {
					t.Fatalf("detail %q", sc["detail"])
				}
			}},
		{name: "ErrMissingArgument", key: "a_live", tool: "get_study", args: map[string]any{}, wantCode: "validation_error",
			check: func(t *testing.T, sc map[string]any) {
				if !strings.Contains(fmt.Sprint(sc["errors"]), "type:missing") {
					t.Fatalf("errors %v", sc["errors"])
				}
			}},
		{name: "ErrUnknownArgument", key: "a_live", tool: "get_study", args: map[string]any{"study_id": st.ID.String(), "extra": 1}, wantCode: "validation_error",
			check: func(t *testing.T, sc map[string]any) {
				if !strings.Contains(fmt.Sprint(sc["errors"]), "type:extra_forbidden") {
					t.Fatalf("errors %v", sc["errors"])
				}
			}},
		{name: "ErrWrongType", key: "a_live", tool: "list_studies", args: map[string]any{"limit": "ten"}, wantCode: "validation_error"},
		{name: "ErrArgumentsNotObject", key: "a_live", tool: "list_studies", args: []int{1}, wantCode: "validation_error"},
		{name: "ErrScopeMissing", key: "a_links_only", tool: "get_study", args: map[string]any{"study_id": st.ID.String()}, wantCode: "insufficient_scope",
			check: func(t *testing.T, sc map[string]any) {
				if !strings.Contains(sc["detail"].(string), "studies:read") || sc["scope"] != "studies:read" {
					t.Fatalf("detail %q, scope %v: the missing scope is not named", sc["detail"], sc["scope"])
				}
			}},
		{name: "ErrScopeMissing_BeforeValidation", key: "a_studies_only", tool: "get_interview_link", args: map[string]any{"study_id": "nope"}, wantCode: "insufficient_scope",
			check: func(t *testing.T, sc map[string]any) {
				if sc["scope"] != "links:read" {
					t.Fatalf("scope %v, want links:read", sc["scope"])
				}
			}},
	}
	for _, era := range eras {
		sessions := map[string]*mcp.ClientSession{}
		for _, key := range []string{"a_live", "a_links_only", "a_studies_only"} {
			sessions[key] = e.mustMCP(t, key, era)
		}
		schemas := outputSchemas(t, sessions["a_live"])
		if schemas["get_study"].Validate(map[string]any{"code": "not_found"}) == nil {
			t.Fatal("the output schema takes an error body without its detail: validation proves nothing")
		}
		for _, c := range cases {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				cs := sessions[c.key]
				res, sc := callTool(t, cs, c.tool, c.args)
				if !res.IsError {
					t.Fatalf("not an error result: %v", sc)
				}
				if sc["code"] != c.wantCode {
					t.Fatalf("code %v, want %s (%v)", sc["code"], c.wantCode, sc)
				}
				if d, _ := sc["detail"].(string); d == "" {
					t.Fatalf("no detail: %v", sc)
				}
				mustConform(t, schemas, c.tool, sc)
				if c.check != nil {
					c.check(t, sc)
				}
			})
		}
	}
}

// TestMCPProtocolErrors: unknown tools and malformed calls are JSON-RPC errors, not
// tool results.
func TestMCPProtocolErrors(t *testing.T) {
	e := mustServe(t)
	for _, era := range eras {
		t.Run("ErrUnknownTool_"+era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_tables"})
			if err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Fatalf("got %v, %v; want a JSON-RPC error", res, err)
			}
		})
	}
}

func TestArgumentName(t *testing.T) {
	cases := []struct {
		loc  []any
		want string
	}{
		{[]any{"query", "limit"}, "limit"},
		{[]any{"path", "study_id"}, "study_id"},
		{[]any{"body", "context", "k"}, "context.k"},
		{[]any{"body", "file_ids", 0}, "file_ids[0]"},
		{[]any{"body"}, "arguments"},
		{nil, "arguments"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := pipeline.ArgumentName(c.loc); got != c.want {
				t.Fatalf("argumentName(%v) = %q, want %q", c.loc, got, c.want)
			}
		})
	}
}

// TestMCPRateLimited: tool calls count against the same windows as REST requests.
func TestMCPRateLimited(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock), withRateLimits(pipeline.DefaultRateLimits()))
	for i := 0; i < 60; i++ { // half the read window over REST …
		if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 200 {
			t.Fatalf("REST read %d: %d", i, r.status)
		}
	}
	cs := e.mustMCP(t, "a_live", "2025-11-25")
	for i := 0; i < 60; i++ { // … and half over MCP
		if res, _ := callTool(t, cs, "whoami", map[string]any{}); res.IsError {
			t.Fatalf("tool call %d refused", i)
		}
	}
	res, sc := callTool(t, cs, "whoami", map[string]any{})
	if !res.IsError || sc["code"] != "rate_limited" || sc["retry_after_seconds"].(float64) < 1 {
		t.Fatalf("call 121: %+v", sc)
	}
}

// toolNote is the note a tool result says beside its JSON (its second text block), or "".
func toolNote(res *mcp.CallToolResult) string {
	if len(res.Content) < 2 {
		return ""
	}
	note, _ := res.Content[1].(*mcp.TextContent)
	if note == nil {
		return ""
	}
	return note.Text
}
