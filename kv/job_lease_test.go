package kv

import (
	"context"
	"testing"
	"time"
)

// A job's writes are fenced by its lease: once another owner has claimed it, the
// previous owner's progress and its failure are refused, and the new owner's land.
func TestJobLeaseFencesWrites(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "fence").ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Fence")
	j, err := db.CreateSimulationJob(ctx, SimulationInput{Partition: p, JobID: NewV4(), StudyID: st.ID, MaxTurns: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimJob(ctx, p, j.ID, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	asA, asB := WithJobLease(ctx, "a"), WithJobLease(ctx, "b")
	line := []SimulationLine{{Speaker: SpeakerInterviewer, Text: "Q1?", TurnNumber: 1}}
	if err := db.AppendSimulationTurn(asA, p, j.ID, line, nil); err != nil {
		t.Fatalf("the owner's write: %v", err)
	}
	if err := db.AppendSimulationTurn(asB, p, j.ID, line, nil); ErrorCode(err) != ECONFLICT {
		t.Fatalf("a write without the lease: %v, want ECONFLICT", err)
	}
	// a stalls past its lease; b takes the job over.
	if err := db.ReleaseJobLease(ctx, p, j.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimJob(ctx, p, j.ID, "b", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.AppendSimulationTurn(asA, p, j.ID, line, nil); ErrorCode(err) != ECONFLICT {
		t.Fatalf("the old owner's late write: %v, want ECONFLICT", err)
	}
	if err := db.FailJob(asA, p, j.ID, "failed", "late"); ErrorCode(err) != ECONFLICT {
		t.Fatalf("the old owner's late failure: %v, want ECONFLICT", err)
	}
	if err := db.FinishSimulation(asB, p, j.ID, line); err != nil {
		t.Fatalf("the new owner's write: %v", err)
	}
	got, err := db.FindJobByID(ctx, p, JobSimulation, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := got.Progress()
	if err != nil || got.Status != SimulationCompleted || len(pr.Turns) != 2 {
		t.Fatalf("job %+v, progress %+v %v: want completed with the two owners' own lines", got, pr, err)
	}
}
