package server

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/moderator/chattest"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// gatedEngine is an OpenAI engine on a gated fake endpoint that never retries:
// simulations on it stay running, holding their organisation's slots, until the test
// moves them on.
func gatedEngine(tb testing.TB, g *chattest.Gated) moderator.Engine {
	tb.Helper()
	o, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: g.URL + "/v1", Model: "gated", MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// mustServeGated boots a server whose engine is a gated fake. The fake lets go of
// held requests before the runner is closed, so cleanup never waits on it.
func mustServeGated(t *testing.T) (*testEnv, *chattest.Gated) {
	t.Helper()
	g := chattest.NewGated(t)
	e := mustServeEngine(t, gatedEngine(t, g))
	t.Cleanup(g.Stop)
	return e, g
}

// restartJobs replaces the server and its runner as a crash and a restart would: the
// old runner is stopped without waiting (running simulations stay unfinished in kv),
// and a new runner on the same file, with engine m, resumes them behind a new server.
func (e *testEnv) restartJobs(m moderator.Engine) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	crashed, stop := context.WithCancel(context.Background())
	stop()
	_ = e.runner.Close(crashed)
	runner := jobs.NewRunner(jobs.Config{DB: e.db, Moderator: m, Log: zerolog.Nop()})
	e.t.Cleanup(func() { _ = runner.Close(crashed) })
	if err := runner.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	off := pipeline.RateLimits{Off: true}
	srv := New(Config{DB: e.db, Jobs: runner, Log: zerolog.Nop(), BaseURL: testBaseURL, RateLimits: &off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served // the server is gone before the next test starts
	})
	e.srv, e.runner, e.url = srv, runner, "http://"+ln.Addr().String()
}

// mustSimulate starts a simulation and returns its job id.
func (e *testEnv) mustSimulate(key string, study kv.ID, body string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/api/studies/"+study.String()+":simulate", key, body)
	if r.status != 202 {
		e.t.Fatalf("simulate: %d %s", r.status, r.body)
	}
	var h research.SimulationJob
	r.json(e.t, &h)
	return h.JobID
}

// pollSimulation polls a simulation's status until ok says so, with a deadline.
func (e *testEnv) pollSimulation(t testing.TB, key, jobID, what string, ok func(research.SimulationStatus) bool) research.SimulationStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do("GET", "/v1/api/simulations/"+jobID, key, "")
		if r.status != 200 {
			t.Fatalf("simulation status: %d %s", r.status, r.body)
		}
		var st research.SimulationStatus
		r.json(t, &st)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("simulation %s not %s after 10 s: %s", jobID, what, r.body)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// mustRehearsalStudy makes a study with a screener and two verbatim questions.
func (e *testEnv) mustRehearsalStudy(org kv.ID, env kv.Environment) kv.Study {
	e.t.Helper()
	title := "Online groceries"
	st, err := e.db.CreateStudy(context.Background(), kv.StudyInput{
		Partition: kv.Partition{Org: org, Env: env},
		Brief: kv.Brief{Title: &title, Objectives: []string{"Learn why people switch grocery delivery services"},
			PreInterviewQuestions: []string{"What do you do for work?"},
			VerbatimQuestions:     []string{"Tell me about the last time you ordered groceries online.", "What would make you switch services?"}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func simEnded(st research.SimulationStatus) bool {
	return st.Status == "completed" || st.Status == "failed"
}

func simLines(n int) func(research.SimulationStatus) bool {
	return func(st research.SimulationStatus) bool { return len(st.Turns) == n }
}

func TestSimulateValidation(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Rehearse")
	live := e.mustStudy(e.orgA.ID, kv.EnvLive, "Live")
	if r := e.do("PUT", "/v1/api/studies/"+live.ID.String()+"/mode", "a_live", `{"mode":"live"}`); r.status != 200 {
		t.Fatalf("go live: %d %s", r.status, r.body)
	}
	path := "/v1/api/studies/" + st.ID.String() + ":simulate"
	// Accepted simulations are waited out, so the table never meets the organisation's limit.
	finishes := func(t *testing.T, r response) {
		var h research.SimulationJob
		r.json(t, &h)
		if got := e.pollSimulation(t, "a_live", h.JobID, "ended", simEnded); got.Status != "completed" {
			t.Fatalf("simulation ended %+v", got)
		}
	}
	e.run(t, []scenario{
		{name: "OK_EmptyObject", method: "POST", path: path, key: "a_live", body: `{}`, wantStatus: 202, wantBody: `"job_id":"`, check: finishes},
		{name: "OK_NullPersona", method: "POST", path: path, key: "a_live", body: `{"persona":null,"max_turns":1}`, wantStatus: 202, check: finishes},
		{name: "OK_MaxTurns200", method: "POST", path: path, key: "a_live", body: `{"max_turns":200}`, wantStatus: 202, check: finishes},
		{name: "OK_Persona10000", method: "POST", path: path, key: "a_live", body: `{"persona":"` + strings.Repeat("é", 10000) + `","max_turns":1}`, wantStatus: 202, check: finishes},
		{name: "ErrMaxTurns0", method: "POST", path: path, key: "a_live", body: `{"max_turns":0}`, wantStatus: 422, wantBody: `"loc":["body","max_turns"],"msg":"Input should be greater than or equal to 1."`},
		{name: "ErrMaxTurns201", method: "POST", path: path, key: "a_live", body: `{"max_turns":201}`, wantStatus: 422, wantBody: `"loc":["body","max_turns"],"msg":"Input should be less than or equal to 200."`},
		{name: "ErrMaxTurnsString", method: "POST", path: path, key: "a_live", body: `{"max_turns":"3"}`, wantStatus: 422, wantBody: `"type":"int_type"`},
		{name: "ErrMaxTurnsFraction", method: "POST", path: path, key: "a_live", body: `{"max_turns":2.5}`, wantStatus: 422, wantBody: `"type":"int_type"`},
		{name: "ErrPersona10001", method: "POST", path: path, key: "a_live", body: `{"persona":"` + strings.Repeat("a", 10001) + `"}`, wantStatus: 422, wantBody: `"loc":["body","persona"],"msg":"String should have at most 10000 characters.","type":"string_too_long","ctx":{"max_length":10000}`},
		{name: "ErrPersonaType", method: "POST", path: path, key: "a_live", body: `{"persona":5}`, wantStatus: 422, wantBody: `"type":"string_type"`},
		{name: "ErrExtraField", method: "POST", path: path, key: "a_live", body: `{"turns":3}`, wantStatus: 422, wantBody: `"extra_forbidden"`},
		{name: "ErrNoBody", method: "POST", path: path, key: "a_live", body: ``, wantStatus: 422, wantBody: `"loc":["body"]`},
		{name: "ErrStudyLive", method: "POST", path: "/v1/api/studies/" + live.ID.String() + ":simulate", key: "a_live", body: `{}`, wantStatus: 409, wantBody: `"code":"study_live"`},
		{name: "ErrScope", method: "POST", path: path, key: "a_studies_only", body: `{}`, wantStatus: 403, wantBody: `"code":"insufficient_scope"`},
		{name: "ErrNoCredential", method: "POST", path: path, key: "", body: `{}`, wantStatus: 401},
		{name: "ErrOtherOrg", method: "POST", path: path, key: "b_live", body: `{}`, wantStatus: 404},
		{name: "ErrOtherEnvironment", method: "POST", path: path, key: "a_test", body: `{}`, wantStatus: 404},
		{name: "ErrUnknownStudy", method: "POST", path: "/v1/api/studies/" + kv.NewV4().String() + ":simulate", key: "a_live", body: `{}`, wantStatus: 404},
		{name: "ErrBadStudyID", method: "POST", path: "/v1/api/studies/nope:simulate", key: "a_live", body: `{}`, wantStatus: 422, wantBody: `"type":"uuid_parsing"`},
	})
	t.Run("OK_LiveRefusedAtTheLimitToo", func(t *testing.T) {
		// What is wrong with the request is reported before the organisation's limit.
		r := e.do("POST", "/v1/api/studies/"+live.ID.String()+":simulate", "a_live", `{"max_turns":1}`)
		if r.status != 409 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestSimulationStatus(t *testing.T) {
	e := mustServe(t)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	id := e.mustSimulate("a_live", st.ID, `{"persona":"I'm a nurse who works night shifts.","max_turns":3}`)
	done := e.pollSimulation(t, "a_live", id, "ended", simEnded)
	if done.Status != "completed" || !done.Ready || done.Error != nil || len(done.Turns) != 6 {
		t.Fatalf("completed status %+v", done)
	}
	for i, turn := range done.Turns {
		wantSpeaker := []string{"interviewer", "participant"}[i%2]
		if turn.Speaker != wantSpeaker || turn.TurnNumber != i/2+1 || turn.Text == "" {
			t.Fatalf("line %d: %+v", i, turn)
		}
	}
	if done.Turns[2].Text != st.Brief.VerbatimQuestions[0] {
		t.Fatalf("the verbatim question was not asked as written: %q", done.Turns[2].Text)
	}
	if !strings.Contains(done.Turns[1].Text, "nurse") {
		t.Fatalf("the reply to %q ignores the persona: %q", done.Turns[0].Text, done.Turns[1].Text)
	}
	t.Run("OK_ExactShape", func(t *testing.T) {
		// Three turns do not reach the closing: the fields of the contract and the notice.
		r := e.do("GET", "/v1/api/simulations/"+id, "a_studies_only", "")
		var raw map[string]json.RawMessage
		r.json(t, &raw)
		if r.status != 200 || len(raw) != 5 || string(raw["error"]) != "null" || string(raw["ready"]) != "true" || string(raw["status"]) != `"completed"` ||
			!strings.HasPrefix(string(raw["notice"]), `"Stopped after 3 turns, the turn limit`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var turns []map[string]json.RawMessage
		if err := json.Unmarshal(raw["turns"], &turns); err != nil || len(turns[0]) != 3 || string(turns[0]["turn_number"]) != "1" {
			t.Fatalf("turns %s %v", raw["turns"], err)
		}
	})
	t.Run("OK_NotAnInterview", func(t *testing.T) {
		for _, key := range []string{"a_live", "a_test"} {
			r := e.do("GET", "/v1/api/interviews", key, "")
			if r.status != 200 || string(r.body) != "[]" {
				t.Fatalf("%s interviews: %d %s", key, r.status, r.body)
			}
		}
	})
	auth, _ := e.mustAuthor("a_live", "/v1/api/studies", `{"guidance":"Understand why shoppers abandon checkout on mobile. Interview people who left in the last month."}`)
	e.run(t, []scenario{
		{name: "ErrScope", method: "GET", path: "/v1/api/simulations/" + id, key: "a_links_only", wantStatus: 403},
		{name: "ErrOtherOrg", method: "GET", path: "/v1/api/simulations/" + id, key: "b_live", wantStatus: 404},
		{name: "ErrOtherEnvironment", method: "GET", path: "/v1/api/simulations/" + id, key: "a_test", wantStatus: 404},
		{name: "ErrAuthoringJobID", method: "GET", path: "/v1/api/simulations/" + auth.JobID, key: "a_live", wantStatus: 404},
		{name: "ErrSimulationAsAuthoringJob", method: "GET", path: "/v1/api/studies/jobs/" + id, key: "a_live", wantStatus: 404},
		{name: "ErrNotAJobID", method: "GET", path: "/v1/api/simulations/not-a-job", key: "a_live", wantStatus: 404},
		{name: "ErrUnknownJob", method: "GET", path: "/v1/api/simulations/" + kv.NewV4().String(), key: "a_live", wantStatus: 404},
	})
}

// TestSimulationGrowingTranscript holds the model at each call and watches the API
// show the transcript growing turn by turn while the simulation runs.
func TestSimulationGrowingTranscript(t *testing.T) {
	e, g := mustServeGated(t)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvTest)
	// Five turns leave room for a follow-up after each verbatim question.
	id := e.mustSimulate("a_test", st.ID, `{"max_turns":5}`)
	g.WaitArrived(t, 1)
	got := e.pollSimulation(t, "a_test", id, "running", func(s research.SimulationStatus) bool { return s.Status == "running" })
	if got.Ready || got.Error != nil || len(got.Turns) != 0 {
		t.Fatalf("before the first reply: %+v", got)
	}
	g.Let(t, chattest.Answer{Text: "I'm a nurse."})
	g.WaitArrived(t, 1) // turn 2: the reply to the first verbatim question (no probe after a screener)
	got = e.pollSimulation(t, "a_test", id, "at turn 1", simLines(2))
	if got.Status != "running" || got.Ready || got.Turns[1] != (research.SimulationTurn{Speaker: "participant", Text: "I'm a nurse.", TurnNumber: 1}) {
		t.Fatalf("after turn 1: %+v", got)
	}
	g.Let(t, chattest.Answer{Text: "Last Tuesday, in a hurry."})
	g.WaitArrived(t, 1) // turn 3 starts with a probe request
	got = e.pollSimulation(t, "a_test", id, "at turn 2", simLines(4))
	if got.Status != "running" || got.Turns[2].Text != st.Brief.VerbatimQuestions[0] || got.Turns[3].Text != "Last Tuesday, in a hurry." || got.Turns[3].TurnNumber != 2 {
		t.Fatalf("after turn 2: %+v", got)
	}
	g.Let(t, chattest.Answer{}) // no probe: on to the next verbatim question
	g.WaitArrived(t, 1)
	g.Let(t, chattest.Answer{Text: "A cheaper delivery slot."})
	g.WaitArrived(t, 1)         // turn 4 starts with a probe request
	g.Let(t, chattest.Answer{}) // none: the closing
	got = e.pollSimulation(t, "a_test", id, "ended", simEnded)
	if got.Status != "completed" || !got.Ready || got.Error != nil || len(got.Turns) != 7 || got.Turns[4].Text != st.Brief.VerbatimQuestions[1] || got.Turns[5].TurnNumber != 3 ||
		got.Turns[6].Text != moderator.ScriptClosing || got.Notice != nil {
		t.Fatalf("final: %+v", got)
	}
}

// TestSimulationLimitREST: three simulations held running (across both environments of
// the organisation) fill its slots; a fourth is 429 simulation_limit with Retry-After.
// A slot frees when one completes, when one fails, and across a restart the count is
// rebuilt from the unfinished simulations and freed as they finish.
func TestSimulationLimitREST(t *testing.T) {
	e, g := mustServeGated(t)
	live := e.mustStudy(e.orgA.ID, kv.EnvLive, "Live env")
	test := e.mustStudy(e.orgA.ID, kv.EnvTest, "Test env")
	body := `{"max_turns":1}`
	type started struct{ key, id string }
	r := e.do("POST", "/v1/api/studies/"+live.ID.String()+":simulate", "a_live", body, "Idempotency-Key", "sim-1")
	if r.status != 202 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var first research.SimulationJob
	r.json(t, &first)
	held := []started{{"a_live", first.JobID}, {"a_live", e.mustSimulate("a_live", live.ID, body)}, {"a_test", e.mustSimulate("a_test", test.ID, body)}}
	g.WaitArrived(t, 3)
	refused := func(t *testing.T) {
		t.Helper()
		for _, c := range []struct{ key, study string }{{"a_live", live.ID.String()}, {"a_test", test.ID.String()}} {
			r := e.do("POST", "/v1/api/studies/"+c.study+":simulate", c.key, body)
			retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
			if r.status != 429 || !strings.Contains(string(r.body), `"code":"simulation_limit"`) || retry < 1 {
				t.Fatalf("%s fourth simulation: %d %s Retry-After %q", c.key, r.status, r.body, r.header.Get("Retry-After"))
			}
		}
	}
	// endedAmong polls the held simulations until one has the given status.
	endedAmong := func(t *testing.T, status string) research.SimulationStatus {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			for _, h := range held {
				var st research.SimulationStatus
				e.do("GET", "/v1/api/simulations/"+h.id, h.key, "").json(t, &st)
				if st.Status == status {
					return st
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no held simulation %s after 10 s", status)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	refused(t)
	t.Run("OK_ReplayAtTheLimit", func(t *testing.T) {
		r := e.do("POST", "/v1/api/studies/"+live.ID.String()+":simulate", "a_live", body, "Idempotency-Key", "sim-1")
		var h research.SimulationJob
		r.json(t, &h)
		if r.status != 202 || h.JobID != first.JobID || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", r.status, r.body)
		}
	})
	t.Run("OK_RefusalNotRemembered", func(t *testing.T) {
		r := e.do("POST", "/v1/api/studies/"+live.ID.String()+":simulate", "a_live", body, "Idempotency-Key", "sim-later")
		if r.status != 429 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OK_SlotFreesOnCompletion", func(t *testing.T) {
		g.Let(t, chattest.Answer{Text: "Done."})
		if st := endedAmong(t, "completed"); !st.Ready || len(st.Turns) != 2 || st.Turns[1].Text != "Done." {
			t.Fatalf("completed %+v", st)
		}
		// The slot frees just after the record ends; the refused key is retried until
		// admitted, and is not a replay of the refusal.
		e.pollAdmitted(t, "a_live", live.ID, body, "sim-later")
		g.WaitArrived(t, 1)
		refused(t)
	})
	t.Run("OK_SlotFreesOnFailure", func(t *testing.T) {
		g.Let(t, chattest.Answer{Fail: true})
		if st := endedAmong(t, "failed"); st.Ready || st.Error == nil || !strings.Contains(*st.Error, "turn 1") || len(st.Turns) != 0 {
			t.Fatalf("failed %+v", st)
		}
		e.pollAdmitted(t, "a_test", test.ID, body, "")
		g.WaitArrived(t, 1)
		refused(t)
	})
	t.Run("OK_RestartRebuildsCount", func(t *testing.T) {
		g2 := chattest.NewGated(t)
		e.restartJobs(gatedEngine(t, g2))
		t.Cleanup(g2.Stop)
		g2.WaitArrived(t, 3) // the three unfinished simulations resumed
		refused(t)
		for i := 0; i < 3; i++ {
			g2.Let(t, chattest.Answer{Text: "After the restart."})
		}
		e.pollAdmitted(t, "a_live", live.ID, body, "")
	})
	t.Run("OK_NeverInterviews", func(t *testing.T) {
		for _, key := range []string{"a_live", "a_test"} {
			if r := e.do("GET", "/v1/api/interviews", key, ""); r.status != 200 || string(r.body) != "[]" {
				t.Fatalf("%s interviews: %d %s", key, r.status, r.body)
			}
		}
	})
	t.Run("OK_OtherOrgUnaffected", func(t *testing.T) {
		b := e.mustStudy(e.orgB.ID, kv.EnvLive, "Org B")
		e.mustSimulate("b_live", b.ID, body)
	})
}

// pollAdmitted retries a simulation start refused for the limit until it is accepted,
// with a deadline, and returns its job id.
func (e *testEnv) pollAdmitted(t testing.TB, key string, study kv.ID, body, idemKey string) string {
	t.Helper()
	var headers []string
	if idemKey != "" {
		headers = []string{"Idempotency-Key", idemKey}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do("POST", "/v1/api/studies/"+study.String()+":simulate", key, body, headers...)
		switch {
		case r.status == 202:
			var h research.SimulationJob
			r.json(t, &h)
			return h.JobID
		case r.status != 429:
			t.Fatalf("simulate: %d %s", r.status, r.body)
		case time.Now().After(deadline):
			t.Fatal("no simulation slot freed after 10 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestSimulateIdempotency(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Idem")
	path := "/v1/api/studies/" + st.ID.String() + ":simulate"
	body := `{"persona":"A busy parent","max_turns":2}`
	r1 := e.do("POST", path, "a_live", body, "Idempotency-Key", "k1")
	r2 := e.do("POST", path, "a_live", `{"max_turns":2, "persona":"A busy parent"}`, "Idempotency-Key", "k1")
	if r1.status != 202 || r2.status != 202 || string(r1.body) != string(r2.body) || r2.header.Get("Idempotent-Replayed") != "true" || r1.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first %d %s, replay %d %s %v", r1.status, r1.body, r2.status, r2.body, r2.header)
	}
	var h research.SimulationJob
	r1.json(t, &h)
	e.pollSimulation(t, "a_live", h.JobID, "ended", simEnded)
	t.Run("ErrReusedWithOtherBody", func(t *testing.T) {
		r := e.do("POST", path, "a_live", `{"max_turns":3}`, "Idempotency-Key", "k1")
		if r.status != 409 || !strings.Contains(string(r.body), `"code":"idempotency_key_reused"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OK_InvalidNotRemembered", func(t *testing.T) {
		if r := e.do("POST", path, "a_live", `{"max_turns":0}`, "Idempotency-Key", "k2"); r.status != 422 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := e.do("POST", path, "a_live", `{"max_turns":1}`, "Idempotency-Key", "k2"); r.status != 202 || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected retry: %d %s", r.status, r.body)
		}
	})
	t.Run("OK_OtherEnvironmentOwnKeys", func(t *testing.T) {
		other := e.mustStudy(e.orgA.ID, kv.EnvTest, "Idem test")
		r := e.do("POST", "/v1/api/studies/"+other.ID.String()+":simulate", "a_test", body, "Idempotency-Key", "k1")
		if r.status != 202 || r.header.Get("Idempotent-Replayed") != "" || string(r.body) == string(r1.body) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}
