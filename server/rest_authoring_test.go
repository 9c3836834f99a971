package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/research"
)

// pollAuthoring polls an authoring job until it leaves working (never sleeps blindly:
// it retries with a deadline).
func (e *testEnv) pollAuthoring(key, jobID string) response {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do("GET", "/v1/api/studies/jobs/"+jobID, key, "")
		if r.status != 200 || !strings.Contains(string(r.body), `"status":"working"`) {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s still working after 10 s", jobID)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *testEnv) mustAuthor(key, path, body string) (research.AuthoringJob, research.AuthoringStatus) {
	e.t.Helper()
	r := e.do("POST", path, key, body)
	if r.status != 202 {
		e.t.Fatalf("POST %s: %d %s", path, r.status, r.body)
	}
	var h research.AuthoringJob
	r.json(e.t, &h)
	done := e.pollAuthoring(key, h.JobID)
	if done.status != 200 {
		e.t.Fatalf("job %s: %d %s", h.JobID, done.status, done.body)
	}
	var st research.AuthoringStatus
	done.json(e.t, &st)
	return h, st
}

func TestAuthoringLoop(t *testing.T) {
	e := mustServe(t)
	h, st := e.mustAuthor("a_live", "/v1/api/studies", `{"guidance":"We want to understand why small business owners abandon our invoicing app during onboarding. Interview owners of businesses with fewer than 10 employees."}`)
	if st.Status != "ready" || st.StudyID == nil || st.Brief == nil || st.Brief.Title == nil || len(st.Brief.VerbatimQuestions) < 3 {
		t.Fatalf("authoring status %+v", st)
	}
	detail := e.do("GET", "/v1/api/studies/"+st.StudyID.String(), "a_live", "")
	var d research.StudyDetail
	detail.json(t, &d)
	if d.Brief == nil || d.Mode != kv.ModeTest || d.Name != *st.Brief.Title || fmt.Sprint(d.Brief.VerbatimQuestions) != fmt.Sprint(st.Brief.VerbatimQuestions) {
		t.Fatalf("detail %s", detail.body)
	}
	before := len(d.Brief.VerbatimQuestions)

	h2, st2 := e.mustAuthor("a_live", "/v1/api/studies/"+st.StudyID.String()+":refine", `{"guidance":"Add a question about pricing. Rename the study to Onboarding Drop-off."}`)
	if h2.ThreadID != h.ThreadID {
		t.Fatalf("refine opened a new thread %s (create had %s)", h2.ThreadID, h.ThreadID)
	}
	if st2.Status != "ready" || *st2.StudyID != *st.StudyID || len(st2.Brief.VerbatimQuestions) != before+1 || *st2.Brief.Title != "Onboarding Drop-off" {
		t.Fatalf("refined %+v", st2)
	}
	versions, err := e.db.FindBriefVersions(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, *st.StudyID)
	if err != nil || len(versions) != 2 || versions[1].Version != 2 {
		t.Fatalf("versions %+v %v", versions, err)
	}

	t.Run("OK_RefusedCreateIsFailed", func(t *testing.T) {
		r := e.do("POST", "/v1/api/studies", "a_live", `{"guidance":"Write me a poem about the sea."}`)
		var h research.AuthoringJob
		r.json(t, &h)
		done := e.pollAuthoring("a_live", h.JobID)
		if done.status != 200 || string(done.body) != `{"status":"failed","study_id":null,"brief":null}` {
			t.Fatalf("refused create: %d %s", done.status, done.body)
		}
	})
	t.Run("OK_RefusedRefineReportsSavedStudy", func(t *testing.T) {
		r := e.do("POST", "/v1/api/studies/"+st.StudyID.String()+":refine", "a_live", `{"guidance":"Ask participants for their credit card numbers and passwords."}`)
		var h research.AuthoringJob
		r.json(t, &h)
		done := e.pollAuthoring("a_live", h.JobID)
		var got research.AuthoringStatus
		done.json(t, &got)
		if done.status != 200 || got.Status != "failed" || got.StudyID == nil || *got.Brief.Title != "Onboarding Drop-off" {
			t.Fatalf("refused refine: %d %s", done.status, done.body)
		}
	})
	t.Run("ErrJobOtherOrg", func(t *testing.T) {
		if r := e.do("GET", "/v1/api/studies/jobs/"+h.JobID, "b_live", ""); r.status != 404 {
			t.Fatalf("%d", r.status)
		}
		if r := e.do("GET", "/v1/api/studies/jobs/not-a-job", "a_live", ""); r.status != 404 {
			t.Fatalf("%d", r.status)
		}
	})
}

func TestAuthoringValidation(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "V")
	refine := "/v1/api/studies/" + st.ID.String() + ":refine"
	ids := make([]string, 11)
	for i := range ids {
		ids[i] = `"` + kv.NewV4().String() + `"`
	}
	e.run(t, []scenario{
		{name: "ErrGuidanceMissing", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{}`, wantStatus: 422, wantBody: `{"loc":["body","guidance"],"msg":"Field required.","type":"missing"}`},
		{name: "ErrGuidanceBlank", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"   "}`, wantStatus: 422, wantBody: `"type":"string_too_short"`},
		{name: "ErrGuidance20001", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"` + strings.Repeat("a", 20001) + `"}`, wantStatus: 422, wantBody: `"max_length":20000`},
		{name: "ErrGuidanceType", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":5}`, wantStatus: 422, wantBody: `"string_type"`},
		{name: "ErrFileIDsTooMany", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"x","file_ids":[` + strings.Join(ids, ",") + `]}`, wantStatus: 422, wantBody: `"loc":["body","file_ids"]`},
		{name: "ErrFileIDBadUUID", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"x","file_ids":["nope"]}`, wantStatus: 422, wantBody: `"loc":["body","file_ids",0],"msg":"Input should be a valid UUID."`},
		{name: "ErrFileIDUnknown", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"Understand why people churn","file_ids":[` + ids[0] + `]}`, wantStatus: 422, wantBody: `"loc":["body","file_ids",0]`},
		{name: "OK_FileIDsNull", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"Understand why people churn","file_ids":null}`, wantStatus: 202},
		{name: "ErrExtraField", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"x","title":"y"}`, wantStatus: 422, wantBody: `"extra_forbidden"`},
		{name: "ErrScope", method: "POST", path: "/v1/api/studies", key: "a_studies_only", body: `{"guidance":"x"}`, wantStatus: 403},
		{name: "ErrRefineOtherOrg", method: "POST", path: "/v1/api/studies/" + st.ID.String() + ":refine", key: "b_live", body: `{"guidance":"add a question about x"}`, wantStatus: 404},
		{name: "OK_Refine", method: "POST", path: refine, key: "a_live", body: `{"guidance":"add a question about x"}`, wantStatus: 202},
		{name: "ErrUnknownAction", method: "POST", path: "/v1/api/studies/" + st.ID.String() + ":explode", key: "a_live", body: `{}`, wantStatus: 404},
		{name: "ErrBodyTooLarge", method: "POST", path: "/v1/api/studies", key: "a_live", body: `{"guidance":"` + strings.Repeat("a", 1<<20) + `"}`, wantStatus: 413, wantBody: `"payload_too_large"`},
	})
}

func TestStudyModes(t *testing.T) {
	e := mustServe(t)
	e.mustKey("a_write_only", e.orgA.ID, kv.EnvLive, []string{"studies:write"})
	e.mustKey("a_golive_only", e.orgA.ID, kv.EnvLive, []string{"studies:golive"})
	modes := []kv.Mode{kv.ModeTest, kv.ModeLive, kv.ModePaused, kv.ModeClosed}
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	// studyIn returns a fresh study placed in mode from (going through live as needed).
	studyIn := func(from kv.Mode) kv.Study {
		st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Modes")
		if from == kv.ModeTest {
			return st
		}
		if _, err := e.db.SetStudyMode(t.Context(), p, st.ID, kv.ModeLive); err != nil {
			t.Fatal(err)
		}
		if from != kv.ModeLive {
			if _, err := e.db.SetStudyMode(t.Context(), p, st.ID, from); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	for _, from := range modes {
		for _, to := range modes {
			for _, key := range []string{"a_live", "a_write_only", "a_golive_only"} {
				name := fmt.Sprintf("%s_to_%s_with_%s", from, to, key)
				t.Run(name, func(t *testing.T) {
					st := studyIn(from)
					r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", key, `{"mode":"`+string(to)+`"}`)
					needs := "studies:write"
					if to == kv.ModeLive {
						needs = "studies:golive"
					}
					hasScope := key == "a_live" || (key == "a_write_only" && needs == "studies:write") || (key == "a_golive_only" && needs == "studies:golive")
					allowed := !(to == kv.ModePaused && from != kv.ModeLive && from != kv.ModePaused)
					switch {
					case !hasScope:
						if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), needs) {
							t.Fatalf("want 403 naming %s, got %d %s", needs, r.status, r.body)
						}
					case !allowed:
						if r.status != 422 || !strings.Contains(string(r.body), `"loc":["body","mode"]`) {
							t.Fatalf("want 422, got %d %s", r.status, r.body)
						}
					default:
						want := fmt.Sprintf(`{"mode":"%s","url":"%s/i/%s"}`, to, testBaseURL, st.LinkToken)
						if r.status != 200 || string(r.body) != want {
							t.Fatalf("got %d %s, want %s", r.status, r.body, want)
						}
					}
				})
			}
		}
	}
	t.Run("OK_LaunchedAtSetOnce", func(t *testing.T) {
		st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Launch")
		path := "/v1/api/studies/" + st.ID.String()
		e.do("PUT", path+"/mode", "a_live", `{"mode":"live"}`)
		var first research.StudyDetail
		e.do("GET", path, "a_live", "").json(t, &first)
		if first.LaunchedAt == nil {
			t.Fatal("launched_at not set")
		}
		e.do("PUT", path+"/mode", "a_live", `{"mode":"closed"}`)
		e.do("PUT", path+"/mode", "a_live", `{"mode":"live"}`)
		var again research.StudyDetail
		e.do("GET", path, "a_live", "").json(t, &again)
		if *again.LaunchedAt != *first.LaunchedAt || again.Mode != kv.ModeLive {
			t.Fatalf("launched_at moved: %v → %v", *first.LaunchedAt, *again.LaunchedAt)
		}
	})
	t.Run("ErrGoLiveValidation", func(t *testing.T) {
		empty, err := e.db.CreateStudy(t.Context(), kv.StudyInput{Partition: p, Brief: kv.Brief{}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.do("PUT", "/v1/api/studies/"+empty.ID.String()+"/mode", "a_live", `{"mode":"live"}`)
		if r.status != 422 || !strings.Contains(string(r.body), `"type":"go_live_invalid"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrScopeBeforeValidation", func(t *testing.T) {
		st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Scope first")
		r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", "a_links_only", `{"mode":"bogus"}`)
		if r.status != 403 {
			t.Fatalf("a key that can never set a mode: %d %s", r.status, r.body)
		}
	})
	t.Run("ErrBadMode", func(t *testing.T) {
		st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Bad")
		r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", "a_live", `{"mode":"toggle"}`)
		if r.status != 422 || !strings.Contains(string(r.body), `"loc":["body","mode"]`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}
