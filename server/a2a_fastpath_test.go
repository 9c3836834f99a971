package server

import (
	"context"
	stdjson "encoding/json"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/a2a"
	"interviewd/server/pipeline"
)

func a2aExchange(e *a2a.Endpoint, secret, body string, headers ...string) *fasthttp.Response {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/v1/a2a")
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.SetContentType("application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.SetBodyString(body)
	var c fasthttp.RequestCtx
	c.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	e.Serve(&c)
	var resp fasthttp.Response
	c.Response.CopyTo(&resp)
	return &resp
}

// mintedMembers are the members whose values are minted per answer (ids, times).
var mintedMembers = map[string]bool{"id": true, "taskId": true, "contextId": true, "messageId": true, "timestamp": true,
	"job_id": true, "thread_id": true, "study_id": true}

// mintedBlanked is an answer's JSON with every minted value blanked.
func mintedBlanked(tb testing.TB, raw []byte) any {
	tb.Helper()
	var v any
	if err := stdjson.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("not JSON: %s", raw)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if mintedMembers[k] {
					v[k] = "minted"
				} else {
					v[k] = walk(x)
				}
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		}
		return v
	}
	return walk(v)
}

// ownMessageID is body with its messageId "m1" or "m" made id.
func ownMessageID(body, id string) string {
	for _, m := range []string{`"messageId":"m1"`, `"messageId":"m"`} {
		if strings.Contains(body, m) {
			return strings.Replace(body, m, `"messageId":"`+id+`"`, 1)
		}
	}
	return body
}

// TestA2AFastPathMatchesSDK holds the SendMessage fast path to the SDK's binding: each
// message is answered by an endpoint with the fast path and by one without, and the
// answers must agree (ids and times aside), the stored tasks too. The fast cases must
// really take the fast path; the others must fall through untouched.
func TestA2AFastPathMatchesSDK(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	e.mustKey("agent_links", e.orgA.ID, kv.EnvLive, []string{"agent:run", "links:read"})
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Mine")
	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")
	fast, sdk := e.srv.a2a.NewEndpoint(true), e.srv.a2a.NewEndpoint(false)

	msg := func(parts string, extra string) string {
		return `{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":` + parts + extra + `}}}`
	}
	data := func(d string) string { return `[{"data":` + d + `}]` }
	getStudy := data(`{"skill":"get_study","arguments":{"study_id":"` + st.ID.String() + `"}}`)
	for _, c := range []struct {
		name    string
		key     string
		body    string
		headers []string
		fast    bool
	}{
		{"Fast_GetStudy", "agent", msg(getStudy, ""), nil, true},
		{"Fast_Version", "agent", msg(getStudy, ""), []string{"A2A-Version", "1.0"}, true},
		{"Fast_ContextID", "agent", msg(getStudy, `,"contextId":"ctx-1"`), nil, true},
		{"Fast_WhoamiNoArguments", "agent", msg(data(`{"skill":"whoami"}`), ""), nil, true},
		{"Fast_WhoamiNullArguments", "agent", msg(data(`{"skill":"whoami","arguments":null}`), ""), nil, true},
		{"Fast_ListStudies", "agent", msg(data(`{"skill":"list_studies","arguments":{"limit":1}}`), ""), nil, true},
		{"Fast_OtherOrgStudyFails", "agent", msg(data(`{"skill":"get_study","arguments":{"study_id":"`+other.ID.String()+`"}}`), ""), nil, true},
		{"Fast_ValidationFails", "agent", msg(data(`{"skill":"get_study","arguments":{"study_id":"x","more":1}}`), ""), nil, true},
		{"Fast_ScopeRefused", "agent_links", msg(getStudy, ""), nil, true},
		{"Fast_NumericID", "agent", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":` + getStudy + `}}}`, nil, true},
		{"SDK_UnknownSkill", "agent", msg(data(`{"skill":"nope"}`), ""), nil, false},
		{"SDK_BackgroundJob", "agent", msg(data(`{"skill":"create_study","arguments":{"guidance":"Learn why people leave."}}`), ""), nil, false},
		{"SDK_Text", "agent", msg(`[{"text":"who am I?"}]`, ""), nil, false},
		{"SDK_TwoParts", "agent", msg(`[{"text":"hi"},{"data":{"skill":"whoami"}}]`, ""), nil, false},
		{"SDK_MessageMetadata", "agent", msg(getStudy, `,"metadata":{"k":"v"}`), nil, false},
		{"SDK_TaskID", "agent", msg(getStudy, `,"taskId":"`+kv.NewV4().String()+`"`), nil, false},
		{"SDK_OldVersion", "agent", msg(getStudy, ""), []string{"A2A-Version", "0.3"}, false},
		{"SDK_ArgumentsArray", "agent", msg(data(`{"skill":"get_study","arguments":[]}`), ""), nil, false},
		{"SDK_Configuration", "agent", `{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"configuration":{"returnImmediately":true},"message":{"messageId":"m1","role":"ROLE_USER","parts":` + getStudy + `}}}`, nil, false},
		{"SDK_GetTask", "agent", `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"` + kv.NewV4().String() + `"}}`, nil, false},
		{"SDK_Garbage", "agent", `{"jsonrpc":`, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Each side sends its own message (a messageId sent again is answered with
			// the first one's task: that is not what is compared here).
			got := a2aExchange(fast, e.keys[c.key], ownMessageID(c.body, c.name+"-fast"), c.headers...)
			want := a2aExchange(sdk, e.keys[c.key], ownMessageID(c.body, c.name+"-sdk"), c.headers...)
			if got.StatusCode() != want.StatusCode() || string(got.Header.ContentType()) != string(want.Header.ContentType()) {
				t.Fatalf("status %d %s, SDK %d %s", got.StatusCode(), got.Header.ContentType(), want.StatusCode(), want.Header.ContentType())
			}
			if g, w := mintedBlanked(t, got.Body()), mintedBlanked(t, want.Body()); !reflect.DeepEqual(g, w) {
				t.Fatalf("answers differ\nfast: %s\nSDK:  %s", got.Body(), want.Body())
			}
			// The task the fast path answered with is the one stored.
			var answer struct {
				Result struct {
					Task struct {
						ID string `json:"id"`
					} `json:"task"`
				} `json:"result"`
			}
			_ = stdjson.Unmarshal(got.Body(), &answer)
			if id := answer.Result.Task.ID; id != "" && c.key == "agent" {
				stored := e.rpc("agent", rpcCall("GetTask", `{"id":"`+id+`"}`))
				var fromStore, fromAnswer any
				_ = stdjson.Unmarshal(stored.Result, &fromStore)
				var whole map[string]stdjson.RawMessage
				_ = stdjson.Unmarshal(got.Body(), &whole)
				var result map[string]any
				_ = stdjson.Unmarshal(whole["result"], &result)
				fromAnswer = result["task"]
				if !reflect.DeepEqual(fromStore, fromAnswer) {
					t.Fatalf("stored task differs\nstored: %s\nanswer: %s", stored.Result, whole["result"])
				}
			}

			var req fasthttp.Request
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			req.SetBodyString(ownMessageID(c.body, c.name+"-took"))
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, nil, nil)
			p, err := e.srv.ResolveToken(e.keys[c.key], a2a.Resource)
			if err != nil {
				t.Fatal(err)
			}
			call := &a2a.Call{P: p}
			took := fast.ServeSendFast(&ctx, context.WithValue(context.Background(), a2a.CallKey{}, call), call)
			if took != c.fast {
				t.Fatalf("fast path took it: %v, want %v", took, c.fast)
			}
			if !took && len(ctx.Response.Body()) != 0 {
				t.Fatalf("fast path declined but wrote %s", ctx.Response.Body())
			}
		})
	}
}

// FuzzA2AFastPath: whatever the body, when the fast path answers a message, the SDK's
// binding answers it the same way (minted ids and times aside), and the fast path's
// answer is JSON.
func FuzzA2AFastPath(f *testing.F) {
	db := mustOpenDB(f)
	off := pipeline.RateLimits{Off: true} // the two endpoints share the limiter; parity of admission is the table test's
	srv := New(Config{DB: db, BaseURL: testBaseURL, RateLimits: &off})
	ctx := f.Context()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Fuzz", Email: "fuzz@example.com"})
	if err != nil {
		f.Fatal(err)
	}
	_, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "fuzz", Environment: kv.EnvLive, Scopes: []string{"studies:read", "agent:run"}})
	if err != nil {
		f.Fatal(err)
	}
	title := "Fuzz"
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: kv.Partition{Org: org.ID, Env: kv.EnvLive}, Brief: kv.Brief{Title: &title}})
	if err != nil {
		f.Fatal(err)
	}
	p, err := srv.ResolveToken(secret, a2a.Resource)
	if err != nil {
		f.Fatal(err)
	}
	fast, sdk := srv.a2a.NewEndpoint(true), srv.a2a.NewEndpoint(false)
	msg := func(id, parts string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":` + parts + `}}}`
	}
	for _, s := range []string{
		msg(`1`, `[{"data":{"skill":"whoami"}}]`),
		msg(`"x"`, `[{"data":{"skill":"get_study","arguments":{"study_id":"`+st.ID.String()+`"}}}]`),
		msg(`2`, `[{"data":{"skill":"list_studies","arguments":{"limit":1,"cursor":null}}}]`),
		msg(`3`, `[{"data":{"skill":"get_study","arguments":{"study_id":"nope"}}}]`),
		msg(`4`, `[{"data":{"skill":"get_interview_link","arguments":{"study_id":"`+st.ID.String()+`"}}}]`),
		`{"id":5,"jsonrpc":"2.0","params":{"message":{"parts":[{"data":{"arguments":{},"skill":"whoami"}}],"role":"ROLE_USER","messageId":"m","contextId":"c"}},"method":"SendMessage"}`,
	} {
		f.Add(s)
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, body string) {
		// Each side sends its own message when the body's id is the corpus's own (a
		// messageId sent again is answered with the first one's task).
		i := strconv.FormatInt(n.Add(1), 10)
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		req.SetBodyString(ownMessageID(body, "fast-"+i))
		var c fasthttp.RequestCtx
		c.Init(&req, nil, nil)
		call := &a2a.Call{P: p}
		if !fast.ServeSendFast(&c, context.WithValue(context.Background(), a2a.CallKey{}, call), call) {
			return
		}
		if !stdjson.Valid(c.Response.Body()) {
			t.Fatalf("fast path answered invalid JSON %q", c.Response.Body())
		}
		want := a2aExchange(sdk, secret, ownMessageID(body, "sdk-"+i))
		if g, w := mintedBlanked(t, c.Response.Body()), mintedBlanked(t, want.Body()); want.StatusCode() != 200 || !reflect.DeepEqual(g, w) {
			t.Fatalf("body %q\nfast: %s\nSDK (%d): %s", body, c.Response.Body(), want.StatusCode(), want.Body())
		}
	})
}
