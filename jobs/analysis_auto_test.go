package jobs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/moderator"
)

// autoStudy makes a live study in a new organisation of db.
func autoStudy(t *testing.T, db *kv.DB, name string) (kv.Partition, kv.Study, kv.Brief) {
	t.Helper()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: name, Email: name + "@example.com", Credits: 20})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief(name)
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	if err != nil {
		t.Fatal(err)
	}
	if st, err = db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	return p, st, brief
}

// checkAnalysedAfter waits for the study's first version and checks it read iv, came
// from an interview's request, and left no request behind.
func checkAnalysedAfter(t *testing.T, db *kv.DB, p kv.Partition, st kv.Study, iv kv.Interview) {
	t.Helper()
	ctx := context.Background()
	var v kv.AnalysisVersion
	waitFor(t, "the analysis the stored request asked for", func() bool {
		var err error
		v, err = db.FindAnalysis(ctx, p, st.ID, 0)
		return err == nil
	})
	if !slices.ContainsFunc(v.Sources, func(s kv.AnalysisSource) bool { return s.InterviewID == iv.ID }) {
		t.Fatalf("version %d did not read interview %s: %+v", v.Version, iv.ID, v.Sources)
	}
	j, err := db.FindJobByID(ctx, p, kv.JobAnalysis, v.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if spec, err := j.AnalysisSpec(); err != nil || spec.Trigger != kv.AnalysisOnInterview {
		t.Fatalf("job %+v: %+v %v", j, spec, err)
	}
	if w, err := db.FindAnalysisWanted(ctx); err != nil || len(w) != 0 {
		t.Fatalf("requests left after the analysis: %+v %v", w, err)
	}
}

// TestAnalysisRequestSurvivesRestart: a live interview completes and the process stops
// (runner and store closed) before the delay has passed. The next process finds the
// request: it waits for what is left of the delay, then records the analysis, which
// reads the interview.
func TestAnalysisRequestSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db := mustOpenDB(t, dir)
	p, st, brief := autoStudy(t, db, "Restart")
	first := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: time.Hour})
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	iv := completeLive(t, db, st, "s1", brief.VerbatimQuestions, []string{"We schedule shifts on paper."}, true)
	first.InterviewCompleted(iv)
	if n := first.PendingAnalyses(); n != 1 {
		t.Fatalf("%d pending before the stop, want 1", n)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpenDB(t, dir)
	defer db.Close()
	// Within the delay: the request is armed again, and nothing runs before it passes.
	waiting := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: time.Hour})
	if err := waiting.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := waiting.PendingAnalyses(); n != 1 {
		t.Fatalf("%d pending after the restart, want 1", n)
	}
	if _, open, err := db.FindOpenAnalysis(ctx, p, st.ID); err != nil || open {
		t.Fatalf("an analysis was recorded before the delay passed (%v)", err)
	}
	if err := waiting.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Past the delay (a short one here): the analysis is recorded and reads the interview.
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: 20 * time.Millisecond})
	defer r.Close(ctx)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	checkAnalysedAfter(t, db, p, st, iv)
}

// TestAnalysisRequestAnotherNodeServes: on a shared store, the node an interview
// completed on stops during the delay; another node, already running, finds the
// request in its sweep and records the analysis.
func TestAnalysisRequestAnotherNodeServes(t *testing.T) {
	_, open := sharedStore(t)
	ctx := context.Background()
	dbA, dbB := open(), open()
	defer dbB.Close()
	p, st, brief := autoStudy(t, dbA, "Nodes")
	b := NewRunner(Config{DB: dbB, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), Lease: time.Second,
		Node: "node-b", AnalysisDelay: 20 * time.Millisecond})
	defer b.Close(ctx)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a := NewRunner(Config{DB: dbA, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), Lease: time.Second,
		Node: "node-a", AnalysisDelay: time.Hour})
	iv := completeLive(t, dbA, st, "s1", brief.VerbatimQuestions, []string{"We schedule shifts on paper."}, true)
	a.InterviewCompleted(iv)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_ = dbA.Close()
	checkAnalysedAfter(t, dbB, p, st, iv)
}
