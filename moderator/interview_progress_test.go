package moderator

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"interviewd/kv"
)

func TestInterviewProgress(t *testing.T) {
	brief := kv.Brief{
		PreInterviewQuestions: []string{"What is your role?", "How many people are in your team?"},
		VerbatimQuestions:     []string{"How do you plan your week?", " ", "What gets in the way?", "What would you change?"},
	}
	facts := map[string]string{"role": "ward nurse"} // answers the first screener question
	if q, m := PlannedLength(brief, facts); q != 4 || m != (30+3*100+59)/60 {
		t.Fatalf("PlannedLength with context = %d questions, %d minutes", q, m)
	}
	if q, m := PlannedLength(brief, nil); q != 5 || m != (2*30+3*100+59)/60 {
		t.Fatalf("PlannedLength = %d questions, %d minutes", q, m)
	}
	if q, m := PlannedLength(kv.Brief{}, nil); q != 0 || m != 0 {
		t.Fatalf("PlannedLength of an empty brief = %d, %d", q, m)
	}

	// Drive a whole interview: the progress counts scripted questions only, in order,
	// and stays put while the interviewer follows up.
	ctx := context.Background()
	var script []byte
	var transcript []kv.Message
	answer := ""
	var seen []int
	for turn := 0; turn < 50; turn++ {
		out, err := Conduct(ctx, NewBuiltin(), ConductInput{Brief: brief, Script: script, Transcript: transcript, Context: facts, Answer: answer})
		if err != nil {
			t.Fatal(err)
		}
		script = out.Script
		p, ok := InterviewProgress(brief, facts, script)
		if out.Done {
			if ok {
				t.Fatalf("progress %+v once done", p)
			}
			break
		}
		if !ok || p.Total != 4 {
			t.Fatalf("turn %d: progress %+v, %v", turn, p, ok)
		}
		last := out.Messages[len(out.Messages)-1]
		scripted := slices.Contains(brief.PreInterviewQuestions, last) || slices.Contains(brief.VerbatimQuestions, last)
		switch {
		case scripted:
			seen = append(seen, p.Question)
		case len(seen) == 0 || p.Question != seen[len(seen)-1]:
			t.Fatalf("a follow-up %q moved the progress to %+v", last, p)
		}
		answer = "Mostly on paper."
		transcript = append(transcript, kv.Message{Speaker: kv.SpeakerParticipant, Text: answer})
	}
	if !slices.Equal(seen, []int{1, 2, 3, 4}) {
		t.Fatalf("progress over the scripted questions %v, want 1..4", seen)
	}
	for _, bad := range [][]byte{nil, []byte("{"), []byte(`{"phase":"done"}`), []byte(`{"phase":"verbatim","index":1}`)} {
		if p, ok := InterviewProgress(brief, facts, bad); ok {
			t.Fatalf("progress %+v for %q", p, bad)
		}
	}
}

func TestConductSkip(t *testing.T) {
	brief := kv.Brief{
		PreInterviewQuestions: []string{"What is your role?"},
		VerbatimQuestions:     []string{"How do you plan your week?", "What would you change?"},
	}
	eager := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "Could you tell me more about that?", nil }}
	ctx := context.Background()
	open, err := Conduct(ctx, eager, ConductInput{Brief: brief})
	if err != nil {
		t.Fatal(err)
	}
	step := func(script []byte) Conducted {
		t.Helper()
		out, err := Conduct(ctx, eager, ConductInput{Brief: brief, Script: script, Skip: true, Answer: SkippedAnswer})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := step(open.Script) // skips the screener question
	if a.Done || !slices.Equal(a.Messages, []string{ScriptSkipped, "How do you plan your week?"}) {
		t.Fatalf("after skipping the screener: %+v", a)
	}
	b := step(a.Script)
	if b.Done || !slices.Equal(b.Messages, []string{ScriptSkipped, "What would you change?"}) {
		t.Fatalf("after skipping a verbatim question: %+v", b)
	}
	c := step(b.Script)
	if !c.Done || !slices.Equal(c.Messages, []string{ScriptClosing}) {
		t.Fatalf("after skipping the last question: %+v", c)
	}
	if eager.calls != 0 {
		t.Fatalf("a skip asked the engine for %d follow-ups", eager.calls)
	}
	// A skip before the interview has opened just opens it.
	if out, err := Conduct(ctx, eager, ConductInput{Brief: brief, Skip: true}); err != nil || out.Messages[0] != ScriptGreeting {
		t.Fatalf("skip at the start: %+v, %v", out, err)
	}
}

// TestScriptTurns: an engine that asks every follow-up it may (each one new: the
// questions differ in length) takes exactly ScriptTurns turns to reach the closing;
// Unasked counts the scripted questions after each position.
func TestScriptTurns(t *testing.T) {
	eager := &rogueModerator{probe: func(req ProbeRequest) (string, error) {
		return "Follow-up " + strconv.Itoa(req.ProbesSoFar) + " after the answer " + strconv.Itoa(len(req.Question)) + "?", nil
	}}
	briefs := []kv.Brief{
		{},
		{PreInterviewQuestions: []string{"What is your role?", "How many staff work at your bakery?"}},
		{VerbatimQuestions: []string{"How do you plan a rota?"}},
		{PreInterviewQuestions: []string{"What is your role?"}, VerbatimQuestions: []string{"How do you plan a rota?", "What gets in the way?", "What would you change?"}},
	}
	for _, b := range briefs {
		var s Script
		turns, asked := 0, 0
		questions := append(append([]string(nil), b.PreInterviewQuestions...), b.VerbatimQuestions...)
		for done := false; !done; {
			var msgs []string
			var err error
			msgs, s, done, err = s.Next(context.Background(), eager, b, nil, "", nil, "We keep it on paper.")
			if err != nil {
				t.Fatal(err)
			}
			turns++
			if slices.Contains(questions, msgs[len(msgs)-1]) {
				asked++
				if left, total := s.Unasked(b, nil); left != len(questions)-asked || total != len(questions) {
					t.Fatalf("%+v at question %d: Unasked = %d of %d, want %d of %d", b, asked, left, total, len(questions)-asked, len(questions))
				}
			}
		}
		if want := ScriptTurns(b); turns != want {
			t.Fatalf("%+v: the eager script took %d turns, ScriptTurns says %d", b, turns, want)
		}
	}
}
