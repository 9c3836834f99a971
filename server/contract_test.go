package server

import (
	"bytes"
	"context"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// Where the hosted service's own client and the published contract meet: authoring
// job outcomes, the simulation persona limit, credits on whoami and the mode answer,
// each over REST and MCP alike.

// failedNothingSaved is the body of an authoring job that ended with nothing saved.
const failedNothingSaved = `{"status":"failed","study_id":null,"brief":null}`

func TestAuthoringRefusedAnswersFailed(t *testing.T) {
	e := mustServe(t)
	saved := e.mustStudy(e.orgA.ID, kv.EnvLive, "Saved before")
	cases := []struct {
		name, path, guidance string
		want                 func(t *testing.T, r response)
	}{
		{name: "OK_Hello", path: "/v1/api/studies", guidance: "hello"},
		{name: "OK_Poem", path: "/v1/api/studies", guidance: "Write me a poem"},
		{name: "OK_Harmful", path: "/v1/api/studies", guidance: "Interview users and ask them for their passwords"},
		{name: "OK_RefusedRefineKeepsSavedStudy", path: "/v1/api/studies/" + saved.ID.String() + ":refine", guidance: "Write me a poem",
			want: func(t *testing.T, r response) {
				var st research.AuthoringStatus
				r.json(t, &st)
				if st.Status != "failed" || st.StudyID == nil || *st.StudyID != saved.ID || st.Brief == nil || *st.Brief.Title != "Saved before" {
					t.Fatalf("a refused refine reports the saved study: %s", r.body)
				}
			}},
	}
	for _, era := range eras {
		cs := e.mustMCP(t, "a_live", era)
		schemas := outputSchemas(t, cs)
		for _, c := range cases {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				r := e.do("POST", c.path, "a_live", `{"guidance":"`+c.guidance+`"}`)
				if r.status != 202 {
					t.Fatalf("start: %d %s", r.status, r.body)
				}
				var h research.AuthoringJob
				r.json(t, &h)
				done := e.pollAuthoring("a_live", h.JobID)
				if done.status != 200 {
					t.Fatalf("REST: %d %s, want 200", done.status, done.body)
				}
				if c.want != nil {
					c.want(t, done)
				} else if string(done.body) != failedNothingSaved {
					t.Fatalf("REST: %s, want %s", done.body, failedNothingSaved)
				}
				res, sc := callTool(t, cs, "get_authoring_status", map[string]any{"job_id": h.JobID})
				if res.IsError {
					t.Fatalf("MCP: an error result %v for a failed job", sc)
				}
				if want := restJSON(t, done); !reflect.DeepEqual(any(sc), want) {
					t.Fatalf("MCP %v differs from REST %v", sc, want)
				}
				mustConform(t, schemas, "get_authoring_status", sc)
			})
		}
	}
}

// serveStore boots the real router on db, prepared by the caller, with keys (name →
// secret) the caller created there.
func serveStore(t *testing.T, db *kv.DB, keys map[string]string) *testEnv {
	t.Helper()
	off := pipeline.RateLimits{Off: true}
	runner := jobs.NewRunner(jobs.Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPluginHost(t)})
	t.Cleanup(func() { _ = runner.Close(context.Background()) })
	srv := New(Config{DB: db, Jobs: runner, Log: zerolog.Nop(), BaseURL: testBaseURL, RateLimits: &off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served // the server is gone before the next test starts
	})
	return &testEnv{t: t, db: db, srv: srv, runner: runner, url: "http://" + ln.Addr().String(), keys: keys}
}

// TestAuthoringUnconfirmed: 409 authoring_unconfirmed is left for the one case the
// spec names, a job that completed without a failure whose study change cannot be
// confirmed. Nothing in interviewd removes a study, so the store is made to hold such
// a job the only way it can: a data folder whose study record is gone (as after a
// partial restore), edited in the real bbolt file between two opens.
func TestAuthoringUnconfirmed(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Org A", Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "a_live", Environment: kv.EnvLive, Scopes: []string{"studies:read", "studies:write"}})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	author := func(guidance string) kv.ID {
		j, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: guidance}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	title := "Checkout friction"
	lost, kept, refused := author("lost"), author("kept"), author("hello")
	lostStudy, err := db.FinishAuthoring(ctx, p, lost, kv.Brief{Title: &title, VerbatimQuestions: []string{"Why?"}})
	if err != nil {
		t.Fatal(err)
	}
	keptStudy, err := db.FinishAuthoring(ctx, p, kept, kv.Brief{Title: &title, VerbatimQuestions: []string{"Why?"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FailJob(ctx, p, refused, kv.AuthoringFailed, "authoring refused: not a research request"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	removeStudyRecord(t, dir, lostStudy.ID)
	db, err = kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e := serveStore(t, db, map[string]string{"a_live": secret})

	cases := []struct {
		name       string
		job        kv.ID
		wantStatus int
		wantBody   string
		wantCode   string // MCP: the error result's code, "" for a result
	}{
		{name: "ErrCompletedUnconfirmed_409", job: lost, wantStatus: 409, wantBody: `"code":"authoring_unconfirmed"`, wantCode: "authoring_unconfirmed"},
		{name: "OK_Ready", job: kept, wantStatus: 200, wantBody: `{"status":"ready","study_id":"` + keptStudy.ID.String() + `","brief":{"title":"Checkout friction"`},
		{name: "OK_FailedNothingSaved", job: refused, wantStatus: 200, wantBody: failedNothingSaved},
	}
	for _, era := range eras {
		cs := e.mustMCP(t, "a_live", era)
		for _, c := range cases {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				r := e.do("GET", "/v1/api/studies/jobs/"+c.job.String(), "a_live", "")
				if r.status != c.wantStatus || !strings.Contains(string(r.body), c.wantBody) {
					t.Fatalf("REST: %d %s, want %d with %s", r.status, r.body, c.wantStatus, c.wantBody)
				}
				res, sc := callTool(t, cs, "get_authoring_status", map[string]any{"job_id": c.job.String()})
				if res.IsError != (c.wantCode != "") || (c.wantCode != "" && sc["code"] != c.wantCode) {
					t.Fatalf("MCP: isError %v %v, want code %q", res.IsError, sc, c.wantCode)
				}
				if c.wantCode == "" && !reflect.DeepEqual(any(sc), restJSON(t, r)) {
					t.Fatalf("MCP %v differs from REST %s", sc, r.body)
				}
			})
		}
	}
}

// removeStudyRecord deletes a study's record from a closed data folder's bbolt file.
func removeStudyRecord(t *testing.T, dir string, id kv.ID) {
	t.Helper()
	b, err := bolt.Open(dir+"/"+kv.FileName, 0o600, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	removed := 0
	err = b.Update(func(tx *bolt.Tx) error {
		studies := tx.Bucket([]byte("studies"))
		if studies == nil {
			t.Fatal("no studies bucket: the store's layout changed")
		}
		var keys [][]byte
		_ = studies.ForEach(func(k, _ []byte) error {
			if bytes.HasSuffix(k, id[:]) {
				keys = append(keys, append([]byte(nil), k...))
			}
			return nil
		})
		for _, k := range keys {
			if err := studies.Delete(k); err != nil {
				return err
			}
			removed++
		}
		return nil
	})
	if err != nil || removed != 1 {
		t.Fatalf("removed %d study records (%v), want 1", removed, err)
	}
}

func TestSimulationPersonaLimitMCP(t *testing.T) {
	e := mustServe(t)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	for _, era := range eras {
		cs := e.mustMCP(t, "a_live", era)
		t.Run(era+"/OK_Persona10000", func(t *testing.T) {
			res, sc := callTool(t, cs, "simulate_study", map[string]any{"study_id": st.ID.String(), "persona": strings.Repeat("é", 10000), "max_turns": 1})
			if res.IsError {
				t.Fatalf("a 10,000-character persona refused: %v", sc)
			}
			got := e.pollSimulation(t, "a_live", sc["job_id"].(string), "ended", simEnded)
			if got.Status != "completed" {
				t.Fatalf("simulation ended %+v", got)
			}
		})
		t.Run(era+"/ErrPersona10001", func(t *testing.T) {
			res, sc := callTool(t, cs, "simulate_study", map[string]any{"study_id": st.ID.String(), "persona": strings.Repeat("a", 10001)})
			errs, _ := sc["errors"].([]any)
			if !res.IsError || sc["code"] != "validation_error" || len(errs) != 1 {
				t.Fatalf("a 10,001-character persona: %v", sc)
			}
			item := errs[0].(map[string]any)
			if !reflect.DeepEqual(item["loc"], []any{"body", "persona"}) || item["type"] != "string_too_long" {
				t.Fatalf("error item %v does not name the persona", item)
			}
		})
	}
}

func TestWhoamiCredits(t *testing.T) {
	e := mustServe(t)
	cases := []struct {
		name        string
		key         string
		wantCredits any // nil: the field is absent
	}{
		{name: "OK_LiveKeyCarriesCredits", key: "a_live", wantCredits: float64(10)},
		{name: "OK_LiveKeyZeroCredits", key: "b_live", wantCredits: float64(0)},
		{name: "OK_TestKeyHasNone", key: "a_test"},
	}
	check := func(t *testing.T, surface string, got map[string]any, want any) {
		t.Helper()
		c, ok := got["credits"]
		if (want == nil) == ok || (want != nil && c != want) {
			t.Fatalf("%s: credits %v (present %v), want %v", surface, c, ok, want)
		}
	}
	for _, era := range eras {
		for _, c := range cases {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				r := e.do("GET", "/v1/api/me", c.key, "")
				var got map[string]any
				r.json(t, &got)
				check(t, "REST", got, c.wantCredits)
				cs := e.mustMCP(t, c.key, era)
				res, sc := callTool(t, cs, "whoami", map[string]any{})
				if res.IsError {
					t.Fatalf("MCP: %v", sc)
				}
				check(t, "MCP", sc, c.wantCredits)
				mustConform(t, outputSchemas(t, cs), "whoami", sc)
			})
		}
	}
	t.Run("OK_CreditsReadFresh", func(t *testing.T) {
		if _, err := e.db.AddCredits(t.Context(), e.orgB.ID, 7); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		e.do("GET", "/v1/api/me", "b_live", "").json(t, &got)
		check(t, "REST after credits add", got, float64(7))
	})
}

func TestModeNoCreditsNotice(t *testing.T) {
	e := mustServe(t)
	all := []string{"studies:read", "studies:write", "studies:golive", "links:read"}
	e.mustKey("b_test", e.orgB.ID, kv.EnvTest, all)
	mode := func(st kv.Study) string { return "/v1/api/studies/" + st.ID.String() + "/mode" }
	plain := func(st kv.Study, m string) string {
		return `{"mode":"` + m + `","url":"` + testBaseURL + "/i/" + st.LinkToken + `"}`
	}
	bLive := e.mustStudy(e.orgB.ID, kv.EnvLive, "No credits")
	bTest := e.mustStudy(e.orgB.ID, kv.EnvTest, "Test environment")
	aLive := e.mustStudy(e.orgA.ID, kv.EnvLive, "Has credits")
	notice := `{"mode":"live","url":"` + testBaseURL + "/i/" + bLive.LinkToken + `","notice":"The organisation has 0 credits`
	e.run(t, []scenario{
		{name: "OK_GoLiveNoCredits_Notice", method: "PUT", path: mode(bLive), key: "b_live", body: `{"mode":"live"}`, wantStatus: 200, wantBody: notice},
		{name: "OK_RepeatLiveNoCredits_Notice", method: "PUT", path: mode(bLive), key: "b_live", body: `{"mode":"live"}`, wantStatus: 200, wantBody: notice},
		{name: "OK_PausedNoNotice", method: "PUT", path: mode(bLive), key: "b_live", body: `{"mode":"paused"}`, wantStatus: 200,
			check: func(t *testing.T, r response) {
				if string(r.body) != plain(bLive, "paused") {
					t.Fatalf("%s", r.body)
				}
			}},
		{name: "OK_TestEnvironmentSpendsNoCredits", method: "PUT", path: mode(bTest), key: "b_test", body: `{"mode":"live"}`, wantStatus: 200,
			check: func(t *testing.T, r response) {
				if string(r.body) != plain(bTest, "live") {
					t.Fatalf("%s", r.body)
				}
			}},
		{name: "OK_WithCreditsNoNotice", method: "PUT", path: mode(aLive), key: "a_live", body: `{"mode":"live"}`, wantStatus: 200,
			check: func(t *testing.T, r response) {
				if string(r.body) != plain(aLive, "live") {
					t.Fatalf("%s", r.body)
				}
			}},
	})
	for _, era := range eras {
		t.Run(era+"/MCP", func(t *testing.T) {
			cs := e.mustMCP(t, "b_live", era)
			res, sc := callTool(t, cs, "set_study_mode", map[string]any{"study_id": bLive.ID.String(), "mode": "live"})
			if n, _ := sc["notice"].(string); res.IsError || !strings.HasPrefix(n, "The organisation has 0 credits") {
				t.Fatalf("MCP: %v", sc)
			}
			mustConform(t, outputSchemas(t, cs), "set_study_mode", sc)
		})
	}
	t.Run("OK_NoticeGoneOnceCreditsAdded", func(t *testing.T) {
		if _, err := e.db.AddCredits(t.Context(), e.orgB.ID, 1); err != nil {
			t.Fatal(err)
		}
		r := e.do("PUT", mode(bLive), "b_live", `{"mode":"live"}`)
		if r.status != 200 || string(r.body) != plain(bLive, "live") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}
