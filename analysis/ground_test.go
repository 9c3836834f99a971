package analysis

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func groundInput() Input {
	iv := func(id, plan string, answers ...string) Interview {
		msgs := []Message{{Speaker: SpeakerInterviewer, Text: "How was it?"}}
		for _, a := range answers {
			msgs = append(msgs, Message{Speaker: SpeakerParticipant, Text: a})
		}
		return Interview{ID: id, Context: map[string]string{"plan": plan}, Messages: msgs}
	}
	return Input{
		StudyID:    "s1",
		Objectives: []string{"Pricing", "Onboarding"},
		Interviews: []Interview{
			iv("a", "free", "The price is too high. Setup was easy."),
			iv("b", "pro", "The price is fair.", "Setup took an hour."),
			iv("c", "free", "Too expensive for me."),
		},
	}
}

func q(id string, mi int, text string) Quote {
	return Quote{InterviewID: id, MessageIndex: mi, Text: text}
}

func TestGroundDropsEveryKindOfBadQuote(t *testing.T) {
	in := groundInput()
	bad := []Quote{
		q("a", 1, "The price is too low."), // not in the message
		q("a", 0, "How was it?"),           // the interviewer's line
		q("a", 1, ""),                      // empty
		q("zz", 1, "The price"),            // no such interview
		q("b", 7, "The price"),             // no such message
		q("b", -1, "The price"),            // negative index
		q("a", 1, "the price is too high"), // case differs: not exact
	}
	a := &Analysis{
		QuotesDropped: 2, // an engine may have counted some already
		Objectives: []Objective{{
			Objective: "Pricing",
			Findings: []Finding{
				{Statement: "Price divides", Support: []Quote{q("a", 1, "The price is too high."), bad[0]}, Contrary: []Quote{q("b", 1, "The price is fair."), bad[1]}},
				{Statement: "Invented", Support: []Quote{bad[2], bad[3]}, Contrary: []Quote{bad[4]}},
			},
			Coverage: Coverage{Interviews: 3, Of: 3},
		}},
		Themes: []Theme{
			{ID: "t1", Label: "price", Quotes: []Quote{q("a", 1, "price is too high"), q("c", 1, "Too expensive"), bad[5]}, InterviewCount: 9, Share: 3},
			{ID: "t2", Label: "setup", Quotes: []Quote{q("a", 1, "Setup was easy."), bad[6]}, InterviewCount: 2},
		},
		Questions: []QuestionSet{{Question: "How was it?", Groups: []AnswerGroup{
			{Label: "price", Count: 5, Quotes: []Quote{q("a", 1, "The price is too high."), bad[0]}},
			{Label: "gone", Count: 1, Quotes: []Quote{bad[1]}},
		}}},
		Suggestions: []Suggestion{
			{Text: "cheaper", InterviewCount: 4, Quotes: []Quote{q("c", 1, "Too expensive for me."), bad[0]}},
			{Text: "gone", InterviewCount: 1, Quotes: []Quote{bad[3]}},
		},
	}
	dropped := Ground(in, a)
	if want := 2 + 3 + 1 + 1 + 1 + 1 + 1 + 1; dropped != want {
		t.Fatalf("dropped %d quotes, want %d", dropped, want)
	}
	if a.QuotesDropped != 2+dropped {
		t.Errorf("QuotesDropped = %d, want %d", a.QuotesDropped, 2+dropped)
	}

	o := a.Objectives[0]
	if len(o.Findings) != 1 || o.Findings[0].Statement != "Price divides" {
		t.Fatalf("findings = %+v, want only the grounded one", o.Findings)
	}
	if len(o.Findings[0].Support) != 1 || len(o.Findings[0].Contrary) != 1 {
		t.Errorf("finding = %+v, want one support and one contrary quote", o.Findings[0])
	}
	// "zz" was never an interview and "a"/"b" keep evidence, so nothing counted is lost.
	if o.Coverage.Interviews != 3 || o.Coverage.Of != 3 || o.Coverage.Share != 1 || o.Gap {
		t.Errorf("coverage = %+v gap %v, want 3 of 3 and no gap", o.Coverage, o.Gap)
	}

	if len(a.Themes) != 1 || a.Themes[0].ID != "t1" {
		t.Fatalf("themes = %+v, want t1 only (t2 is left with one interview)", a.Themes)
	}
	th := a.Themes[0]
	if th.InterviewCount != 2 || th.Share != 0.6667 || th.Segments["plan"]["free"] != 2 || len(th.Segments["plan"]) != 1 {
		t.Errorf("theme counts = %d %v %v, want 2, 0.6667, plan free 2", th.InterviewCount, th.Share, th.Segments)
	}

	gs := a.Questions[0].Groups
	if len(gs) != 1 || gs[0].Label != "price" || gs[0].Count != 5 {
		t.Errorf("groups = %+v, want price with its count kept (a still has evidence)", gs)
	}
	if len(a.Suggestions) != 1 || a.Suggestions[0].InterviewCount != 1 {
		t.Errorf("suggestions = %+v, want one with interview_count 1", a.Suggestions)
	}
}

func TestGroundSubtractsInterviewsWhoseOnlyEvidenceWasInvented(t *testing.T) {
	in := groundInput()
	a := &Analysis{Objectives: []Objective{{
		Objective: "Onboarding",
		Findings: []Finding{{Statement: "Setup", Support: []Quote{
			q("a", 1, "Setup was easy."), q("b", 2, "Setup took a week."), q("c", 1, "Setup was hard."),
		}}},
		Coverage: Coverage{Interviews: 3, Of: 3, Share: 1},
	}}}
	if n := Ground(in, a); n != 2 {
		t.Fatalf("dropped %d, want 2", n)
	}
	o := a.Objectives[0]
	if o.Coverage.Interviews != 1 || !o.Gap {
		t.Errorf("coverage = %+v gap %v, want 1 interview and a gap", o.Coverage, o.Gap)
	}
	if o.Findings[0].Contrary == nil {
		t.Error("contrary is nil, want [] in JSON")
	}
}

func TestGroundLeavesNoNullLists(t *testing.T) {
	a := &Analysis{Objectives: []Objective{{Objective: "x"}}, Questions: []QuestionSet{{Question: "q"}}}
	Ground(Input{}, a)
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") {
		t.Errorf("JSON has null: %s", b)
	}
	if !a.Objectives[0].Gap {
		t.Error("an objective with no interviews is not a gap")
	}
}

func TestBuiltinEmptyInput(t *testing.T) {
	in := Input{StudyID: "s", Objectives: []string{"Learn pricing", "Learn setup"}, Questions: []Question{{Text: "Why?", Kind: QuestionVerbatim}}}
	a, err := NewBuiltin().Analyse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if n := Ground(in, a); n != 0 {
		t.Errorf("Ground dropped %d quotes of an empty analysis", n)
	}
	b, _ := json.Marshal(a)
	if strings.Contains(string(b), "null") {
		t.Errorf("JSON has null: %s", b)
	}
	for _, o := range a.Objectives {
		if !o.Gap || len(o.Findings) != 0 {
			t.Errorf("objective %+v, want a gap with no findings", o)
		}
	}
	if len(a.Questions) != 1 || a.Questions[0].Answered != 0 {
		t.Errorf("questions = %+v", a.Questions)
	}
}
