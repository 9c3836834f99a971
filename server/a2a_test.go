package server

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"interviewd/kv"
	a2asurface "interviewd/server/a2a"
)

// allScopes is every scope a research API key can hold, agent:run included.
var allScopes = []string{"studies:read", "studies:write", "studies:golive", "links:read", "links:write", "export:read", "agent:run"}

// baseURLTransport sends requests for the configured base URL (what the agent card
// names) to the test server's real loopback address, with the key as a bearer.
type baseURLTransport struct {
	target *url.URL
	secret string
}

func (b baseURLTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.URL.Host == strings.TrimPrefix(testBaseURL, "http://") {
		r.URL.Scheme, r.URL.Host = b.target.Scheme, b.target.Host
		r.Host = b.target.Host
	}
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// a2aHTTP is an HTTP client that reaches the test server at the base URL the agent
// card names, sending the named key.
func (e *testEnv) a2aHTTP(key string) *http.Client {
	u, err := url.Parse(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	return &http.Client{Transport: baseURLTransport{target: u, secret: e.keys[key]}, Timeout: 3 * time.Minute}
}

// mustA2A is the a2a-go client as an agent developer builds it: the agent card is
// resolved from the base URL, and the client picks its JSON-RPC interface.
func (e *testEnv) mustA2A(tb testing.TB, key string) *a2aclient.Client {
	tb.Helper()
	ctx := context.Background()
	hc := e.a2aHTTP(key)
	card, err := agentcard.NewResolver(hc).Resolve(ctx, testBaseURL)
	if err != nil {
		tb.Fatalf("resolve agent card: %v", err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		tb.Fatalf("a2a client: %v", err)
	}
	tb.Cleanup(func() { _ = client.Destroy() })
	return client
}

// skillMessage is a user message with the data part that calls skill.
func skillMessage(skill string, args map[string]any) *a2a.Message {
	data := map[string]any{"skill": skill}
	if args != nil {
		data["arguments"] = args
	}
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(data))
}

// mustSend sends msg and returns the task it ran as.
func mustSend(tb testing.TB, c *a2aclient.Client, msg *a2a.Message, immediately bool) *a2a.Task {
	tb.Helper()
	req := &a2a.SendMessageRequest{Message: msg}
	if immediately {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(context.Background(), req)
	if err != nil {
		tb.Fatalf("send message: %v", err)
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		tb.Fatalf("send message answered %T, want a task", res)
	}
	return t
}

// artifactJSON returns the JSON of a task's artifact id, decoded into v.
func artifactJSON(tb testing.TB, t *a2a.Task, id string, v any) {
	tb.Helper()
	for _, a := range t.Artifacts {
		if string(a.ID) != id {
			continue
		}
		if len(a.Parts) != 1 {
			tb.Fatalf("artifact %s has %d parts", id, len(a.Parts))
		}
		raw, err := stdjson.Marshal(a.Parts[0].Data())
		if err != nil {
			tb.Fatal(err)
		}
		if err := stdjson.Unmarshal(raw, v); err != nil {
			tb.Fatalf("artifact %s: %v (%s)", id, err, raw)
		}
		return
	}
	tb.Fatalf("task %s (%s) has no artifact %q", t.ID, t.Status.State, id)
}

func TestA2AAgentCard(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", a2asurface.AgentCardPath, "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("card: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Fatalf("Cache-Control %q", cc)
	}
	etag := r.header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if again := e.do("GET", a2asurface.AgentCardPath, "", "", "If-None-Match", inm); again.status != 304 || len(again.body) != 0 || again.header.Get("ETag") != etag {
			t.Fatalf("If-None-Match %s: %d %q", inm, again.status, again.body)
		}
	}
	if other := e.do("GET", a2asurface.AgentCardPath, "", "", "If-None-Match", `"stale"`); other.status != 200 {
		t.Fatalf("stale If-None-Match: %d", other.status)
	}

	card, err := agentcard.DefaultCardParser(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "interviewd" || card.Version == "" || card.Description == "" || !card.Capabilities.Streaming {
		t.Fatalf("card: %+v", card)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != testBaseURL+"/v1/a2a" ||
		card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC || card.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Fatalf("interfaces: %+v", card.SupportedInterfaces[0])
	}
	if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok {
		t.Fatalf("no bearer scheme: %#v", card.SecuritySchemes)
	}
	if k, ok := card.SecuritySchemes["apiKey"].(a2a.APIKeySecurityScheme); !ok || k.Name != "X-API-Key" || k.Location != "header" {
		t.Fatalf("no X-API-Key scheme: %#v", card.SecuritySchemes)
	}
	if len(card.DefaultInputModes) == 0 || len(card.DefaultOutputModes) == 0 {
		t.Fatal("no default modes")
	}
	// One skill per operation of the table, in its order, each with examples whose
	// first is a data part naming the skill.
	ops := e.srv.Operations()
	if len(card.Skills) != len(ops) {
		t.Fatalf("%d skills for %d operations", len(card.Skills), len(ops))
	}
	for i, sk := range card.Skills {
		if sk.ID != ops[i].Name || sk.Description == "" || len(sk.Examples) == 0 {
			t.Fatalf("skill %d: %+v", i, sk)
		}
		var ex struct {
			Skill     string         `json:"skill"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := stdjson.Unmarshal([]byte(sk.Examples[0]), &ex); err != nil || ex.Skill != sk.ID {
			t.Fatalf("skill %s example %q: %v", sk.ID, sk.Examples[0], err)
		}
	}
	if sk := card.Skills[indexOfSkill(card, "get_study")]; sk.Examples[0] != `{"skill":"get_study","arguments":{"study_id":"<study_id>"}}` {
		t.Fatalf("get_study example %q", sk.Examples[0])
	}
}

func indexOfSkill(card *a2a.AgentCard, id string) int {
	for i, sk := range card.Skills {
		if sk.ID == id {
			return i
		}
	}
	return -1
}

// A quick skill completes at once with the REST answer as its artifact, and the task
// can be read back, listed and is not cancelable.
func TestA2AQuickSkill(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Onboarding")
	c := e.mustA2A(t, "agent")

	task := mustSend(t, c, skillMessage("get_study", map[string]any{"study_id": st.ID.String()}), false)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s: %+v", task.Status.State, task.Status.Message)
	}
	var got, want map[string]any
	artifactJSON(t, task, "result", &got)
	e.do("GET", "/v1/api/studies/"+st.ID.String(), "a_live", "").json(t, &want)
	if g, w := jsonText(t, got), jsonText(t, want); g != w {
		t.Fatalf("artifact %s, REST %s", g, w)
	}
	if len(task.History) != 1 || task.History[0].TaskID != task.ID || task.ContextID == "" {
		t.Fatalf("history: %+v", task.History)
	}

	again, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || again.Status.State != a2a.TaskStateCompleted || again.ID != task.ID {
		t.Fatalf("get task: %v %+v", err, again)
	}
	if _, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: task.ID}); !errorsIs(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel a completed task: %v", err)
	}

	// Lists return {items, next_cursor}, as MCP does.
	list := mustSend(t, c, skillMessage("list_studies", map[string]any{"limit": 1}), false)
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"next_cursor"`
	}
	artifactJSON(t, list, "result", &page)
	if len(page.Items) != 1 || page.Items[0]["id"] != st.ID.String() || page.NextCursor != nil {
		t.Fatalf("list: %+v", page)
	}
}

func jsonText(tb testing.TB, v any) string {
	tb.Helper()
	raw, err := stdjson.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}

func errorsIs(err, target error) bool { return err != nil && errors.Is(err, target) }
