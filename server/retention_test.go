package server

import (
	"context"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/research"
)

// TestRetentionSweep runs the maintenance loop's retention pass on an injected clock:
// an organisation's interviews and export downloads older than its retention are gone
// from the API; another organisation's stay.
func TestRetentionSweep(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	ctx := context.Background()
	if _, err := e.db.AddCredits(ctx, e.orgB.ID, 5); err != nil {
		t.Fatal(err)
	}
	brief := plainBrief("Kept for 30 days", "What changed?")
	stA := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
	stB := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, brief)
	e.completeInterview(stA.LinkToken, []string{"A lot."})
	e.completeInterview(stB.LinkToken, []string{"Little."})
	ivA, ivB := e.interviewsOf(stA)[0], e.interviewsOf(stB)[0]
	r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+stA.ID.String()+`"}`)
	var job research.ExportJob
	r.json(t, &job)
	if st := e.pollExport("a_live", job.JobID); st.Status != kv.ExportCompleted {
		t.Fatalf("export %+v", st)
	}
	if _, err := e.db.SetRetention(ctx, e.orgA.ID, 30); err != nil {
		t.Fatal(err)
	}

	clock.Advance(29 * 24 * time.Hour)
	e.srv.SweepRetention(ctx)
	if r := e.do("GET", "/v1/api/interviews/"+ivA.ID.String(), "a_live", ""); r.status != 200 {
		t.Fatalf("swept before its time: %d", r.status)
	}

	clock.Advance(2 * 24 * time.Hour)
	e.srv.SweepRetention(ctx)
	if r := e.do("GET", "/v1/api/interviews/"+ivA.ID.String(), "a_live", ""); r.status != 404 {
		t.Fatalf("interview past retention: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", ""); r.status != 404 {
		t.Fatalf("export past retention still downloadable: %s", r.body)
	}
	if r := e.do("GET", "/v1/api/interviews/"+ivB.ID.String(), "b_live", ""); r.status != 200 {
		t.Fatalf("an organisation without retention lost an interview: %d", r.status)
	}
}
