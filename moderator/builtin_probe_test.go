package moderator

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

func TestBuiltinProbe(t *testing.T) {
	brief := kv.Brief{
		PreInterviewQuestions: []string{"What is your current role?"},
		VerbatimQuestions:     []string{"How do you plan your week?", "What gets in the way?"},
	}
	long := strings.Repeat("word ", 41)
	tests := []struct {
		name string
		req  ProbeRequest
		want string // "" to move on; "neutral" for any of the neutral probes; "names X" for a probe naming X
	}{
		{"ShortAnswerGetsProbe", ProbeRequest{Question: "How do you plan your week?", Answer: "Mostly on paper."}, "names paper"},
		{"NothingToNameIsNeutral", ProbeRequest{Question: "How do you plan your week?", Answer: "It depends."}, "neutral"},
		{"SecondProbeRefused", ProbeRequest{Question: "How do you plan your week?", Answer: "Mostly on paper.", ProbesSoFar: 1}, ""},
		{"LongAnswerNoProbe", ProbeRequest{Question: "How do you plan your week?", Answer: long}, ""},
		{"FortyWordsStillProbed", ProbeRequest{Question: "How do you plan your week?", Answer: strings.Repeat("well ", 40)}, "neutral"},
		{"ScreenerNoProbe", ProbeRequest{Question: "What is your current role?", Answer: "Nurse."}, ""},
		{"EmptyAnswerNoProbe", ProbeRequest{Question: "What gets in the way?", Answer: "  "}, ""},
		{"DeclinedNoProbe", ProbeRequest{Question: "What gets in the way?", Answer: "I'd rather not say."}, ""},
		{"NoteSteers", ProbeRequest{Question: "What gets in the way?", Answer: "Honestly the prices, and the app is slow.", Note: "Dig into pricing if it comes up"}, "You mentioned prices. Could you tell me more about that?"},
		{"NoteUnmatchedNamesTheAnswer", ProbeRequest{Question: "What gets in the way?", Answer: "The app is slow.", Note: "dig into pricing"}, "names the app"},
		{"PrefersWhatTheQuestionDidNotSay", ProbeRequest{Question: "How do you plan your rota?", Answer: "The rota lives in a shared spreadsheet."}, "names a shared spreadsheet"},
		{"SpeaksToTheParticipant", ProbeRequest{Question: "Who helps you?", Answer: "My partner does it."}, "names your partner"},
		{"ContextFactNotEchoed", ProbeRequest{Question: "Who helps you?", Answer: "Ravi helped.", Context: map[string]string{"account_manager": "Ravi"}}, "neutral"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Brief = brief
			got, err := NewBuiltin().Probe(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "neutral":
				if !slices.Contains(builtinProbes, got) {
					t.Fatalf("probe = %q, want one of the neutral probes", got)
				}
			case strings.HasPrefix(tt.want, "names "):
				if !namesPhrase(got, strings.TrimPrefix(tt.want, "names ")) {
					t.Fatalf("probe = %q, want one naming %q", got, strings.TrimPrefix(tt.want, "names "))
				}
			default:
				if got != tt.want {
					t.Fatalf("probe = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestBuiltinProbeNeverRevealsNote(t *testing.T) {
	note := "She is a VIP customer; dig into pricing and mention the discount code SAVE20"
	ctxFacts := map[string]string{"plan": "enterprise", "account_manager": "Ravi"}
	for _, ans := range []string{"Pricing is confusing.", "The discount was nice.", "I'm on the enterprise plan.", "Ravi helped.", "Fine."} {
		p, err := NewBuiltin().Probe(context.Background(), ProbeRequest{Question: "What do you think of our pricing?", Answer: ans, Note: note, Context: ctxFacts})
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"VIP", "SAVE20", "dig into", "discount code", "account_manager", "Ravi"} {
			if strings.Contains(p, secret) {
				t.Fatalf("probe %q for answer %q reveals %q", p, ans, secret)
			}
		}
	}
}

func TestBuiltinProbeDeterministicAndVaried(t *testing.T) {
	m := NewBuiltin()
	seen := map[string]bool{}
	for _, ans := range []string{"Yes.", "No.", "Sometimes.", "On paper.", "With an app.", "My partner does it.", "It depends.", "Badly."} {
		req := ProbeRequest{Question: "How do you plan your week?", Answer: ans}
		a, _ := m.Probe(context.Background(), req)
		b, _ := m.Probe(context.Background(), req)
		if a != b {
			t.Fatalf("same request, probes %q and %q", a, b)
		}
		seen[a] = true
	}
	if len(seen) < 2 {
		t.Fatalf("eight answers drew only %d distinct probes", len(seen))
	}
}

func TestBuiltinProbeContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBuiltin().Probe(ctx, ProbeRequest{Answer: "Yes."}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// namesPhrase reports whether probe is one of the phrase probes naming phrase.
func namesPhrase(probe, phrase string) bool {
	for _, f := range builtinPhraseProbes {
		if probe == strings.Replace(f, "%s", phrase, 1) {
			return true
		}
	}
	return false
}

// TestBuiltinProbeNamesWhatWasSaid: a follow-up to an answer with something in it names
// a phrase of that answer, in the participant's own words.
func TestBuiltinProbeNamesWhatWasSaid(t *testing.T) {
	tests := []struct{ question, answer, want string }{
		{"How do you plan your week?", "We keep the rota on paper and it changes every week.", "the rota"},
		{"What gets in the way?", "Honestly the flour delivery, it is always late.", "the flour delivery"},
		{"How do you order stock?", "I phone the wholesaler on Mondays.", "the wholesaler"},
		{"What do you use?", "The online ordering system is confusing.", "the online ordering system"},
		{"What do you use?", "We use a paper diary and a group chat.", "a paper diary"},
		// Who they are is not a topic: "I'm a night nurse" is passed over.
		{"How do you plan your week?", "I'm a night nurse, so the rota decides everything.", "the rota"},
		{"How do you plan your week?", "As a baker, the early shifts decide it.", "the early shifts"},
	}
	for _, tt := range tests {
		got, err := NewBuiltin().Probe(context.Background(), ProbeRequest{Question: tt.question, Answer: tt.answer})
		if err != nil {
			t.Fatal(err)
		}
		if !namesPhrase(got, tt.want) {
			t.Errorf("answer %q: probe %q, want one naming %q", tt.answer, got, tt.want)
		}
	}
}

// TestBuiltinProbeNoExampleAfterExample: an answer that already tells of an instance is
// never asked for an example, whatever the phrasing the hash would pick.
func TestBuiltinProbeNoExampleAfterExample(t *testing.T) {
	answers := []string{
		"For example, last Tuesday the flour delivery came late.",
		"Things like when the oven broke during the Christmas rush.",
		"It was chaos last week when two bakers were off sick.",
		"The other day a supplier sent the wrong flour.",
		"A couple of weeks ago the card reader stopped working.",
		"For instance, the rota app crashed on Friday.",
		"Recently I had to close early because of staff shortages.",
	}
	questions := []string{"How do you plan your week?", "What gets in the way?", "Tell me about ordering.", "What is hard?", "Why?", "How?", "What else?"}
	asked := 0
	for _, a := range answers {
		for _, q := range questions {
			got, err := NewBuiltin().Probe(context.Background(), ProbeRequest{Question: q, Answer: a})
			if err != nil {
				t.Fatal(err)
			}
			if got == "" {
				continue
			}
			asked++
			if strings.Contains(strings.ToLower(got), "example") {
				t.Errorf("answer %q to %q: probe %q asks for an example it already gave", a, q, got)
			}
		}
	}
	if asked == 0 {
		t.Fatal("no answer was followed up at all")
	}
	// The same answers without their example do get asked for one, at least sometimes.
	bare := 0
	for _, q := range questions {
		for _, a := range []string{"The flour delivery.", "The oven.", "Staff shortages.", "The card reader.", "The rota app."} {
			if got, _ := NewBuiltin().Probe(context.Background(), ProbeRequest{Question: q, Answer: a}); strings.Contains(got, "example") {
				bare++
			}
		}
	}
	if bare == 0 {
		t.Fatal("no answer without an example was ever asked for one: the check above proves nothing")
	}
}

// TestBuiltinProbeNeverRepeats: over a whole interview (the live path, which keeps only
// the script's position between turns and gives the built-in engine no transcript), no
// follow-up is asked twice, even when the participant says the same thing each time.
func TestBuiltinProbeNeverRepeats(t *testing.T) {
	var brief kv.Brief
	for i := range 30 {
		brief.VerbatimQuestions = append(brief.VerbatimQuestions, "Question "+strconv.Itoa(i+1)+": how did that go?")
	}
	for _, answer := range []string{"Mostly on paper.", "It depends.", "My partner does it.", "The rota, as always."} {
		out, err := Conduct(context.Background(), NewBuiltin(), ConductInput{Brief: brief})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		followUps := 0
		for turn := 0; !out.Done && turn < 200; turn++ {
			if out, err = Conduct(context.Background(), NewBuiltin(), ConductInput{Brief: brief, Script: out.Script, Answer: answer}); err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Messages {
				if slices.Contains(brief.VerbatimQuestions, m) || m == ScriptClosing {
					continue
				}
				followUps++
				if seen[m] {
					t.Fatalf("answer %q: follow-up %q asked twice", answer, m)
				}
				seen[m] = true
			}
		}
		if !out.Done || followUps == 0 {
			t.Fatalf("answer %q: done %v after %d follow-ups", answer, out.Done, followUps)
		}
	}
}
