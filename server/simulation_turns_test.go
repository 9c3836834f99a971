package server

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/research"
)

// longRehearsalBrief has more scripted questions (and follow-ups) than 12 turns hold.
func longRehearsalBrief() kv.Brief {
	return kv.Brief{Title: ptrTo("Bakery rotas"), Objectives: []string{"Learn how independent bakery owners plan staff rotas"},
		PreInterviewQuestions: []string{"What is your role?", "How many staff work at your bakery?"},
		VerbatimQuestions: []string{"How do you plan staff rotas?", "What gets in the way of the rota?", "Who helps you with the rota?",
			"How do you order flour?", "What would you change about rotas?", "Is there anything else you would like to share?"}}
}

// scriptedAsked counts the brief's scripted questions asked in turns, word for word
// and in order (a message may hold the greeting before its question).
func scriptedAsked(turns []research.SimulationTurn, b kv.Brief) int {
	questions := append(append([]string(nil), b.PreInterviewQuestions...), b.VerbatimQuestions...)
	asked := 0
	for _, l := range turns {
		if l.Speaker == "interviewer" && asked < len(questions) && (l.Text == questions[asked] || strings.HasSuffix(l.Text, "\n\n"+questions[asked])) {
			asked++
		}
	}
	return asked
}

// TestSimulationDefaultTurnsAndStop: with no max_turns a simulation reaches every
// scripted question and the closing, and says nothing more; a run its turn limit stops
// says so (how many turns, how many questions not reached) on every surface and in the
// app, instead of "Finished".
func TestSimulationDefaultTurnsAndStop(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	b := longRehearsalBrief()
	if moderator.ScriptTurns(b) <= kv.SimulationMaxTurnsDefault {
		t.Fatalf("the brief fits in %d turns: it proves nothing about the default", kv.SimulationMaxTurnsDefault)
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, b)
	total := len(b.PreInterviewQuestions) + len(b.VerbatimQuestions)

	full := e.pollSimulation(t, "a_live", e.mustSimulate("a_live", st.ID, `{"persona":"Bakery owner in Leeds, sceptical of rota apps"}`), "ended", simEnded)
	last := full.Turns[len(full.Turns)-1]
	if full.Status != "completed" || full.Notice != nil || last.Speaker != "interviewer" || last.Text != moderator.ScriptClosing || scriptedAsked(full.Turns, b) != total {
		t.Fatalf("the default run stopped short: %+v", full)
	}

	id := e.mustSimulate("a_live", st.ID, `{"max_turns":4}`)
	stopped := e.pollSimulation(t, "a_live", id, "ended", simEnded)
	want := fmt.Sprintf("Stopped after 4 turns, the turn limit: %d of %d scripted questions not reached.", total-scriptedAsked(stopped.Turns, b), total)
	if stopped.Status != "completed" || !stopped.Ready || stopped.Notice == nil || *stopped.Notice != want {
		t.Fatalf("stopped run: %+v, want the notice %q", stopped, want)
	}

	t.Run("MCP", func(t *testing.T) {
		cs := e.mustMCP(t, "a_live", eraModern)
		res, sc := callTool(t, cs, "get_simulation_status", map[string]any{"job_id": id})
		r := e.do("GET", "/v1/api/simulations/"+id, "a_live", "")
		if res.IsError || !reflect.DeepEqual(any(sc), restJSON(t, r)) || sc["notice"] != want {
			t.Fatalf("MCP %v, REST %s", sc, r.body)
		}
		mustConform(t, outputSchemas(t, cs), "get_simulation_status", sc)
	})
	t.Run("A2A", func(t *testing.T) {
		c := e.mustA2A(t, "agent")
		task := mustSend(t, c, skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 2}), true)
		done := pollTask(t, c, task.ID, "ended", ended)
		if done.Status.State != a2a.TaskStateCompleted || !strings.Contains(done.Status.Message.Parts[0].Text(), "Stopped after 2 turns, the turn limit: ") {
			t.Fatalf("task %s says %+v", done.Status.State, done.Status.Message)
		}
	})
	t.Run("App", func(t *testing.T) {
		owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
		wantPage(t, owner.get(t, "/app/simulations/"+id), 200, want)
		if page := string(owner.get(t, "/app/simulations/"+id).body); strings.Contains(page, "Finished.") {
			t.Fatal("a stopped run says Finished")
		}
		var polled research.SimulationStatus
		if err := json.Unmarshal(owner.get(t, "/app/simulations/"+id+"/status").body, &polled); err != nil || polled.Notice == nil || *polled.Notice != want {
			t.Fatalf("the page's status endpoint: %+v %v", polled, err)
		}
		// The study page offers the default: enough turns for every question.
		wantPage(t, owner.get(t, "/app/studies/"+st.ID.String()), 200, fmt.Sprintf(`name="max_turns" type="number" min="1" max="200" value="%d"`, moderator.ScriptTurns(b)))
	})
}
