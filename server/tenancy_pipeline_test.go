package server

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/a2a"
	"interviewd/server/app"
	"interviewd/server/mcp"
	"interviewd/server/pipeline"
)

// The research pipeline under the tenancy matrix: the A2A and app surfaces' senders,
// and the check that no surface skips a step of the pipeline.

// researchSurfaceNames are the surfaces the research table runs on (researchPass.surface).
var researchSurfaceNames = []string{"rest", "mcp_tool", "a2a_skill", "app_action"}

// withResearchTrace hands every research call that reaches its operation to fn.
func withResearchTrace(fn func(pipeline.ResearchPass)) serveOption {
	return func(c *Config, _ *kv.Options) { c.onResearch = fn }
}

// researchPasses collects the steps research calls passed, by surface and operation.
type researchPasses struct {
	mu     sync.Mutex
	passes []pipeline.ResearchPass
}

func (rp *researchPasses) add(p pipeline.ResearchPass) {
	rp.mu.Lock()
	rp.passes = append(rp.passes, p)
	rp.mu.Unlock()
}

func (rp *researchPasses) all() []pipeline.ResearchPass {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return slices.Clone(rp.passes)
}

// checkResearchPasses returns a problem for every surface of researchSurfaceNames that
// never ran an operation of ops, and for every call, on any surface, that reached its
// operation without passing every step of the pipeline before it.
func checkResearchPasses(passes []pipeline.ResearchPass, ops []*pipeline.Operation) []string {
	seen := map[string]map[string]bool{}
	var problems []string
	for _, p := range passes {
		if seen[p.Surface] == nil {
			seen[p.Surface] = map[string]bool{}
		}
		if p.Passed != pipeline.ResearchSequence && !seen[p.Surface]["skipped "+p.Op] {
			seen[p.Surface]["skipped "+p.Op] = true
			problems = append(problems, fmt.Sprintf("surface %s ran %s without its %s step(s): it passed %s",
				p.Surface, p.Op, pipeline.ResearchSequence&^p.Passed, p.Passed))
		}
		seen[p.Surface][p.Op] = true
	}
	for _, sf := range researchSurfaceNames {
		for _, o := range ops {
			if !seen[sf][o.Name] {
				problems = append(problems, fmt.Sprintf("surface %s never ran %s through the research pipeline", sf, o.Name))
			}
		}
	}
	return problems
}

// twins gives organisation A's and B's keys their A2A twins and app principals.
func (w *tenancyWorld) twins(t *testing.T) {
	e := w.e
	all := []string{"studies:read", "studies:write", "studies:golive", "links:read", "links:write", "export:read"}
	w.twin(t, e.keys["a_live"], e.orgA.ID, kv.EnvLive, all)
	w.twin(t, e.keys["a_test"], e.orgA.ID, kv.EnvTest, all)
	w.twin(t, e.keys["b_live"], e.orgB.ID, kv.EnvLive, all)
}

// twin registers secret's A2A twin (a key of the same partition and scopes, with
// agent:run) and its app principal (a real session's of an owner of org, in env,
// holding the key's scopes but agent:run, which the app never grants).
func (w *tenancyWorld) twin(t *testing.T, secret string, org kv.ID, env kv.Environment, scopes []string) {
	t.Helper()
	w.agent[secret] = secret
	if !slices.Contains(scopes, kv.ScopeAgentRun) {
		_, twin, err := w.e.db.CreateKey(context.Background(), kv.KeyInput{OrgID: org, Name: "agent twin", Environment: env,
			Scopes: append(slices.Clone(scopes), kv.ScopeAgentRun)})
		if err != nil {
			t.Fatal(err)
		}
		w.agent[secret] = twin
	}
	part := kv.Partition{Org: org, Env: env}
	auth, ok := w.sessions[part]
	if !ok {
		email := "owner-" + org.String() + "@example.com"
		w.e.mustMember(org, email, kv.RoleOwner)
		u := w.e.mustAppSession(email, org, env)
		var err error
		if auth, err = w.e.db.AuthenticateSession(context.Background(), u.token, "test", "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		if w.sessions == nil {
			w.sessions = map[kv.Partition]kv.SessionAuth{}
		}
		w.sessions[part] = auth
	}
	p := pipeline.AppPrincipal(auth)
	if p.Partition != part {
		t.Fatalf("the app session's partition is %v, want %v %s", p.Partition, org, env)
	}
	held := slices.DeleteFunc(slices.Clone(scopes), func(sc string) bool { return sc == kv.ScopeAgentRun })
	p.SetScopes(held)
	w.app[secret] = p
}

// bearerSecret is the credential of an Authorization value ("" when it is no bearer).
func bearerSecret(auth string) string {
	secret, _ := strings.CutPrefix(auth, "Bearer ")
	return secret
}

// sendA2A sends the operation as a SendMessage of its skill with the key's A2A twin;
// idem, when set, is the messageId (other tenants reuse organisation A's), else each
// message has its own. A skill that starts a background job returns at once, its task
// working.
func (w *tenancyWorld) sendA2A(t *testing.T, o *pipeline.Operation, _ tenancyFixture, auth string, args map[string]any, idem string) tenancyAnswer {
	t.Helper()
	if twin, ok := w.agent[bearerSecret(auth)]; ok {
		auth = "Bearer " + twin
	}
	if idem == "" {
		idem = "tenancy-" + kv.NewV4().String()
	}
	rawArgs, _ := stdjson.Marshal(args)
	config := ""
	if o.Awaits != "" {
		config = `,"configuration":{"returnImmediately":true}`
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"t1","method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"data":{"skill":%q,"arguments":%s}}]}%s}}`,
		idem, o.Name, rawArgs, config)
	req, err := http.NewRequest("POST", w.e.url+a2a.Resource, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return a2aTenancyAnswer(t, resp.StatusCode, resp.Header, raw)
}

type a2aDataParts []struct {
	Data stdjson.RawMessage `json:"data"`
}

// a2aTenancyAnswer reduces an A2A answer to what a tenant may see of it: the result
// artifacts of a task that completed (or is working), the error a failed task carries,
// or the JSON-RPC error without its timestamp. Task and context ids, which every
// message gets afresh, are left out.
func a2aTenancyAnswer(t *testing.T, status int, h http.Header, raw []byte) tenancyAnswer {
	t.Helper()
	var msg struct {
		Result *struct {
			Task *struct {
				Status struct {
					State   string `json:"state"`
					Message *struct {
						Parts a2aDataParts `json:"parts"`
					} `json:"message"`
				} `json:"status"`
				Artifacts []struct {
					Parts a2aDataParts `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    []struct {
				Metadata map[string]string `json:"metadata"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := stdjson.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("A2A answered %d without JSON-RPC: %s", status, raw)
	}
	a := tenancyAnswer{status: status, header: h}
	switch {
	case msg.Error != nil:
		meta := map[string]string{}
		if len(msg.Error.Data) > 0 {
			meta = msg.Error.Data[0].Metadata
		}
		delete(meta, "timestamp")
		a.code = meta["code"]
		a.body, _ = stdjson.Marshal(map[string]any{"code": msg.Error.Code, "message": msg.Error.Message, "metadata": meta})
	case msg.Result != nil && msg.Result.Task != nil:
		task := msg.Result.Task
		switch task.Status.State {
		case "TASK_STATE_COMPLETED", "TASK_STATE_WORKING":
			a.ok = true
			var data []stdjson.RawMessage
			for _, art := range task.Artifacts {
				for _, part := range art.Parts {
					data = append(data, part.Data)
				}
			}
			a.body, _ = stdjson.Marshal(data)
		case "TASK_STATE_FAILED":
			if task.Status.Message != nil {
				for _, part := range task.Status.Message.Parts {
					if len(part.Data) > 0 {
						a.body = part.Data
					}
				}
			}
			var eb struct {
				Code string `json:"code"`
			}
			_ = stdjson.Unmarshal(a.body, &eb)
			a.code = eb.Code
		default:
			a.code, a.body = task.Status.State, raw
		}
	default:
		t.Fatalf("A2A answered %d with neither a task nor an error: %s", status, raw)
	}
	return a
}

// sendApp runs the operation as an app action, with the app principal standing for
// the key, on the input the app's form would have built (the fixture's arguments).
func (w *tenancyWorld) sendApp(t *testing.T, o *pipeline.Operation, _ tenancyFixture, auth string, args map[string]any, _ string) tenancyAnswer {
	t.Helper()
	p, ok := w.app[bearerSecret(auth)]
	if !ok {
		t.Fatalf("no app principal stands for %q", auth)
	}
	in := o.NewInput()
	raw, _ := stdjson.Marshal(args)
	if err := o.Plan.BindArgs(in, raw); err != nil {
		t.Fatalf("arguments of %s do not make its input: %v", o.Name, err)
	}
	out, err := app.Call[any](context.Background(), w.e.srv.app, p, o.Name, in)
	if err == nil {
		body, merr := pipeline.EncodeOutput(out)
		if merr != nil {
			t.Fatal(merr)
		}
		return tenancyAnswer{status: 200, body: body, ok: true}
	}
	ae := pipeline.ToAPIError(err).LocatedREST(o.Plan)
	body, _ := stdjson.Marshal(map[string]any{"code": ae.Code, "detail": ae.Detail, "fields": ae.Fields})
	return tenancyAnswer{status: ae.Status, body: body, code: ae.Code}
}

// A surface composed without one of the pipeline's steps is caught: its calls reach
// the operation without the step's mark, and the check names the step.
func TestResearchPipelineSkippedStep(t *testing.T) {
	passes := &researchPasses{}
	e := mustServe(t, withResearchTrace(passes.add))
	s := e.srv
	p, err := s.ResolveTokenIn(context.Background(), e.keys["a_live"], pipeline.ResourceAPI)
	if err != nil {
		t.Fatal(err)
	}
	whoami := s.OpByName("whoami")
	full := s.ResearchSteps(mcp.Wire)
	if len(full) != 4 {
		t.Fatalf("the pipeline composes %d steps before the operation, want scope, rate limit, idempotency and bind", len(full))
	}
	for i, skipped := range []pipeline.ResearchStep{pipeline.StepScope, pipeline.StepRate, pipeline.StepIdempotency, pipeline.StepBind} {
		t.Run("Err_Without_"+strings.ReplaceAll(skipped.String(), " ", "_"), func(t *testing.T) {
			steps := slices.Delete(slices.Clone(full), i, i+1)
			sf := &pipeline.Surface{Name: "skipping", Steps: steps, Render: func(*pipeline.Request, error) {}}
			// in is what a skipped bind leaves for the operation.
			r := &pipeline.Request{Ctx: context.Background(), SF: sf, Op: whoami, P: p, Args: []byte(`{}`), In: whoami.NewInput()}
			if err := sf.Chain(s.RunOperation)(r); err != nil {
				t.Fatalf("whoami without its %s step: %v", skipped, err)
			}
			var mine []pipeline.ResearchPass
			for _, pass := range passes.all() {
				if pass.Surface == "skipping" {
					mine = append(mine, pass)
				}
			}
			passes.mu.Lock()
			passes.passes = nil
			passes.mu.Unlock()
			problems := checkResearchPasses(mine, nil)
			if len(problems) != 1 || !strings.Contains(problems[0], "without its "+skipped.String()+" step") {
				t.Fatalf("a surface without its %s step: %q", skipped, problems)
			}
		})
	}
	t.Run("OK_Whole", func(t *testing.T) {
		rs := s.NewResearchSurface("whole", mcp.Wire, func(*pipeline.Request, error) {})
		r := &pipeline.Request{Ctx: context.Background(), Op: whoami, P: p, Args: []byte(`{}`)}
		rs.Run(r)
		var mine []pipeline.ResearchPass
		for _, pass := range passes.all() {
			if pass.Surface == "whole" {
				mine = append(mine, pass)
			}
		}
		if len(mine) != 1 {
			t.Fatalf("%d passes of the whole pipeline, want 1", len(mine))
		}
		if problems := checkResearchPasses(mine, nil); len(problems) != 0 {
			t.Fatalf("the whole pipeline: %q", problems)
		}
	})
}

// The rate step counts on every surface whose wire names a budget: a credential
// allowed one read a window gets its second refused over REST, over MCP and over A2A,
// each in its own wire shape. The app's actions count against no API budget
// (budgetNone): three in a row all run.
func TestResearchPipelineRateEverySurface(t *testing.T) {
	limits := pipeline.DefaultRateLimits()
	limits.Read, limits.Window = 1, time.Hour
	e := mustServe(t, withRateLimits(limits))
	ctx := context.Background()
	key := func(name string) string {
		_, secret, err := e.db.CreateKey(ctx, kv.KeyInput{OrgID: e.orgA.ID, Name: name, Environment: kv.EnvLive, Scopes: kv.AllScopes})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	w := &tenancyWorld{e: e, agent: map[string]string{}, app: map[string]*pipeline.Principal{}}
	whoami := e.srv.OpByName("whoami")
	for _, s := range tenancySurfaces {
		if s.name == "MCP-SDK" {
			continue // needs the matrix's SDK endpoint; the fast path's eras run the same tool chain
		}
		t.Run(s.name, func(t *testing.T) {
			secret := key(s.name)
			w.agent[secret] = secret
			if s.name == "App" {
				w.twin(t, secret, e.orgA.ID, kv.EnvLive, kv.AllScopes)
			}
			var answers []tenancyAnswer
			for range 3 {
				answers = append(answers, s.send(w, t, whoami, tenancyFixture{args: map[string]any{}}, "Bearer "+secret, map[string]any{}, ""))
			}
			if !answers[0].ok {
				t.Fatalf("first call: %d %s", answers[0].status, answers[0].body)
			}
			if s.pipeline == "app_action" {
				for i, a := range answers {
					if !a.ok {
						t.Fatalf("app action %d refused: %d %s", i+1, a.status, a.body)
					}
				}
				return
			}
			for i, a := range answers[1:] {
				if a.ok || a.code != "rate_limited" || (!s.inBand && a.status != 429) {
					t.Fatalf("call %d over a budget of one: %d %q %s", i+2, a.status, a.code, a.body)
				}
			}
		})
	}
}
