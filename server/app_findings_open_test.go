package server

import (
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
)

// TestAppFindingsOpenAnalysis: an analysis the page did not start (recorded as the run
// after a completed interview records it; the API and MCP record theirs the same way)
// shows on the Findings page without ?job=, queued then running, over the previous
// version, and is followed by the same status address the page polls for ?job=; once it
// has finished the page shows the new version and nothing running. The dashboard says
// one is running while it is.
func TestAppFindingsOpenAnalysis(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	f := e.mustFindingsStudy()
	base := "/app/studies/" + f.study.ID.String()
	first := runAppAnalysis(t, owner, f.study.ID)
	if first.Status != kv.AnalysisCompleted {
		t.Fatalf("first analysis %+v", first)
	}
	page := wantPage(t, owner.get(t, base+"/findings"), 200, "Version 1")
	if strings.Contains(page, "An analysis is") || strings.Contains(page, "data-poll=\"/") {
		t.Fatal("a running analysis shown when none is")
	}
	if strings.Contains(wantPage(t, owner.get(t, base+"/dashboard"), 200), "An analysis of this study is running") {
		t.Fatal("the dashboard shows an analysis running when none is")
	}

	p := f.study.Partition()
	held, _, err := e.db.CreateAnalysisJob(t.Context(), kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: f.study.ID, Trigger: kv.AnalysisOnInterview})
	if err != nil {
		t.Fatal(err)
	}
	poll := base + "/findings/status?job=" + held.ID.String()
	t.Run("OK_Queued", func(t *testing.T) {
		wantPage(t, owner.get(t, base+"/findings"), 200, `data-poll="`+poll+`"`, "An analysis is queued: it starts shortly…",
			"It was started automatically after a live interview completed.", "The findings below are version 1 until it finishes.", "Version 1")
		// Sent to watch a job that has ended, the page shows the one under way instead.
		wantPage(t, owner.get(t, base+"/findings?job="+first.JobID), 200, `data-poll="`+poll+`"`, "An analysis is queued")
		wantPage(t, owner.get(t, base+"/dashboard"), 200, "An analysis of this study is running", `<a href="`+base+`/findings">Follow it on the Findings page</a>`)
	})
	if _, err := e.db.StartAnalysis(t.Context(), p, held.ID); err != nil {
		t.Fatal(err)
	}
	t.Run("OK_Running", func(t *testing.T) {
		wantPage(t, owner.get(t, base+"/findings"), 200, `data-poll="`+poll+`"`, "An analysis is running…", "Version 1")
		var st app.AnalysisStatusJSON
		r := owner.get(t, poll)
		r.json(t, &st)
		if r.status != 200 || st.Status != kv.AnalysisRunning || st.JobID != held.ID.String() {
			t.Fatalf("status %d %+v", r.status, st)
		}
	})

	// The runner takes the job (as the node holding it would): the poll sees it end.
	e.runner.Enqueue(held)
	done := pollJSON(t, owner, poll, func(s app.AnalysisStatusJSON) bool {
		return s.Status == kv.AnalysisCompleted || s.Status == kv.AnalysisFailed
	})
	if done.Status != kv.AnalysisCompleted || done.Version == nil || *done.Version != 2 || done.FindingsURL != base+"/findings?job="+held.ID.String() {
		t.Fatalf("the held analysis ended %+v", done)
	}
	page = wantPage(t, owner.get(t, base+"/findings"), 200, "Version 2")
	if strings.Contains(page, "An analysis is") || strings.Contains(page, "data-poll=\"/") {
		t.Fatal("the finished analysis is still shown as under way")
	}
	if strings.Contains(wantPage(t, owner.get(t, base+"/dashboard"), 200, "version 2"), "An analysis of this study is running") {
		t.Fatal("the dashboard still shows the finished analysis running")
	}
}
