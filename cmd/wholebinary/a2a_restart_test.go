package wholebinary

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"interviewd/kv/pgtest"
	"interviewd/moderator/chattest"
)

// keyTransport sends an API key as a bearer.
type keyTransport string

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// a2aClient is the a2a-go client for the booted program's A2A endpoint.
func a2aClient(t *testing.T, srv *booted, key string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/v1/a2a", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: keyTransport(key), Timeout: bootWait}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func sendSkill(t *testing.T, c *a2aclient.Client, skill string, args map[string]any, immediately bool) *a2a.Task {
	t.Helper()
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"skill": skill, "arguments": args}))}
	if immediately {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", skill, err)
	}
	return res.(*a2a.Task)
}

// TestA2ATaskFinishesAfterRestart stops the real program while an A2A task's job is
// held at the model, starts it again on the same data folder, and reads the task: the
// job resumes and GetTask shows the task completing with its result.
func TestA2ATaskFinishesAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("boots the program three times")
	}
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Acme Research", "--email", "owner@acme.test")
	var key struct {
		Secret string `json:"secret"`
	}
	admin(t, &key, "keys", "create", "--data", dir, "--org", org.OrgID, "--name", "agent", "--env", "live",
		"--scopes", "studies:read,studies:write,agent:run")

	// A study, authored by the built-in engine.
	srv := mustBoot(t, "--data", dir)
	authored := sendSkill(t, a2aClient(t, srv, key.Secret), "create_study",
		map[string]any{"guidance": "Understand why nurses leave night shifts. Interview nurses who moved to day work."}, false)
	if authored.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("authoring: %s", authored.Status.State)
	}
	studyID := authored.Artifacts[1].Parts[0].Data().(map[string]any)["study_id"].(string)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	// A simulation whose model never answers: the program stops with it working.
	g := chattest.NewGated(t)
	srv = mustBoot(t, "--data", dir, "--model-url", g.URL+"/v1", "--model", "gated")
	task := sendSkill(t, a2aClient(t, srv, key.Secret), "simulate_study", map[string]any{"study_id": studyID, "max_turns": 2}, true)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("simulation task: %s", task.Status.State)
	}
	g.WaitArrived(t, 1)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	g.Stop()

	// Started again with the built-in engine, the program resumes the job, and the
	// task shows it finishing.
	srv = mustBoot(t, "--data", dir)
	c := a2aClient(t, srv, key.Secret)
	deadline := time.Now().Add(bootWait)
	for {
		got, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State == a2a.TaskStateCompleted {
			result := got.Artifacts[len(got.Artifacts)-1]
			if sim, _ := result.Parts[0].Data().(map[string]any); result.ID != "result" || sim["status"] != "completed" {
				t.Fatalf("result %+v", result)
			}
			break
		}
		if got.Status.State != a2a.TaskStateWorking || time.Now().After(deadline) {
			t.Fatalf("after the restart the task is %s: %+v", got.Status.State, got.Status.Message)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// On a store shared by several nodes, a task answered by one node is found at once by
// another: an agent's next request may reach any node.
func TestA2ATasksAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("boots two nodes on PostgreSQL")
	}
	url := pgtest.URL(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dirs[0], "--store", url, "--org", "Nodes", "--email", "nodes@example.test")
	var key struct {
		Secret string `json:"secret"`
	}
	admin(t, &key, "keys", "create", "--data", dirs[1], "--store", url, "--org", org.OrgID, "--name", "agent", "--env", "live",
		"--scopes", "studies:read,agent:run")
	a := a2aClient(t, mustBoot(t, "--data", dirs[0], "--store", url), key.Secret)
	b := a2aClient(t, mustBoot(t, "--data", dirs[1], "--store", url), key.Secret)
	for i := 0; i < 10; i++ {
		task := sendSkill(t, a, "whoami", nil, false)
		got, err := b.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("message %d: the other node reads %v %+v", i, err, got)
		}
	}
}
