package kv

import (
	"context"
	"testing"
)

func newTaskRecord(db *DB, p Partition, state string, final bool) *AgentTask {
	return &AgentTask{ID: db.NewID(), OrgID: p.Org, Env: p.Env, State: state, Final: final, Body: []byte(`{"state":"` + state + `"}`)}
}

// A message's task is written in the transaction of the message's effect: both are
// committed, or neither is, and the message's key names the task afterwards.
func TestAgentTaskCommitsWithEffect(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "A").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Links")
	fp := [32]byte{1}
	links := func() int {
		t.Helper()
		l, err := db.FindParticipantLinks(ctx, p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}

	t.Run("OK_Together", func(t *testing.T) {
		if out, _, err := db.ClaimAgentMessage(ctx, p, "a2a:m1", fp); err != nil || out != IdemClaimed {
			t.Fatalf("claim: %v %v", out, err)
		}
		task := newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)
		idem := &IdemWrite{Partition: p, Key: "a2a:m1", Fingerprint: fp, Output: []byte(`{"url":"u"}`), Task: &AgentTaskWrite{New: task}}
		if _, _, err := db.CreateParticipantLink(ctx, p, st.ID, LinkRequest{Audience: AudienceGroup}, NewLinkToken(), idem); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindAgentTask(ctx, p, task.ID)
		if err != nil || got.State != "TASK_STATE_COMPLETED" || got.CreatedAt.IsZero() {
			t.Fatalf("task: %+v %v", got, err)
		}
		out, prior, err := db.ClaimAgentMessage(ctx, p, "a2a:m1", fp)
		if err != nil || out != IdemReplay || prior.TaskID == nil || *prior.TaskID != task.ID || string(prior.Output) != `{"url":"u"}` {
			t.Fatalf("the key after the write: %v %+v %v", out, prior, err)
		}
		if n := links(); n != 1 {
			t.Fatalf("%d links", n)
		}
	})
	t.Run("OK_EffectRefusedTaskNotWritten", func(t *testing.T) {
		task := newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)
		idem := &IdemWrite{Partition: p, Key: "a2a:m2", Fingerprint: fp, Task: &AgentTaskWrite{New: task}}
		if _, _, err := db.CreateParticipantLink(ctx, p, NewV4(), LinkRequest{Audience: AudienceGroup}, NewLinkToken(), idem); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("link for no study: %v", err)
		}
		if _, err := db.FindAgentTask(ctx, p, task.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("the task of a refused effect was written: %v", err)
		}
		if out, _, err := db.ClaimAgentMessage(ctx, p, "a2a:m2", fp); err != nil || out != IdemClaimed {
			t.Fatalf("the key of a refused effect: %v %v", out, err)
		}
	})
	t.Run("OK_TaskRefusedEffectNotWritten", func(t *testing.T) {
		ended, _, err := db.RecordAgentTask(ctx, p, "", fp, AgentTaskWrite{New: newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)})
		if err != nil {
			t.Fatal(err)
		}
		before := links()
		idem := &IdemWrite{Partition: p, Key: "a2a:m3", Fingerprint: fp, Task: &AgentTaskWrite{ID: ended.ID, Change: func(t *AgentTask) error {
			t.State = "TASK_STATE_WORKING"
			return nil
		}}}
		if _, _, err := db.CreateParticipantLink(ctx, p, st.ID, LinkRequest{Audience: AudienceGroup}, NewLinkToken(), idem); err != ErrAgentTaskEnded {
			t.Fatalf("continuing an ended task: %v", err)
		}
		if n := links(); n != before {
			t.Fatalf("the link of a refused task was written: %d links, %d before", n, before)
		}
	})
}

// RecordAgentTask commits a message's task with its key; the key sent again names the
// first task, and a key of another request writes nothing.
func TestRecordAgentTask(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "A").ID, Env: EnvLive}
	other := Partition{Org: mustOrg(t, db, "B").ID, Env: EnvLive}
	fp := [32]byte{1}

	first := newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)
	got, out, err := db.RecordAgentTask(ctx, p, "a2a:m1", fp, AgentTaskWrite{New: first})
	if err != nil || out != IdemClaimed || got.ID != first.ID {
		t.Fatalf("first: %v %v %+v", out, err, got)
	}
	t.Run("OK_SentAgain", func(t *testing.T) {
		second := newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)
		got, out, err := db.RecordAgentTask(ctx, p, "a2a:m1", fp, AgentTaskWrite{New: second})
		if err != nil || out != IdemReplay || got.ID != first.ID || string(got.Body) != string(first.Body) {
			t.Fatalf("sent again: %v %v %+v", out, err, got)
		}
		if _, err := db.FindAgentTask(ctx, p, second.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("the second task was written: %v", err)
		}
	})
	t.Run("ErrReused", func(t *testing.T) {
		third := newTaskRecord(db, p, "TASK_STATE_COMPLETED", true)
		if _, out, err := db.RecordAgentTask(ctx, p, "a2a:m1", [32]byte{2}, AgentTaskWrite{New: third}); err != nil || out != IdemReused {
			t.Fatalf("another request: %v %v", out, err)
		}
		if _, err := db.FindAgentTask(ctx, p, third.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("the refused task was written: %v", err)
		}
	})
	t.Run("OK_OtherPartitionHasItsOwnKeys", func(t *testing.T) {
		task := newTaskRecord(db, other, "TASK_STATE_COMPLETED", true)
		if got, out, err := db.RecordAgentTask(ctx, other, "a2a:m1", [32]byte{3}, AgentTaskWrite{New: task}); err != nil || out != IdemClaimed || got.ID != task.ID {
			t.Fatalf("other partition: %v %v", out, err)
		}
	})
	t.Run("OK_FinishesClaim", func(t *testing.T) {
		if out, _, err := db.ClaimAgentMessage(ctx, p, "a2a:m2", fp); err != nil || out != IdemClaimed {
			t.Fatalf("claim: %v %v", out, err)
		}
		task := newTaskRecord(db, p, "TASK_STATE_FAILED", true)
		if got, out, err := db.RecordAgentTask(ctx, p, "a2a:m2", fp, AgentTaskWrite{New: task}); err != nil || out != IdemClaimed || got.ID != task.ID {
			t.Fatalf("record: %v %v", out, err)
		}
		out, prior, err := db.ClaimAgentMessage(ctx, p, "a2a:m2", fp)
		if err != nil || out != IdemReplay || prior.TaskID == nil || *prior.TaskID != task.ID {
			t.Fatalf("the claim after the record: %v %+v %v", out, prior, err)
		}
	})
	t.Run("OK_Continue", func(t *testing.T) {
		asked, _, err := db.RecordAgentTask(ctx, p, "a2a:m3", fp, AgentTaskWrite{New: newTaskRecord(db, p, "TASK_STATE_INPUT_REQUIRED", false)})
		if err != nil {
			t.Fatal(err)
		}
		change := AgentTaskWrite{ID: asked.ID, Change: func(t *AgentTask) error {
			t.State, t.Final = "TASK_STATE_COMPLETED", true
			return nil
		}}
		got, out, err := db.RecordAgentTask(ctx, p, "a2a:m4", fp, change)
		if err != nil || out != IdemClaimed || got.ID != asked.ID || got.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("continue: %v %v %+v", out, err, got)
		}
		if _, _, err := db.RecordAgentTask(ctx, p, "a2a:m5", fp, change); err != ErrAgentTaskEnded {
			t.Fatalf("continuing the ended task: %v", err)
		}
		if got, out, err := db.RecordAgentTask(ctx, p, "a2a:m4", fp, change); err != nil || out != IdemReplay || got.ID != asked.ID {
			t.Fatalf("the continuing message sent again: %v %v", out, err)
		}
	})
}
