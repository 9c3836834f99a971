package server

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/plugins/plugintest"
	"interviewd/server/research"
)

const (
	analysisEmail = "jane.doe@example.com"
	analysisNote  = "ANALYSIS-NOTE-7f3a: for the interviewer only"
)

// pollAnalysis polls an analysis job until it leaves queued/running.
func (e *testEnv) pollAnalysis(key, jobID string) research.AnalysisStatus {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := e.do("GET", "/v1/api/analyses/"+jobID, key, "")
		if r.status != 200 {
			e.t.Fatalf("analysis status: %d %s", r.status, r.body)
		}
		var st research.AnalysisStatus
		r.json(e.t, &st)
		if st.Status == kv.AnalysisCompleted || st.Status == kv.AnalysisFailed {
			return st
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("analysis %s still %s after 2 minutes", jobID, st.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mustAnalyse starts an analysis of study over REST and waits for it to complete.
func (e *testEnv) mustAnalyse(key string, study kv.ID) research.AnalysisStatus {
	e.t.Helper()
	r := e.do("POST", "/v1/api/studies/"+study.String()+"/analysis", key, "")
	if r.status != 202 {
		e.t.Fatalf("start analysis: %d %s", r.status, r.body)
	}
	var job research.AnalysisJob
	r.json(e.t, &job)
	st := e.pollAnalysis(key, job.JobID)
	if st.Status != kv.AnalysisCompleted || st.Version == nil || st.Error != nil || st.StudyID != study.String() || st.JobID != job.JobID {
		e.t.Fatalf("analysis ended %+v", st)
	}
	return st
}

func (e *testEnv) getAnalysis(key string, study kv.ID, query string) (response, analysis.Analysis) {
	e.t.Helper()
	r := e.do("GET", "/v1/api/studies/"+study.String()+"/analysis"+query, key, "")
	var a analysis.Analysis
	if r.status == 200 {
		r.json(e.t, &a)
	}
	return r, a
}

func quotesOf(a analysis.Analysis) []analysis.Quote {
	var out []analysis.Quote
	for _, o := range a.Objectives {
		for _, f := range o.Findings {
			out = append(append(out, f.Support...), f.Contrary...)
		}
	}
	for _, th := range a.Themes {
		out = append(out, th.Quotes...)
	}
	for _, q := range a.Questions {
		for _, g := range q.Groups {
			out = append(out, g.Quotes...)
		}
	}
	for _, s := range a.Suggestions {
		out = append(out, s.Quotes...)
	}
	return out
}

func analysisStudyBrief() kv.Brief {
	brief := plainBrief("Shift planning", "How do you schedule shifts today?", "What goes wrong with the schedule?")
	brief.Objectives = []string{"Understand how teams schedule their shifts", "Learn what teams would pay for"}
	brief.PreInterviewQuestions = []string{"How many people are on your team?"}
	return brief
}

func TestAnalysisEndToEnd(t *testing.T) {
	e := mustServe(t)
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, analysisStudyBrief())
	never := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, analysisStudyBrief())
	// A rehearsal in test mode never counts.
	e.completeInterview(st.LinkToken, []string{"REHEARSAL-ONLY answer about shifts"})
	if n := e.runner.PendingAnalyses(); n != 0 {
		t.Fatalf("a rehearsal asked for %d analyses", n)
	}
	e.mustMode(p, st.ID, kv.ModeLive)

	t.Run("OK_EmptyStudyEveryObjectiveAGap", func(t *testing.T) {
		done := e.mustAnalyse("a_live", st.ID)
		r, a := e.getAnalysis("a_live", st.ID, "")
		if r.status != 200 || *done.Version != 1 || a.Version != 1 || a.InterviewsIncluded != 0 || len(a.Objectives) != 2 || len(a.Questions) != 3 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		for _, o := range a.Objectives {
			if !o.Gap || len(o.Findings) != 0 || o.Coverage.Of != 0 {
				t.Fatalf("objective %+v is not an empty gap", o)
			}
		}
		if a.Themes == nil || a.Suggestions == nil || !strings.Contains(string(r.body), `"themes":[]`) {
			t.Fatalf("empty lists are not []: %s", r.body)
		}
	})

	answers := []string{
		"Five of us; the team lead at " + analysisEmail + " will schedule shifts every Friday.",
		"We schedule shifts in a spreadsheet that " + analysisEmail + " keeps, and teams swap by phone.",
		"The schedule breaks when " + analysisEmail + " is away and shifts clash.",
	}
	linkA := e.linkFor(st, kv.AudiencePerson, map[string]string{"plan": "pro", "email": analysisEmail}, analysisNote)
	e.completeInterview(linkA, answers)
	if n := e.runner.PendingAnalyses(); n != 1 {
		t.Fatalf("a completed live interview left %d analyses pending, want 1", n)
	}
	e.completeInterview(st.LinkToken, answers[1:])
	if n := e.runner.PendingAnalyses(); n != 1 {
		t.Fatalf("two completed interviews of one study left %d analyses pending, want 1", n)
	}
	e.participant(st.LinkToken).open() // in progress: not analysed

	t.Run("ErrNeverLive", func(t *testing.T) {
		for _, r := range []response{
			e.do("POST", "/v1/api/studies/"+never.ID.String()+"/analysis", "a_live", ""),
			e.do("GET", "/v1/api/studies/"+never.ID.String()+"/analysis", "a_live", ""),
		} {
			var body map[string]any
			r.json(t, &body)
			if r.status != 409 || body["code"] != "study_not_live" || !strings.Contains(body["detail"].(string), "Test mode: no analysis") || len(body) != 2 {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		for _, r := range []response{
			e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "b_live", ""),
			e.do("GET", "/v1/api/studies/"+st.ID.String()+"/analysis", "b_live", ""),
		} {
			if r.status != 404 || !strings.Contains(string(r.body), `"code":"not_found"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
	})
	t.Run("ErrTestEnvironment", func(t *testing.T) {
		for _, r := range []response{
			e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_test", ""),
			e.do("GET", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_test", ""),
		} {
			if r.status != 403 || !strings.Contains(string(r.body), `"code":"test_environment"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
	})
	t.Run("ErrScope", func(t *testing.T) {
		for _, r := range []response{
			e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_studies_only", ""),
			e.do("GET", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_studies_only", ""),
			e.do("GET", "/v1/api/analyses/"+kv.NewV4().String(), "a_studies_only", ""),
		} {
			if r.status != 403 || !strings.Contains(string(r.body), `"code":"insufficient_scope"`) || !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="export:read"`) {
				t.Fatalf("%d %s %v", r.status, r.body, r.header)
			}
		}
	})
	t.Run("ErrBadVersion", func(t *testing.T) {
		for _, q := range []string{"?version=0", "?version=abc", "?version=-2"} {
			r, _ := e.getAnalysis("a_live", st.ID, q)
			if r.status != 422 || !strings.Contains(string(r.body), `"loc":["query","version"]`) {
				t.Fatalf("%s: %d %s", q, r.status, r.body)
			}
		}
		for _, q := range []string{"?version=99", "?version=4294967297"} {
			if r, _ := e.getAnalysis("a_live", st.ID, q); r.status != 404 || !strings.Contains(string(r.body), `"code":"analysis_not_found"`) {
				t.Fatalf("%s: %d %s", q, r.status, r.body)
			}
		}
	})

	// A replayed key answers the first body (concurrent requests sharing one job are
	// covered in kv, where no job can end between them).
	first := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_live", "", "Idempotency-Key", "analysis-1")
	if first.status != 202 {
		t.Fatalf("start: %d %s", first.status, first.body)
	}
	var started research.AnalysisJob
	first.json(t, &started)
	job := started.JobID
	replay := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_live", "", "Idempotency-Key", "analysis-1")
	if replay.status != 202 || replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
		t.Fatalf("replay %d %s %v", replay.status, replay.body, replay.header)
	}
	status := e.pollAnalysis("a_live", job)
	if r := e.do("GET", "/v1/api/analyses/"+job, "b_live", ""); r.status != 404 {
		t.Fatalf("another tenant polled the job: %d %s", r.status, r.body)
	}
	r, a := e.getAnalysis("a_live", st.ID, "")
	if r.status != 200 || a.InterviewsIncluded != 2 || a.StudyID != st.ID.String() || a.Engine != "builtin" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for _, leak := range []string{analysisEmail, "REHEARSAL-ONLY", analysisNote} {
		if strings.Contains(string(r.body), leak) {
			t.Fatalf("the analysis holds %q: %s", leak, r.body)
		}
	}
	quotes := quotesOf(a)
	if len(quotes) == 0 {
		t.Fatalf("no quotes: %s", r.body)
	}
	redacted := 0
	for _, q := range quotes {
		id, _ := kv.ParseID(q.InterviewID)
		msgs, err := e.db.FindTranscript(t.Context(), p, id)
		if err != nil {
			t.Fatal(err)
		}
		if q.MessageIndex < 0 || q.MessageIndex >= len(msgs) {
			t.Fatalf("quote %+v names no message", q)
		}
		m := msgs[q.MessageIndex]
		if m.Speaker != kv.SpeakerParticipant || !strings.Contains(strings.ReplaceAll(m.Text, analysisEmail, "[EMAIL]"), q.Text) {
			t.Fatalf("quote %+v is not an exact span of the redacted participant message %q", q, m.Text)
		}
		if strings.Contains(q.Text, "[EMAIL]") {
			redacted++
		}
	}
	if redacted == 0 {
		t.Fatalf("no quote shows the email redacted: %+v", quotes)
	}
	if v, err := e.db.FindAnalysis(t.Context(), p, st.ID, 0); err != nil || v.Version != a.Version {
		t.Fatalf("latest %d %v, GET answered %d", v.Version, err, a.Version)
	} else if *status.Version > a.Version {
		t.Fatalf("status version %d beyond the latest %d", *status.Version, a.Version)
	}
	if r, old := e.getAnalysis("a_live", st.ID, "?version=1"); r.status != 200 || old.Version != 1 || old.InterviewsIncluded != 0 {
		t.Fatalf("version 1: %d %s", r.status, r.body)
	}

	t.Run("OK_MCP", func(t *testing.T) {
		for _, era := range eras {
			cs := e.mustMCP(t, "a_live", era)
			schemas := outputSchemas(t, cs)
			res, started := callTool(t, cs, "start_analysis", map[string]any{"study_id": st.ID.String()})
			if res.IsError || started["job_id"] == "" {
				t.Fatalf("%s start_analysis: %v", era, started)
			}
			mustConform(t, schemas, "start_analysis", started)
			jobID := started["job_id"].(string)
			e.pollAnalysis("a_live", jobID)
			_, polled := callTool(t, cs, "get_analysis_status", map[string]any{"job_id": jobID})
			mustConform(t, schemas, "get_analysis_status", polled)
			if want := restJSON(t, e.do("GET", "/v1/api/analyses/"+jobID, "a_live", "")); !reflect.DeepEqual(any(polled), want) {
				t.Fatalf("%s status: MCP %v, REST %v", era, polled, want)
			}
			_, got := callTool(t, cs, "get_analysis", map[string]any{"study_id": st.ID.String()})
			mustConform(t, schemas, "get_analysis", got)
			if want := restJSON(t, e.do("GET", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_live", "")); !reflect.DeepEqual(any(got), want) {
				t.Fatalf("%s analysis: MCP differs from REST", era)
			}
			res, refused := callTool(t, cs, "get_analysis", map[string]any{"study_id": never.ID.String()})
			if !res.IsError || refused["code"] != "study_not_live" {
				t.Fatalf("%s never live: %v", era, refused)
			}
		}
	})
	t.Run("OK_A2A", func(t *testing.T) {
		e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
		c := e.mustA2A(t, "agent")
		task := mustSend(t, c, skillMessage("start_analysis", map[string]any{"study_id": st.ID.String()}), false)
		if task.Status.State != a2a.TaskStateCompleted {
			task = pollTask(t, c, task.ID, "ended", ended)
		}
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("task %s %+v", task.Status.State, task.Status.Message)
		}
		jobID := jobHandle(t, task)
		var result research.AnalysisStatus
		artifactJSON(t, task, "result", &result)
		if result.Status != kv.AnalysisCompleted || result.JobID != jobID || result.Version == nil {
			t.Fatalf("result %+v", result)
		}
		read := mustSend(t, c, skillMessage("get_analysis", map[string]any{"study_id": st.ID.String(), "version": *result.Version}), false)
		var got map[string]any
		artifactJSON(t, read, "result", &got)
		want := restJSON(t, e.do("GET", "/v1/api/studies/"+st.ID.String()+"/analysis?version="+strconv.Itoa(*result.Version), "a_live", ""))
		if jsonText(t, got) != jsonText(t, want) {
			t.Fatalf("A2A %s, REST %s", jsonText(t, got), jsonText(t, want))
		}
	})
	t.Run("OK_ErasureRemovesQuotes", func(t *testing.T) {
		_, before := e.getAnalysis("a_live", st.ID, "")
		var gone kv.Interview
		for _, iv := range e.interviewsOf(st) {
			if !iv.IsTest && iv.Status == kv.InterviewCompleted {
				gone = iv
				break
			}
		}
		rc, err := e.db.EraseInterview(t.Context(), gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rc.AnalysisVersions) == 0 {
			t.Fatalf("receipt lists no analysis version: %+v", rc)
		}
		for _, ref := range rc.AnalysisVersions {
			r, a := e.getAnalysis("a_live", st.ID, "?version="+strconv.Itoa(ref.Version))
			if r.status != 200 || strings.Contains(string(r.body), gone.ID.String()) {
				t.Fatalf("version %d still quotes the erased interview: %s", ref.Version, r.body)
			}
			if a.InterviewsIncluded != 1 {
				t.Fatalf("version %d includes %d interviews after the erasure", ref.Version, a.InterviewsIncluded)
			}
		}
		_, after := e.getAnalysis("a_live", st.ID, "")
		if after.Version != before.Version || after.InterviewsIncluded != before.InterviewsIncluded-1 {
			t.Fatalf("latest before %d/%d, after %d/%d", before.Version, before.InterviewsIncluded, after.Version, after.InterviewsIncluded)
		}
	})
}

// TestAnalysisFailureKeepsLastVersion: an analysis that cannot complete (here the
// organisation's redactor fails) ends failed with the reason, and the previous version
// stays the one served.
func TestAnalysisFailureKeepsLastVersion(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, analysisStudyBrief())
	e.completeInterview(e.linkFor(st, kv.AudienceGroup, nil, ""), []string{"We schedule shifts on a whiteboard."})
	good := e.mustAnalyse("a_live", st.ID)

	wasm := plugintest.Wasm(t, plugintest.Sandbox)
	os.MkdirAll(filepath.Join(e.db.BlobDir(), "plugins"), 0o700)
	if err := os.WriteFile(filepath.Join(e.db.BlobDir(), "plugins", "sandbox.wasm"), wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutPlugin(t.Context(), kv.OrgPlugin{OrgID: e.orgA.ID, Kind: kv.PluginRedactor, Name: "sandbox",
		Blob: filepath.Join("plugins", "sandbox.wasm")}); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/analysis", "a_live", "")
	var job research.AnalysisJob
	r.json(t, &job)
	failed := e.pollAnalysis("a_live", job.JobID)
	if failed.Status != kv.AnalysisFailed || failed.Version != nil || failed.Error == nil || !strings.Contains(*failed.Error, "sandbox") {
		t.Fatalf("analysis with a failing redactor: %+v", failed)
	}
	status := e.do("GET", "/v1/api/analyses/"+job.JobID, "a_live", "")
	var raw map[string]any
	status.json(t, &raw)
	if _, has := raw["version"]; has || raw["study_id"] != st.ID.String() {
		t.Fatalf("failed status %s", status.body)
	}
	if r, a := e.getAnalysis("a_live", st.ID, ""); r.status != 200 || a.Version != *good.Version || a.InterviewsIncluded != 1 {
		t.Fatalf("after a failure: %d %s", r.status, r.body)
	}
}
