package kv

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Ended tasks are kept AgentTaskTTL after their last change; working ones always.
func TestSweepAgentTasks(t *testing.T) {
	clock := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, func() time.Time { return clock })
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "A").ID, Env: EnvLive}
	mk := func(final bool) ID {
		t.Helper()
		task, err := db.CreateAgentTask(ctx, AgentTask{ID: db.NewID(), OrgID: p.Org, Env: p.Env, State: "s", Final: final, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	old, working := mk(true), mk(false)
	clock = clock.Add(AgentTaskTTL / 2)
	recent := mk(true)
	clock = clock.Add(AgentTaskTTL/2 + time.Minute)
	if n, err := db.SweepAgentTasks(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d: %v", n, err)
	}
	if _, err := db.FindAgentTask(ctx, p, old); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("the old ended task is kept: %v", err)
	}
	for _, id := range []ID{working, recent} {
		if _, err := db.FindAgentTask(ctx, p, id); err != nil {
			t.Fatalf("task %s swept: %v", id, err)
		}
	}
}

func TestAgentTasks(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	a, b := mustOrg(t, db, "A"), mustOrg(t, db, "B")
	pa := Partition{Org: a.ID, Env: EnvLive}
	mk := func(p Partition, ctxID, state string) AgentTask {
		t.Helper()
		task, err := db.CreateAgentTask(ctx, AgentTask{ID: db.NewID(), OrgID: p.Org, Env: p.Env, ContextID: ctxID, State: state, Body: []byte(`{"s":"` + state + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	var ids []ID
	for i := 0; i < 5; i++ {
		state := "TASK_STATE_COMPLETED"
		if i == 2 {
			state = "TASK_STATE_WORKING"
		}
		ids = append(ids, mk(pa, []string{"even", "odd"}[i%2], state).ID)
	}
	other := mk(Partition{Org: b.ID, Env: EnvLive}, "even", "TASK_STATE_COMPLETED")
	mk(Partition{Org: a.ID, Env: EnvTest}, "even", "TASK_STATE_COMPLETED")

	t.Run("OK_Find", func(t *testing.T) {
		got, err := db.FindAgentTask(ctx, pa, ids[2])
		if err != nil || got.State != "TASK_STATE_WORKING" || string(got.Body) != `{"s":"TASK_STATE_WORKING"}` {
			t.Fatalf("%v %+v", err, got)
		}
	})
	t.Run("ErrOtherPartition", func(t *testing.T) {
		if _, err := db.FindAgentTask(ctx, pa, other.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("another organisation's task: %v", err)
		}
		if _, err := db.FindAgentTask(ctx, Partition{Org: a.ID, Env: EnvTest}, ids[0]); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("another environment's task: %v", err)
		}
	})
	t.Run("OK_PagesNewestFirst", func(t *testing.T) {
		var seen []ID
		cursor := ""
		for {
			page, total, err := db.FindAgentTasks(ctx, AgentTaskFilter{Partition: pa, Cursor: cursor, Limit: 2})
			if err != nil || total != 5 {
				t.Fatalf("%v total %d", err, total)
			}
			for _, task := range page.Items {
				seen = append(seen, task.ID)
			}
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if len(seen) != 5 || seen[0] != ids[4] || seen[4] != ids[0] {
			t.Fatalf("listed %v, created %v", seen, ids)
		}
	})
	t.Run("OK_Filters", func(t *testing.T) {
		page, total, err := db.FindAgentTasks(ctx, AgentTaskFilter{Partition: pa, ContextID: "even", State: "TASK_STATE_COMPLETED", Limit: 10})
		if err != nil || total != 2 || len(page.Items) != 2 || page.Items[0].ID != ids[4] || page.Items[1].ID != ids[0] {
			t.Fatalf("%v %d %+v", err, total, page.Items)
		}
		later, total, err := db.FindAgentTasks(ctx, AgentTaskFilter{Partition: pa, UpdatedAfter: db.Now().Add(time.Hour), Limit: 10})
		if err != nil || total != 0 || len(later.Items) != 0 {
			t.Fatalf("updated after the future: %v %d", err, total)
		}
	})
	t.Run("ErrCursorOfAnotherPartition", func(t *testing.T) {
		page, _, err := db.FindAgentTasks(ctx, AgentTaskFilter{Partition: pa, Limit: 1})
		if err != nil || page.Next == "" {
			t.Fatal(err)
		}
		if _, _, err := db.FindAgentTasks(ctx, AgentTaskFilter{Partition: Partition{Org: b.ID, Env: EnvLive}, Cursor: page.Next, Limit: 1}); ErrorCode(err) != EINVALID {
			t.Fatalf("org A's cursor in org B: %v", err)
		}
	})
	t.Run("OK_UpdateUntilFinal", func(t *testing.T) {
		task, changed, err := db.UpdateAgentTask(ctx, pa, ids[2], func(task *AgentTask) error {
			task.State, task.Final, task.Body = "TASK_STATE_COMPLETED", true, []byte(`{}`)
			return nil
		})
		if err != nil || !changed || !task.Final {
			t.Fatalf("%v %v %+v", err, changed, task)
		}
		_, changed, err = db.UpdateAgentTask(ctx, pa, ids[2], func(*AgentTask) error {
			t.Fatal("a final task was passed to fn")
			return nil
		})
		if err != nil || changed {
			t.Fatalf("update of a final task: %v %v", err, changed)
		}
	})
	t.Run("ErrUpdateRefusedKeepsTask", func(t *testing.T) {
		stop := errors.New("no")
		if _, _, err := db.UpdateAgentTask(ctx, pa, ids[0], func(task *AgentTask) error {
			task.State = "changed"
			return stop
		}); !errors.Is(err, stop) {
			t.Fatal(err)
		}
		if got, _ := db.FindAgentTask(ctx, pa, ids[0]); got.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("refused change kept: %s", got.State)
		}
		if _, _, err := db.UpdateAgentTask(ctx, pa, other.ID, func(*AgentTask) error { return nil }); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("update across partitions: %v", err)
		}
	})
}
