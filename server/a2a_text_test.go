package server

import (
	"context"
	stdjson "encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	a2asurface "interviewd/server/a2a"
	"interviewd/server/research"
)

func textMessage(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func TestPlainIntent(t *testing.T) {
	id := "0191d2f4-8c7e-7b1a-9f3e-2a4b6c8d0e1f"
	for _, tc := range []struct{ text, skill, arg string }{
		{"Create a study about why nurses leave night shifts", "create_study", "guidance"},
		{"please design a new research study on how people choose a bank", "create_study", "guidance"},
		{"What is the status of study " + id + "?", "get_study", "study_id"},
		{"get study " + strings.ToUpper(id), "get_study", "study_id"},
		{"List my studies", "list_studies", ""},
		{"who am I?", "whoami", ""},
		{"Tell me a joke", "", ""},
		{"create a study", "", ""},
		{"", "", ""},
	} {
		in, ok := a2asurface.PlainIntent(tc.text)
		if in.Skill != tc.skill || ok != (tc.skill != "") {
			t.Fatalf("%q: %+v %v", tc.text, in, ok)
		}
		if tc.arg != "" && !strings.Contains(string(in.Arguments), `"`+tc.arg+`"`) {
			t.Fatalf("%q: arguments %s", tc.text, in.Arguments)
		}
	}
	if in, _ := a2asurface.PlainIntent("Status of study " + strings.ToUpper(id)); !strings.Contains(string(in.Arguments), id) {
		t.Fatalf("study id not lower-cased: %s", in.Arguments)
	}
}

// Plain text runs the skill it maps to; text the engine cannot map asks back naming
// the skills, and the reply on that task (with a data part) runs it.
func TestA2APlainText(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")

	created := mustSend(t, c, textMessage("Create a study about why shoppers abandon checkout on mobile, interviewing people who left in the last month"), false)
	var authoring research.AuthoringStatus
	artifactJSON(t, created, "result", &authoring)
	if created.Status.State != a2a.TaskStateCompleted || authoring.StudyID == nil {
		t.Fatalf("create by text: %s %+v", created.Status.State, authoring)
	}
	status := mustSend(t, c, textMessage("What's the status of study "+authoring.StudyID.String()+"?"), false)
	var detail map[string]any
	artifactJSON(t, status, "result", &detail)
	if detail["id"] != authoring.StudyID.String() || detail["mode"] != "test" {
		t.Fatalf("status by text: %v", detail)
	}

	asked := mustSend(t, c, textMessage("Tell me a joke"), false)
	if asked.Status.State != a2a.TaskStateInputRequired || asked.Status.Message == nil || !strings.Contains(asked.Status.Message.Parts[0].Text(), "create_study") {
		t.Fatalf("unmapped text: %s %+v", asked.Status.State, asked.Status.Message)
	}
	reply := skillMessage("whoami", nil)
	reply.TaskID, reply.ContextID = asked.ID, asked.ContextID
	answered := mustSend(t, c, reply, false)
	if answered.ID != asked.ID || answered.Status.State != a2a.TaskStateCompleted || len(answered.History) != 2 {
		t.Fatalf("reply on the task: %s %s %d", answered.ID, answered.Status.State, len(answered.History))
	}
	// A task that has ended takes no more messages.
	reply.ID = a2a.NewMessageID()
	if _, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: reply}); !errorsIs(err, a2a.ErrInvalidParams) {
		t.Fatalf("message to an ended task: %v", err)
	}
}

// ListTasks pages newest first with keyset cursors, filters by context and state, and
// sees only the caller's partition.
func TestA2AListTasks(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	e.mustKey("agent_b", e.orgB.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	var ids []a2a.TaskID
	for i := 0; i < 5; i++ {
		msg := skillMessage("whoami", nil)
		if i%2 == 0 {
			msg.ContextID = "ctx-even"
		}
		ids = append(ids, mustSend(t, c, msg, false).ID)
	}
	mustSend(t, c, textMessage("hello?"), false) // input required
	mustSend(t, e.mustA2A(t, "agent_b"), skillMessage("whoami", nil), false)

	ctx := context.Background()
	var seen []a2a.TaskID
	token := ""
	for page := 0; ; page++ {
		res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 2, PageToken: token, Status: a2a.TaskStateCompleted})
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalSize != 5 || res.PageSize != 2 {
			t.Fatalf("page %d: total %d size %d", page, res.TotalSize, res.PageSize)
		}
		for _, task := range res.Tasks {
			if task.Artifacts != nil {
				t.Fatal("artifacts listed without includeArtifacts")
			}
			seen = append(seen, task.ID)
		}
		if token = res.NextPageToken; token == "" {
			break
		}
	}
	if len(seen) != 5 || seen[0] != ids[4] || seen[4] != ids[0] {
		t.Fatalf("listed %v, created %v", seen, ids)
	}
	even, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "ctx-even", IncludeArtifacts: true})
	if err != nil || len(even.Tasks) != 3 || len(even.Tasks[0].Artifacts) != 1 {
		t.Fatalf("by context: %v %+v", err, even)
	}
	for _, bad := range []*a2a.ListTasksRequest{{PageSize: 101}, {PageToken: "nope"}} {
		if _, err := c.ListTasks(ctx, bad); !errorsIs(err, a2a.ErrInvalidParams) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	// Another partition sees only its own task, and a cursor of org A is refused
	// there like a made-up one.
	first, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
	if err != nil || first.NextPageToken == "" || first.TotalSize != 6 {
		t.Fatalf("org A: %v %+v", err, first)
	}
	b := e.mustA2A(t, "agent_b")
	if other, err := b.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil || other.TotalSize != 1 || len(other.Tasks) != 1 {
		t.Fatalf("org B: %v %+v", err, other)
	}
	if _, err := b.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: first.NextPageToken}); !errorsIs(err, a2a.ErrInvalidParams) {
		t.Fatalf("org A's cursor in org B: %v", err)
	}
}

// A task whose job ended while nobody read it is listed as it now is: a list filtered
// by state settles the working tasks first.
func TestA2AListSettlesWorkingTasks(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")
	task := mustSend(t, c, skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 1}), true)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("state %s", task.Status.State)
	}
	e.pollSimulation(t, "a_live", jobHandle(t, task), "ended", simEnded) // over REST: the task is not read
	ctx := context.Background()
	working, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateWorking})
	if err != nil || working.TotalSize != 0 || len(working.Tasks) != 0 {
		t.Fatalf("working: %v %+v", err, working)
	}
	done, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateCompleted})
	if err != nil || len(done.Tasks) != 1 || done.Tasks[0].ID != task.ID {
		t.Fatalf("completed: %v %+v", err, done)
	}
}

// FuzzPlainIntent: any text maps to nothing or to a skill of the table whose arguments
// are a JSON object.
func FuzzPlainIntent(f *testing.F) {
	for _, s := range []string{"Create a study about sleep", "status of study 0191d2f4-8c7e-7b1a-9f3e-2a4b6c8d0e1f", "list studies", "who am i", "\x00\xff"} {
		f.Add(s)
	}
	known := map[string]bool{}
	for _, o := range New(Config{DB: mustOpenDB(f), BaseURL: testBaseURL}).Operations() {
		known[o.Name] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		in, ok := a2asurface.PlainIntent(text)
		if !ok {
			return
		}
		if !known[in.Skill] {
			t.Fatalf("%q maps to unknown skill %q", text, in.Skill)
		}
		if len(in.Arguments) > 0 {
			var obj map[string]any
			if err := stdjson.Unmarshal(in.Arguments, &obj); err != nil {
				t.Fatalf("%q: arguments %s: %v", text, in.Arguments, err)
			}
		}
	})
}
