package kv

import (
	"context"
	"testing"
	"time"
)

// mustAgentTask records a task of p whose body holds text (the answer it gave).
func mustAgentTask(tb testing.TB, db *DB, p Partition, skill string, final bool, text string) AgentTask {
	tb.Helper()
	state := "TASK_STATE_WORKING"
	if final {
		state = "TASK_STATE_COMPLETED"
	}
	t, err := db.CreateAgentTask(context.Background(), AgentTask{ID: db.NewID(), OrgID: p.Org, Env: p.Env, Skill: skill,
		State: state, Final: final, Body: []byte(`{"artifacts":[{"parts":[{"data":` + text + `}]}]}`)})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func agentTaskExists(tb testing.TB, db *DB, t AgentTask) bool {
	tb.Helper()
	_, err := db.FindAgentTask(context.Background(), t.Partition(), t.ID)
	if err != nil && ErrorCode(err) != ENOTFOUND {
		tb.Fatal(err)
	}
	return err == nil
}

// Erasing an interview deletes, in its transaction, the ended agent tasks of its
// partition whose answer holds it; tasks naming other interviews, tasks still working
// and other partitions' tasks stay.
func TestEraseInterviewDeletesAgentTasks(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, OrgInput{Name: "Erase", Email: "e@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "E")
	iv := mustInterview(t, db, st, "ann", true)
	other := mustInterview(t, db, st, "bob", true)
	id, otherID := `"`+iv.ID.String()+`"`, `"`+other.ID.String()+`"`

	got := mustAgentTask(t, db, p, "get_interview", true, `{"id":`+id+`,"answers":"My name is ann"}`)
	listed := mustAgentTask(t, db, p, "list_interviews", true, `{"items":[{"id":`+otherID+`},{"id":`+id+`}]}`)
	others := mustAgentTask(t, db, p, "list_interviews", true, `{"items":[{"id":`+otherID+`}]}`)
	working := mustAgentTask(t, db, p, "start_export", false, `{"note":`+id+`}`)
	elsewhere := mustAgentTask(t, db, Partition{Org: org.ID, Env: EnvTest}, "get_interview", true, `{"id":`+id+`}`)

	rc, err := db.EraseInterview(ctx, iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rc.AgentTasks != 2 {
		t.Fatalf("receipt counts %d agent tasks, want 2", rc.AgentTasks)
	}
	for _, task := range []AgentTask{got, listed} {
		if agentTaskExists(t, db, task) {
			t.Fatalf("%s task %s still holds the erased interview", task.Skill, task.ID)
		}
	}
	for _, task := range []AgentTask{others, working, elsewhere} {
		if !agentTaskExists(t, db, task) {
			t.Fatalf("%s task %s was deleted", task.Skill, task.ID)
		}
	}
}

// The retention sweep deletes the agent tasks holding the interviews it deletes.
func TestSweepRetentionDeletesAgentTasks(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, OrgInput{Name: "Trims", Email: "t@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	if _, err := db.SetRetention(ctx, org.ID, 30); err != nil {
		t.Fatal(err)
	}
	st := liveStudy(t, db, p, "T")
	old := mustInterview(t, db, st, "old", true)
	c.add(20 * 24 * time.Hour)
	recent := mustInterview(t, db, st, "new", true)
	holdsOld := mustAgentTask(t, db, p, "get_interview", true, `{"id":"`+old.ID.String()+`"}`)
	holdsRecent := mustAgentTask(t, db, p, "get_interview", true, `{"id":"`+recent.ID.String()+`"}`)

	c.add(11 * 24 * time.Hour)
	sw, err := db.SweepRetention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Interviews != 1 || sw.AgentTasks != 1 {
		t.Fatalf("sweep %+v", sw)
	}
	if agentTaskExists(t, db, holdsOld) || !agentTaskExists(t, db, holdsRecent) {
		t.Fatal("the sweep kept the task holding the expired interview, or deleted the other")
	}
}
