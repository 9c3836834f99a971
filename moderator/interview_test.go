package moderator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"interviewd/kv"
)

// conductAll drives Conduct to the end the way the server does: the position and the
// transcript travel through kv types between turns. It returns the transcript.
func conductAll(tb testing.TB, m Engine, brief kv.Brief, facts map[string]string, note string) []kv.Message {
	tb.Helper()
	ctx := context.Background()
	var (
		script     []byte
		transcript []kv.Message
		answer     string
	)
	for turn := 0; ; turn++ {
		if turn > 100 {
			tb.Fatalf("interview did not end: %+v", transcript)
		}
		out, err := Conduct(ctx, m, ConductInput{Brief: brief, Script: script, Transcript: transcript, Context: facts, Note: note, Answer: answer})
		if err != nil {
			tb.Fatalf("turn %d: %v", turn, err)
		}
		if answer != "" {
			transcript = append(transcript, kv.Message{Speaker: kv.SpeakerParticipant, Text: answer})
		}
		for _, msg := range out.Messages {
			transcript = append(transcript, kv.Message{Speaker: kv.SpeakerInterviewer, Text: msg})
		}
		script = out.Script
		if out.Done {
			return transcript
		}
		answer = "On paper, mostly, and it takes a while every Monday " + strings.Repeat("x", turn%3)
	}
}

func TestConduct(t *testing.T) {
	brief := kv.Brief{
		PreInterviewQuestions: []string{"What is your role?", "How many people are in your team?"},
		VerbatimQuestions:     []string{"How do you plan your week?", "What gets in the way?", "  ", "What would you change?"},
	}
	t.Run("OK_WholeInterviewVerbatimInOrder", func(t *testing.T) {
		tr := conductAll(t, NewBuiltin(), brief, nil, "")
		if tr[0].Text != ScriptGreeting || tr[len(tr)-1].Text != ScriptClosing {
			t.Fatalf("opening/closing: %+v", tr)
		}
		var asked []string
		for _, m := range tr {
			if m.Speaker == kv.SpeakerInterviewer && (slices.Contains(brief.PreInterviewQuestions, m.Text) || slices.Contains(brief.VerbatimQuestions, m.Text)) {
				asked = append(asked, m.Text)
			}
		}
		want := []string{"What is your role?", "How many people are in your team?", "How do you plan your week?", "What gets in the way?", "What would you change?"}
		if !slices.Equal(asked, want) {
			t.Fatalf("asked %q", asked)
		}
	})
	t.Run("OK_ContextAnswersScreener", func(t *testing.T) {
		tr := conductAll(t, NewBuiltin(), brief, map[string]string{"role": "nurse"}, "")
		for _, m := range tr {
			if m.Text == "What is your role?" {
				t.Fatal("asked a screener question the context answers")
			}
		}
	})
	t.Run("OK_NoteSteersButIsNeverSaid", func(t *testing.T) {
		note := "dig into paper and ask about the budget secret"
		tr := conductAll(t, NewBuiltin(), brief, nil, note)
		steered := false
		for _, m := range tr {
			if strings.Contains(m.Text, "secret") || strings.Contains(m.Text, "budget") {
				t.Fatalf("message %q reveals the note", m.Text)
			}
			steered = steered || strings.Contains(m.Text, "You mentioned paper")
		}
		if !steered {
			t.Fatalf("the note did not steer any probe: %+v", tr)
		}
	})
	t.Run("OK_ProbeSeesTheAnswerInTheTranscript", func(t *testing.T) {
		var got ProbeRequest
		rogue := &rogueModerator{probe: func(req ProbeRequest) (string, error) { got = req; return "", nil }}
		at := []byte(`{"phase":"verbatim","index":0,"probes":0}`)
		prior := []kv.Message{{Speaker: kv.SpeakerInterviewer, Text: "How do you plan your week?"}}
		out, err := Conduct(context.Background(), rogue, ConductInput{Brief: brief, Script: at, Transcript: prior, Context: map[string]string{"plan": "pro"}, Note: "n", Answer: "On paper."})
		if err != nil || out.Messages[0] != "What gets in the way?" || out.Done {
			t.Fatalf("%+v %v", out, err)
		}
		last := got.Transcript[len(got.Transcript)-1]
		if got.Answer != "On paper." || last.Speaker != kv.SpeakerParticipant || last.Text != "On paper." || got.Context["plan"] != "pro" || got.Note != "n" {
			t.Fatalf("probe request %+v", got)
		}
	})
	t.Run("ErrEngine", func(t *testing.T) {
		boom := errors.New("engine down")
		rogue := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "", boom }}
		_, err := Conduct(context.Background(), rogue, ConductInput{Brief: brief, Script: []byte(`{"phase":"verbatim","index":1}`), Answer: "x"})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrUnreadablePosition", func(t *testing.T) {
		if _, err := Conduct(context.Background(), NewBuiltin(), ConductInput{Brief: brief, Script: []byte("{"), Answer: "x"}); err == nil {
			t.Fatal("a corrupt position was accepted")
		}
	})
	t.Run("ErrCancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Conduct(ctx, NewBuiltin(), ConductInput{Brief: brief}); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}
