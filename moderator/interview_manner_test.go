package moderator

import (
	"context"
	"slices"
	"strings"
	"testing"

	"interviewd/kv"
)

func TestClosesTopic(t *testing.T) {
	const wrapUp = "Is there anything else about night shifts that you would like to share?"
	const open = "How do you plan your week?"
	tests := []struct {
		question, answer string
		want             bool
	}{
		{wrapUp, "No, that's everything.", true},
		{wrapUp, "No, that’s everything", true},
		{open, "Nothing else really.", true},
		{open, "I think that covers it.", true},
		{open, "That's all, thanks!", true},
		{wrapUp, "No.", true},
		{wrapUp, "nope", true},
		{wrapUp, "Not really", true},
		{wrapUp, "I can't think of anything else.", true},
		{open, "Nothing more to add.", true},
		{wrapUp, "Yes: the rota app crashes every Sunday night.", false},
		{open, "No.", false}, // a plain no to an open question is an answer, and may be explored
		{open, "That's all I do on Mondays, the rest is meetings.", false},
		{open, "I'm good at planning but bad at sticking to it.", false},
		{open, "", false},
		{open, "No, that's everything I remember about the first week, but the second week was a disaster from start to finish and I still think about it.", false},
	}
	for _, tt := range tests {
		if got := closesTopic(tt.question, tt.answer); got != tt.want {
			t.Errorf("closesTopic(%q, %q) = %v, want %v", tt.question, tt.answer, got, tt.want)
		}
	}
}

func TestIsLeading(t *testing.T) {
	leading := []string{
		"Wasn't that frustrating?",
		"Don't you think the app should do that for you?",
		"So it was the price that put you off, right?",
		"That must have been stressful?",
		"How frustrating! What happened next?",
		"Surely paper is slower?",
		"Would you agree that the old system was better?",
		"You must have felt let down?",
		"What did you love most about it?",
		"It was too expensive, wasn't it?",
		"I'm sure that was hard. What did you do?",
	}
	for _, p := range leading {
		if !isLeading(p) {
			t.Errorf("isLeading(%q) = false, want true", p)
		}
	}
	neutral := append(slices.Clone(builtinProbes),
		"You mentioned pricing. Could you tell me more about that?",
		"How did you feel about that?",
		"What happened next?",
		"Could you tell me what went right?",
		"What, if anything, would you change?",
		"Why do you say that?",
	)
	for _, p := range neutral {
		if isLeading(p) {
			t.Errorf("isLeading(%q) = true, want false", p)
		}
	}
}

func TestScriptNoFollowUpAfterClosingAnswer(t *testing.T) {
	brief := kv.Brief{VerbatimQuestions: []string{"How do you plan your week?", "Is there anything else you would like to share?"}}
	eager := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "Could you tell me more about that?", nil }}
	for _, eng := range []Engine{eager, NewBuiltin()} {
		// A closing phrase on an ordinary question moves on to the next question.
		msgs, next, done, err := Script{Phase: PhaseVerbatim, Index: 0}.Next(context.Background(), eng, brief, nil, "", nil, "Nothing else, really.")
		if err != nil || done || !slices.Equal(msgs, []string{brief.VerbatimQuestions[1]}) || next != (Script{Phase: PhaseVerbatim, Index: 1}) {
			t.Fatalf("%T after a closing answer: %q, %+v, %v, %v", eng, msgs, next, done, err)
		}
		// "No, that's everything" to the wrap-up ends the interview.
		msgs, next, done, err = Script{Phase: PhaseVerbatim, Index: 1}.Next(context.Background(), eng, brief, nil, "", nil, "No, that's everything.")
		if err != nil || !done || !slices.Equal(msgs, []string{ScriptClosing}) || next.Phase != PhaseDone {
			t.Fatalf("%T after \"No, that's everything\": %q, %+v, %v, %v", eng, msgs, next, done, err)
		}
		msgs, _, done, _ = Script{Phase: PhaseVerbatim, Index: 1}.Next(context.Background(), eng, brief, nil, "", nil, "no")
		if !done || !slices.Equal(msgs, []string{ScriptClosing}) {
			t.Fatalf("%T after a bare no to the wrap-up: %q", eng, msgs)
		}
	}
	if eager.calls != 0 {
		t.Fatalf("the engine was asked for %d follow-ups after closing answers", eager.calls)
	}
	// An ordinary short answer is still followed up, on what it said.
	msgs, _, _, err := Script{Phase: PhaseVerbatim}.Next(context.Background(), NewBuiltin(), brief, nil, "", nil, "Mostly on paper.")
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0], "paper") {
		t.Fatalf("after an ordinary answer: %q, %v", msgs, err)
	}
}

func TestScriptDropsLeadingProbe(t *testing.T) {
	brief := kv.Brief{VerbatimQuestions: []string{"How do you plan your week?", "What gets in the way?"}}
	leading := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "Wasn't that frustrating?", nil }}
	msgs, next, done, err := Script{Phase: PhaseVerbatim}.Next(context.Background(), leading, brief, nil, "", nil, "On paper, it takes ages.")
	if err != nil || done || !slices.Equal(msgs, []string{"What gets in the way?"}) || next != (Script{Phase: PhaseVerbatim, Index: 1}) {
		t.Fatalf("a leading probe was not dropped: %q, %+v, %v, %v", msgs, next, done, err)
	}
}

func TestBuiltinRefineAddsBeforeWrapUp(t *testing.T) {
	b, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: "I want to understand how ward nurses plan their rotas"})
	if err != nil {
		t.Fatal(err)
	}
	last := b.VerbatimQuestions[len(b.VerbatimQuestions)-1]
	if !isWrapUp(last) {
		t.Fatalf("the drafted brief does not end with a wrap-up question: %q", b.VerbatimQuestions)
	}
	for _, guidance := range []string{"add a question about pricing", `add the question "Who else helps you plan?"`, "ask participants about night shifts"} {
		before := len(b.VerbatimQuestions)
		b = mustRefine(t, b, guidance)
		n := len(b.VerbatimQuestions)
		if n != before+1 || b.VerbatimQuestions[n-1] != last {
			t.Fatalf("after %q the wrap-up is not last: %q", guidance, b.VerbatimQuestions)
		}
	}
	added := b.VerbatimQuestions[len(b.VerbatimQuestions)-2]
	if added != "Can you tell me about night shifts?" {
		t.Fatalf("added question %q", added)
	}
	// The interview asks the added question before the closing "anything else?".
	tr := conductAll(t, NewBuiltin(), b, nil, "")
	iAdded, iLast := -1, -1
	for i, m := range tr {
		switch m.Text {
		case added:
			iAdded = i
		case last:
			iLast = i
		}
	}
	if iAdded < 0 || iLast < 0 || iAdded > iLast {
		t.Fatalf("added question at %d, wrap-up at %d: %+v", iAdded, iLast, tr)
	}
	// A wrap-up added to a brief without one goes last, as asked.
	plain := kv.Brief{VerbatimQuestions: []string{"Q one?", "Q two?"}, PreInterviewQuestions: []string{}, Objectives: []string{"Learn."}}
	plain = mustRefine(t, plain, `add the question "Is there anything else you'd like to tell us?"`)
	if q := plain.VerbatimQuestions; q[len(q)-1] != "Is there anything else you'd like to tell us?" {
		t.Fatalf("questions %q", q)
	}
	// A question added to a brief ending in a wrap-up, then a second wrap-up: still one order.
	if _, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: `add the question "` + last + `"`, Current: &b}); err == nil {
		t.Fatal("a duplicate wrap-up was accepted")
	}
}
