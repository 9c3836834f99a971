package kv

import (
	"context"
	"testing"
	"time"
)

// wantedOf returns the pending request of study, or false.
func wantedOf(t *testing.T, db *DB, p Partition, study ID) (AnalysisWanted, bool) {
	t.Helper()
	all, err := db.FindAnalysisWanted(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found []AnalysisWanted
	for _, w := range all {
		if w.Partition() == p && w.StudyID == study {
			found = append(found, w)
		}
	}
	if len(found) > 1 {
		t.Fatalf("%d requests for one study", len(found))
	}
	if len(found) == 0 {
		return AnalysisWanted{}, false
	}
	return found[0], true
}

// TestAnalysisWanted: completing a live interview records its study's request for an
// analysis in the same commit, one per study, keeping the oldest time; rehearsals and
// test-environment interviews ask for nothing; a queued analysis clears the request
// and a running one does not.
func TestAnalysisWanted(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Wanted", Email: "w@example.com", Credits: 20})
	p := Partition{Org: org.ID, Env: EnvLive}
	rehearsed := mustStudy(t, db, p, "Rehearsed")
	live := liveStudy(t, db, p, "Live")
	testEnv := liveStudy(t, db, Partition{Org: org.ID, Env: EnvTest}, "Test env")

	t.Run("OK_NoneForRehearsalsOrTestData", func(t *testing.T) {
		mustInterview(t, db, rehearsed, "r1", true)
		mustInterview(t, db, testEnv, "t1", true)
		mustInterview(t, db, live, "l0", false) // in progress: nothing yet
		if all, err := db.FindAnalysisWanted(ctx); err != nil || len(all) != 0 {
			t.Fatalf("requests %+v %v", all, err)
		}
	})
	first := c.now()
	t.Run("OK_OnePerStudyOldestKept", func(t *testing.T) {
		mustInterview(t, db, live, "l1", true)
		c.add(time.Minute)
		mustInterview(t, db, live, "l2", true)
		w, ok := wantedOf(t, db, p, live.ID)
		if !ok || !w.Since.Equal(first) || w.OrgID != org.ID || w.Env != EnvLive {
			t.Fatalf("request %+v %v, want one since %s", w, ok, first)
		}
	})
	t.Run("OK_OpeningThatCompletes", func(t *testing.T) {
		// A design with no questions completes in the commit that starts the interview.
		other := liveStudy(t, db, p, "No questions")
		done := func(Brief, Interview, Link) Turn {
			return Turn{Status: InterviewCompleted, Messages: []Message{{Speaker: SpeakerInterviewer, Text: "Thanks!", At: db.Now()}}}
		}
		o, err := db.ResumeLinkOpening(ctx, other.LinkToken, "", "s-open", done)
		if err != nil || o.Interview == nil || o.Interview.Status != InterviewCompleted {
			t.Fatalf("opening %+v %v", o, err)
		}
		if _, ok := wantedOf(t, db, p, other.ID); !ok {
			t.Fatal("no request after an opening that completed the interview")
		}
	})
	t.Run("OK_QueuedClearsRunningKeeps", func(t *testing.T) {
		j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID})
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := wantedOf(t, db, p, live.ID); ok {
			t.Fatalf("request %+v left after a queued analysis was recorded", w)
		}
		// Completed while the job waits: the job still reads it, and claiming the job
		// (stored queued again) says so.
		c.add(time.Minute)
		mustInterview(t, db, live, "l3", true)
		if _, err := db.ClaimJob(ctx, p, j.ID, "node-1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if w, ok := wantedOf(t, db, p, live.ID); ok {
			t.Fatalf("request %+v left after the queued job was claimed", w)
		}
		// Completed while it runs: it may have been read too early, so the request stays.
		if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
			t.Fatal(err)
		}
		c.add(time.Minute)
		mustInterview(t, db, live, "l4", true)
		running := c.now()
		if err := db.RenewJobLease(ctx, p, j.ID, "node-1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if w, ok := wantedOf(t, db, p, live.ID); !ok || !w.Since.Equal(running) {
			t.Fatalf("request while running %+v %v", w, ok)
		}
		if err := db.FailJob(ctx, p, j.ID, AnalysisFailed, "stopped by the test"); err != nil {
			t.Fatal(err)
		}
		if _, ok := wantedOf(t, db, p, live.ID); !ok {
			t.Fatal("a failed job took the request with it")
		}
	})
	t.Run("OK_Drop", func(t *testing.T) {
		if _, ok := wantedOf(t, db, p, live.ID); !ok {
			t.Fatal("no request to drop")
		}
		if err := db.DropAnalysisWanted(ctx, p, live.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := wantedOf(t, db, p, live.ID); ok {
			t.Fatal("the request was not dropped")
		}
		if err := db.DropAnalysisWanted(ctx, p, live.ID); err != nil {
			t.Fatalf("dropping none: %v", err)
		}
	})
}

// TestFindOpenAnalysis: a study's queued or running analysis is found through the index,
// in its own partition only, and not once it has ended.
func TestFindOpenAnalysis(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Open", Email: "o@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "Open")
	other := liveStudy(t, db, p, "Other")
	if _, ok, err := db.FindOpenAnalysis(ctx, p, st.ID); err != nil || ok {
		t.Fatalf("before any analysis: %v %v", ok, err)
	}
	j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: st.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{AnalysisQueued, AnalysisRunning} {
		if step == AnalysisRunning {
			if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := db.FindOpenAnalysis(ctx, p, st.ID)
		if err != nil || !ok || got.ID != j.ID || got.Status != step {
			t.Fatalf("%s: %+v %v %v", step, got, ok, err)
		}
		if _, ok, _ := db.FindOpenAnalysis(ctx, p, other.ID); ok {
			t.Fatalf("%s: another study's analysis found", step)
		}
		if _, ok, _ := db.FindOpenAnalysis(ctx, Partition{Org: org.ID, Env: EnvTest}, st.ID); ok {
			t.Fatalf("%s: found from the test environment", step)
		}
	}
	if _, err := db.FinishAnalysis(ctx, p, j.ID, AnalysisResult{Body: []byte(`{"summary":""}`)}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.FindOpenAnalysis(ctx, p, st.ID); err != nil || ok {
		t.Fatalf("after completion: %+v %v %v", got, ok, err)
	}
}

// TestLinkOpens: each study counts its own opens, in its own partition.
func TestLinkOpens(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "opens")
	p := Partition{Org: org.ID, Env: EnvLive}
	a, b := mustStudy(t, db, p, "A"), mustStudy(t, db, p, "B")
	for range 5 {
		if err := db.AddLinkOpen(ctx, p, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddLinkOpen(ctx, p, b.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    Partition
		id   ID
		want int
	}{
		{"OK_Counted", p, a.ID, 5},
		{"OK_OtherStudy", p, b.ID, 1},
		{"OK_OtherPartition", Partition{Org: org.ID, Env: EnvTest}, a.ID, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n, err := db.FindLinkOpens(ctx, c.p, c.id); err != nil || n != c.want {
				t.Fatalf("%d %v, want %d", n, err, c.want)
			}
		})
	}
}
