package server

import (
	"context"
	"strings"
	"sync"
	"testing"

	"interviewd/kv"
	"interviewd/moderator"
)

// transcriptEngine is the built-in engine as a model would be plugged in (not the
// built-in type itself), keeping what each probe was shown of the conversation.
type transcriptEngine struct {
	moderator.Builtin
	mu    sync.Mutex
	shown [][]moderator.Message
}

func (e *transcriptEngine) Probe(ctx context.Context, req moderator.ProbeRequest) (string, error) {
	e.mu.Lock()
	e.shown = append(e.shown, append([]moderator.Message(nil), req.Transcript...))
	e.mu.Unlock()
	return "Could you tell me more about that?", nil
}

// TestParticipantModelSeesWholeConversation: turns on the built-in interviewer skip
// reading the transcript, which it never looks at; an engine that is a model is still
// shown everything said so far, in order, with the answer it follows up last.
func TestParticipantModelSeesWholeConversation(t *testing.T) {
	engine := &transcriptEngine{}
	e := mustServeEngine(t, engine)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Rotas", "How do you plan your week?", "What would you change?"))
	p := e.participant(st.LinkToken)
	p.open()
	answers := []string{"On paper, every Sunday.", "The paper gets lost.", "An app.", "Nothing else."}
	for _, a := range answers {
		if turn := p.mustSay(a); turn.Status != "in_progress" {
			break
		}
	}
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if len(engine.shown) < 2 {
		t.Fatalf("the engine was asked for %d probes", len(engine.shown))
	}
	for i, shown := range engine.shown {
		var said []string
		for _, m := range shown {
			said = append(said, m.Text)
		}
		// The conversation as the participant saw it up to this probe's answer.
		var want []string
		for _, m := range p.seen {
			want = append(want, m.Text)
			if m.Speaker == kv.SpeakerParticipant && m.Text == answers[i] {
				break
			}
		}
		if strings.Join(said, "|") != strings.Join(want, "|") {
			t.Fatalf("probe %d was shown\n%q\nwant\n%q", i, said, want)
		}
	}
}
