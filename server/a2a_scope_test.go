package server

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
)

// A task is seen only by keys that hold a scope its skill needed: a key with agent:run
// and studies:write but not studies:read finds no get_study task of another key, by
// any method, and lists none of them (pages and the total count only what it may
// see); a key holding studies:read sees them.
func TestA2ATaskNeedsSkillScope(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	e.mustKey("agent_write", e.orgA.ID, kv.EnvLive, []string{"agent:run", "studies:write"})
	e.mustKey("agent_read", e.orgA.ID, kv.EnvLive, []string{"agent:run", "studies:read"})
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Churn")
	ctx := context.Background()

	// Over the raw JSON-RPC fast path (its own encoding of the task) and
	// through the SDK.
	fast := e.rpc("agent", sendBody(`{"skill":"get_study","arguments":{"study_id":"`+st.ID.String()+`"}}`))
	if fast.Error != nil {
		t.Fatalf("fast path: %+v", fast.Error)
	}
	owner := e.mustA2A(t, "agent")
	var hidden []a2a.TaskID
	for i := 0; i < 3; i++ {
		hidden = append(hidden, mustSend(t, owner, skillMessage("get_study", map[string]any{"study_id": st.ID.String()}), false).ID)
	}
	// A task recorded before tasks kept their scopes is judged by its skill's.
	legacyID := e.db.NewID()
	legacy, err := e.db.CreateAgentTask(ctx, kv.AgentTask{ID: legacyID, OrgID: e.orgA.ID, Env: kv.EnvLive, Skill: "get_study",
		State: string(a2a.TaskStateCompleted), Final: true,
		Body: []byte(`{"id":"` + legacyID.String() + `","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	hidden = append(hidden, a2a.TaskID(legacy.ID.String()))
	writer, reader := e.mustA2A(t, "agent_write"), e.mustA2A(t, "agent_read")
	mine := mustSend(t, writer, skillMessage("whoami", nil), false)
	// The newest task is hidden from the writer, so its first page skips it.
	hidden = append(hidden, mustSend(t, owner, skillMessage("get_study", map[string]any{"study_id": st.ID.String()}), false).ID)

	for _, id := range hidden {
		if _, err := writer.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errorsIs(err, a2a.ErrTaskNotFound) {
			t.Fatalf("GetTask without studies:read: %v", err)
		}
		if _, err := writer.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errorsIs(err, a2a.ErrTaskNotFound) {
			t.Fatalf("CancelTask without studies:read: %v", err)
		}
		for _, err := range writer.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
			if !errorsIs(err, a2a.ErrTaskNotFound) {
				t.Fatalf("SubscribeToTask without studies:read: %v", err)
			}
			break
		}
		cont := skillMessage("whoami", nil)
		cont.TaskID = id
		if _, err := writer.SendMessage(ctx, &a2a.SendMessageRequest{Message: cont}); !errorsIs(err, a2a.ErrTaskNotFound) {
			t.Fatalf("continuing without studies:read: %v", err)
		}

		// The key holding the scope sees the task: it reads it, and the other methods
		// answer for the task as it is (ended).
		if got, err := reader.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || got.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("GetTask with studies:read: %v", err)
		}
		if _, err := reader.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errorsIs(err, a2a.ErrTaskNotCancelable) {
			t.Fatalf("CancelTask with studies:read: %v", err)
		}
		for _, err := range reader.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
			if !errorsIs(err, a2a.ErrUnsupportedOperation) {
				t.Fatalf("SubscribeToTask with studies:read: %v", err)
			}
			break
		}
		if _, err := reader.SendMessage(ctx, &a2a.SendMessageRequest{Message: cont}); !errorsIs(err, a2a.ErrInvalidParams) {
			t.Fatalf("continuing an ended task with studies:read: %v", err)
		}
	}

	// ListTasks: the writer pages through its own task only, the reader through every
	// get_study task and the whoami one.
	list := func(c interface {
		ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	}) (ids []a2a.TaskID, total int) {
		token := ""
		for {
			res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: token, IncludeArtifacts: true})
			if err != nil {
				t.Fatal(err)
			}
			total = res.TotalSize
			for _, task := range res.Tasks {
				ids = append(ids, task.ID)
			}
			if token = res.NextPageToken; token == "" {
				return ids, total
			}
		}
	}
	if ids, total := list(writer); len(ids) != 1 || ids[0] != mine.ID || total != 1 {
		t.Fatalf("writer lists %v (total %d), want only %s", ids, total, mine.ID)
	}
	if ids, total := list(reader); len(ids) != 7 || total != 7 || ids[0] != hidden[4] || ids[1] != mine.ID || ids[2] != hidden[3] {
		t.Fatalf("reader lists %v (total %d)", ids, total)
	}
}
