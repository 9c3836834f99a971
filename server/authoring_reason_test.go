package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/server/research"
)

// TestRefineRefusalSaysWhy: a refine the built-in engine cannot apply fails its job
// with a reason that names the instruction and what the engine understands. REST keeps
// the contract's three fields exactly; MCP says the reason beside the same JSON; A2A
// fails the task with it.
func TestRefineRefusalSaysWhy(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	saved := e.mustStudy(e.orgA.ID, kv.EnvLive, "Bakery rotas")
	path := "/v1/api/studies/" + saved.ID.String() + ":refine"
	const want = `Nothing was changed: the built-in engine could not apply "change objective 1" (say what objective 1 should become, as in "change objective 1 to …").`

	r := e.do("POST", path, "a_live", `{"guidance":"Add a question about flour prices, then change objective 1."}`)
	if r.status != 202 {
		t.Fatalf("refine: %d %s", r.status, r.body)
	}
	var h research.AuthoringJob
	r.json(t, &h)
	done := e.pollAuthoring("a_live", h.JobID)
	var raw map[string]any
	done.json(t, &raw)
	if done.status != 200 || len(raw) != 3 || raw["status"] != "failed" || raw["study_id"] != saved.ID.String() {
		t.Fatalf("REST: %d %s, want 200 with exactly status, study_id and brief", done.status, done.body)
	}
	var st research.AuthoringStatus
	done.json(t, &st)
	if !reflect.DeepEqual(st.Brief.VerbatimQuestions, saved.Brief.VerbatimQuestions) {
		t.Fatalf("the refused refine changed the brief: %+v", st.Brief)
	}

	for _, era := range eras {
		t.Run("MCP_"+era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			res, sc := callTool(t, cs, "get_authoring_status", map[string]any{"job_id": h.JobID})
			if res.IsError || !reflect.DeepEqual(any(sc), restJSON(t, done)) {
				t.Fatalf("MCP %v (error %v) differs from REST %s", sc, res.IsError, done.body)
			}
			mustConform(t, outputSchemas(t, cs), "get_authoring_status", sc)
			if note := toolNote(res); !strings.HasPrefix(note, "The authoring job failed. "+want) || !strings.Contains(note, "It understands: ") {
				t.Fatalf("MCP note %q, want the reason %q", note, want)
			}
		})
	}
	t.Run("MCP_NoNoteWhenReady", func(t *testing.T) {
		ok := e.do("POST", path, "a_live", `{"guidance":"Add a question about flour prices."}`)
		var h research.AuthoringJob
		ok.json(t, &h)
		if done := e.pollAuthoring("a_live", h.JobID); done.status != 200 || !strings.Contains(string(done.body), `"status":"ready"`) {
			t.Fatalf("refine: %d %s", done.status, done.body)
		}
		res, _ := callTool(t, e.mustMCP(t, "a_live", eraModern), "get_authoring_status", map[string]any{"job_id": h.JobID})
		if note := toolNote(res); note != "" {
			t.Fatalf("a ready job has a note %q", note)
		}
	})
	t.Run("A2A", func(t *testing.T) {
		c := e.mustA2A(t, "agent")
		task := mustSend(t, c, skillMessage("refine_study", map[string]any{"study_id": saved.ID.String(), "guidance": "change objective 1"}), false)
		if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil {
			t.Fatalf("refused refine: %s", task.Status.State)
		}
		text := task.Status.Message.Parts[0].Text()
		body, _ := task.Status.Message.Parts[1].Data().(map[string]any)
		if !strings.HasPrefix(text, want) || body["code"] != "job_failed" || body["detail"] != text {
			t.Fatalf("task says %q %v, want the reason %q", text, body, want)
		}
	})
}
