package moderator

import (
	"context"
	"errors"
	"slices"
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
		want string // "" to move on; "neutral" for any of the neutral probes
	}{
		{"ShortAnswerGetsProbe", ProbeRequest{Question: "How do you plan your week?", Answer: "Mostly on paper."}, "neutral"},
		{"SecondProbeRefused", ProbeRequest{Question: "How do you plan your week?", Answer: "Mostly on paper.", ProbesSoFar: 1}, ""},
		{"LongAnswerNoProbe", ProbeRequest{Question: "How do you plan your week?", Answer: long}, ""},
		{"FortyWordsStillProbed", ProbeRequest{Question: "How do you plan your week?", Answer: strings.Repeat("word ", 40)}, "neutral"},
		{"ScreenerNoProbe", ProbeRequest{Question: "What is your current role?", Answer: "Nurse."}, ""},
		{"EmptyAnswerNoProbe", ProbeRequest{Question: "What gets in the way?", Answer: "  "}, ""},
		{"DeclinedNoProbe", ProbeRequest{Question: "What gets in the way?", Answer: "I'd rather not say."}, ""},
		{"NoteSteers", ProbeRequest{Question: "What gets in the way?", Answer: "Honestly the prices, and the app is slow.", Note: "Dig into pricing if it comes up"}, "You mentioned prices. Could you tell me more about that?"},
		{"NoteUnmatchedIsNeutral", ProbeRequest{Question: "What gets in the way?", Answer: "The app is slow.", Note: "dig into pricing"}, "neutral"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Brief = brief
			got, err := NewBuiltin().Probe(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			switch tt.want {
			case "neutral":
				if !slices.Contains(builtinProbes, got) {
					t.Fatalf("probe = %q, want one of the neutral probes", got)
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
