package server

import (
	"context"
	stdjson "encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/moderator/chattest"
	"interviewd/server/research"
)

// pollTask reads a task until ok says so, with a deadline generous for busy machines.
func pollTask(tb testing.TB, c *a2aclient.Client, id a2a.TaskID, what string, ok func(*a2a.Task) bool) *a2a.Task {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		t, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			tb.Fatalf("get task: %v", err)
		}
		if ok(t) {
			return t
		}
		if time.Now().After(deadline) {
			tb.Fatalf("task %s not %s: %s %+v", id, what, t.Status.State, t.Status.Message)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ended(t *a2a.Task) bool { return t.Status.State.Terminal() }

// jobHandle is the "accepted" artifact of a background job's task.
func jobHandle(tb testing.TB, t *a2a.Task) string {
	tb.Helper()
	var h struct {
		JobID string `json:"job_id"`
	}
	artifactJSON(tb, t, "accepted", &h)
	if h.JobID == "" {
		tb.Fatalf("no job id in %+v", t.Artifacts)
	}
	return h.JobID
}

// Authoring runs as a task that stays working until its job ends, then completes with
// the authoring status (what REST answers) as its result; a refused request fails it
// with the job's reason.
func TestA2AAuthoringTask(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	guidance := "Understand why shoppers abandon checkout on mobile. Interview people who left in the last month."

	t.Run("OK_ReturnImmediately", func(t *testing.T) {
		task := mustSend(t, c, skillMessage("create_study", map[string]any{"guidance": guidance}), true)
		if task.Status.State != a2a.TaskStateWorking && task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("state %s", task.Status.State)
		}
		job := jobHandle(t, task)
		done := pollTask(t, c, task.ID, "ended", ended)
		if done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("ended %s: %+v", done.Status.State, done.Status.Message)
		}
		var got, want map[string]any
		artifactJSON(t, done, "result", &got)
		e.do("GET", "/v1/api/studies/jobs/"+job, "a_live", "").json(t, &want)
		if g, w := jsonText(t, got), jsonText(t, want); g != w || got["status"] != "ready" {
			t.Fatalf("result %s, REST %s", g, w)
		}
	})
	t.Run("OK_Blocking", func(t *testing.T) {
		task := mustSend(t, c, skillMessage("create_study", map[string]any{"guidance": guidance}), false)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("blocking send answered %s", task.Status.State)
		}
		var got research.AuthoringStatus
		artifactJSON(t, task, "result", &got)
		if got.Status != "ready" || got.StudyID == nil {
			t.Fatalf("result %+v", got)
		}
		// Refine continues the same study.
		refined := mustSend(t, c, skillMessage("refine_study", map[string]any{"study_id": got.StudyID.String(), "guidance": "Add a question about delivery costs."}), false)
		var r research.AuthoringStatus
		artifactJSON(t, refined, "result", &r)
		if refined.Status.State != a2a.TaskStateCompleted || r.StudyID == nil || *r.StudyID != *got.StudyID {
			t.Fatalf("refine: %s %+v", refined.Status.State, r)
		}
	})
	t.Run("ErrRefusedFailsTask", func(t *testing.T) {
		task := mustSend(t, c, skillMessage("create_study", map[string]any{"guidance": "Write a poem about autumn leaves."}), false)
		if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil {
			t.Fatalf("refused authoring: %s", task.Status.State)
		}
		var got map[string]any
		artifactJSON(t, task, "result", &got)
		if got["status"] != "failed" || got["study_id"] != nil {
			t.Fatalf("result %v", got)
		}
		body, _ := task.Status.Message.Parts[1].Data().(map[string]any)
		if body["code"] != "job_failed" || body["detail"] == "" {
			t.Fatalf("failure body %v", body)
		}
	})
}

// A simulation task is cancelled where its job can be stopped: the job ends failed
// (and REST says so) and the task is cancelled; a cancelled task stays cancelled.
func TestA2ACancelStopsJob(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)

	task := mustSend(t, c, skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 3}), true)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("state %s", task.Status.State)
	}
	job := jobHandle(t, task)
	g.WaitArrived(t, 1) // the job is running, held at the model
	cancelled, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || cancelled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %+v", err, cancelled)
	}
	sim := e.pollSimulation(t, "a_live", job, "ended", simEnded)
	if sim.Status != "failed" || sim.Error == nil || *sim.Error != jobs.CanceledMessage {
		t.Fatalf("job after cancel: %+v", sim)
	}
	if again := pollTask(t, c, task.ID, "read", ended); again.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("task after cancel: %s", again.Status.State)
	}
	if _, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: task.ID}); !errorsIs(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("second cancel: %v", err)
	}
}

// A task working when the server stops is finished by the next one: the job resumes
// after the restart and GetTask shows the task completing with its result.
func TestA2ATaskSurvivesRestart(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")
	task := mustSend(t, c, skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 2}), true)
	g.WaitArrived(t, 1)
	if got := pollTask(t, c, task.ID, "working", func(*a2a.Task) bool { return true }); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("before restart: %s", got.Status.State)
	}

	e.restartJobs(moderator.NewBuiltin())
	g.Stop()
	c = e.mustA2A(t, "agent")
	done := pollTask(t, c, task.ID, "ended", ended)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after restart: %s %+v", done.Status.State, done.Status.Message)
	}
	var sim research.SimulationStatus
	artifactJSON(t, done, "result", &sim)
	if sim.Status != "completed" || len(sim.Turns) == 0 {
		t.Fatalf("result %+v", sim)
	}
}

// chattestFail makes the gated model answer with an error engines do not retry.
var chattestFail = chattest.Answer{Fail: true}

func chattestAnswer(text string) chattest.Answer { return chattest.Answer{Text: text} }

// A message sent again with the same messageId (a retry after a lost answer) gets the
// first one's answer: no second study is authored, no second link minted; the same
// messageId with another request is refused.
func TestA2AMessageIDIsIdempotencyKey(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Links")
	send := func(id, data string) rpcAnswer {
		return e.rpc("agent", rpcCall("SendMessage", `{"configuration":{"returnImmediately":true},"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":`+data+`}]}}`))
	}
	artifact := func(a rpcAnswer, id string) map[string]any {
		t.Helper()
		var res struct {
			Task struct {
				Artifacts []struct {
					ArtifactID string `json:"artifactId"`
					Parts      []struct {
						Data map[string]any `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		}
		if a.Error != nil || stdjson.Unmarshal(a.Result, &res) != nil {
			t.Fatalf("answer %+v %s", a.Error, a.Result)
		}
		for _, art := range res.Task.Artifacts {
			if art.ArtifactID == id {
				return art.Parts[0].Data
			}
		}
		t.Fatalf("no artifact %s in %s", id, a.Result)
		return nil
	}
	create := `{"skill":"create_study","arguments":{"guidance":"Learn why people cancel their gym membership."}}`
	first, again := artifact(send("msg-create-1", create), "accepted"), artifact(send("msg-create-1", create), "accepted")
	if first["job_id"] == nil || first["job_id"] != again["job_id"] {
		t.Fatalf("retried message started another job: %v, %v", first, again)
	}
	if other := artifact(send("msg-create-2", create), "accepted"); other["job_id"] == first["job_id"] {
		t.Fatal("a new messageId replayed the first job")
	}
	link := `{"skill":"create_participant_link","arguments":{"study_id":"` + st.ID.String() + `","context":{"k":"v"}}}`
	l1, l2 := artifact(send("msg-link-1", link), "result"), artifact(send("msg-link-1", link), "result")
	if l1["url"] == nil || l1["url"] != l2["url"] {
		t.Fatalf("retried link message minted another link: %v, %v", l1, l2)
	}
	// The same retry without a configuration takes the fast path: the same answer.
	fast := e.rpc("agent", rpcCall("SendMessage", `{"message":{"messageId":"msg-link-1","role":"ROLE_USER","parts":[{"data":`+link+`}]}}`))
	if l3 := artifact(fast, "result"); l3["url"] != l1["url"] {
		t.Fatalf("fast-path retry minted another link: %v, %v", l1, l3)
	}
	reused := send("msg-link-1", `{"skill":"create_participant_link","arguments":{"study_id":"`+st.ID.String()+`","context":{"k":"other"}}}`)
	if reused.Error == nil || reused.Error.Code != -32602 || reused.errorCode() != "idempotency_key_reused" {
		t.Fatalf("messageId reused for another request: %+v", reused.Error)
	}
}
