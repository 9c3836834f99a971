package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"interviewd/kv"
	"interviewd/server/research"
)

// streamToEnd sends msg as a streaming message and returns the task as the events
// built it (the first event is the task, later ones its artifacts and status) and how
// many events changed it.
func streamToEnd(tb testing.TB, c *a2aclient.Client, msg *a2a.Message) (*a2a.Task, int) {
	tb.Helper()
	var task *a2a.Task
	n := 0
	for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			tb.Fatalf("stream: %v", err)
		}
		if isProgress(ev) {
			continue // the job moving; the task's own changes are counted
		}
		n++
		switch ev := ev.(type) {
		case *a2a.Task:
			task = ev
		case *a2a.TaskArtifactUpdateEvent:
			task.Artifacts = append(task.Artifacts, ev.Artifact)
		case *a2a.TaskStatusUpdateEvent:
			task.Status = ev.Status
		}
	}
	if task == nil {
		tb.Fatal("the stream carried no task")
	}
	return task, n
}

// The whole study workflow through the a2a-go client, as another agent would run it:
// create (streamed until the brief is ready) → simulate (streamed) → go live → invite
// and participant links → export, downloaded from the signed URL the last skill gives.
func TestA2AStudyWorkflow(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")

	created, events := streamToEnd(t, c, skillMessage("create_study", map[string]any{
		"guidance": "Understand why nurses leave night shifts. Interview nurses who moved to day work in the last year."}))
	var authoring research.AuthoringStatus
	artifactJSON(t, created, "result", &authoring)
	if created.Status.State != a2a.TaskStateCompleted || authoring.Status != "ready" || authoring.StudyID == nil || authoring.Brief == nil {
		t.Fatalf("create: %s %+v", created.Status.State, authoring)
	}
	if events != 3 || len(created.Artifacts) != 2 { // the working task, its result, its end
		t.Fatalf("create streamed %d events, %d artifacts", events, len(created.Artifacts))
	}
	study := authoring.StudyID.String()

	simulated, _ := streamToEnd(t, c, skillMessage("simulate_study", map[string]any{"study_id": study, "max_turns": 2, "persona": "A nurse of twenty years."}))
	var sim research.SimulationStatus
	artifactJSON(t, simulated, "result", &sim)
	if simulated.Status.State != a2a.TaskStateCompleted || sim.Status != "completed" || len(sim.Turns) == 0 {
		t.Fatalf("simulate: %s %+v", simulated.Status.State, sim)
	}

	live := mustSend(t, c, skillMessage("set_study_mode", map[string]any{"study_id": study, "mode": "live"}), false)
	var mode research.ModeResult
	artifactJSON(t, live, "result", &mode)
	if mode.Mode != kv.ModeLive {
		t.Fatalf("go live: %s %+v", live.Status.State, mode)
	}

	invite := mustSend(t, c, skillMessage("get_interview_link", map[string]any{"study_id": study}), false)
	var link research.InviteLink
	artifactJSON(t, invite, "result", &link)
	if !strings.HasPrefix(link.URL, testBaseURL+"/i/") || link.Mode != kv.ModeLive {
		t.Fatalf("invite link %+v", link)
	}
	personal := mustSend(t, c, skillMessage("create_participant_link", map[string]any{"study_id": study, "context": map[string]any{"ward": "ICU"}}), false)
	var plink map[string]any
	artifactJSON(t, personal, "result", &plink)
	if u, _ := plink["url"].(string); !strings.HasPrefix(u, testBaseURL+"/i/") || u == link.URL {
		t.Fatalf("participant link %v", plink)
	}

	exported, _ := streamToEnd(t, c, skillMessage("start_export", map[string]any{"study_id": study}))
	var status research.ExportStatus
	artifactJSON(t, exported, "result", &status)
	if exported.Status.State != a2a.TaskStateCompleted || !status.Ready {
		t.Fatalf("export: %s %+v", exported.Status.State, status)
	}
	download := mustSend(t, c, skillMessage("get_export_download", map[string]any{"job_id": jobHandle(t, exported)}), false)
	var dl struct {
		DownloadURL string `json:"download_url"`
	}
	artifactJSON(t, download, "result", &dl)
	resp, err := e.a2aHTTP("").Get(dl.DownloadURL) // signed: no bearer
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	csv, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(csv), "interview_id,study_id,") {
		t.Fatalf("download: %d %q", resp.StatusCode, csv)
	}
}
