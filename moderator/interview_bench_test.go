package moderator

import (
	"context"
	"fmt"
	"testing"

	"interviewd/kv"
)

// BenchmarkConductTurn is the built-in interviewer's side of the participants bench's
// turns: a verbatim question answered at some length, followed up once, then the next
// question, with the progress the participant is shown after each.
func BenchmarkConductTurn(b *testing.B) {
	title := "Ward rotas"
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions: []string{"What is your role?"},
		VerbatimQuestions: []string{"How do you plan a rota?", "What gets in the way?", "Who else is involved?",
			"What would you change?", "Is there anything else you would like to share?"},
	}
	scripts := [][]byte{[]byte(`{"phase":"verbatim","index":1,"probes":0}`), []byte(`{"phase":"verbatim","index":1,"probes":1}`)}
	m := NewBuiltin()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out, err := Conduct(ctx, m, ConductInput{Brief: brief, Script: scripts[i%2],
			Answer: fmt.Sprintf("Answer %d: we keep the rota on paper and it changes every week.", i)})
		if err != nil || len(out.Messages) == 0 {
			b.Fatal(out, err)
		}
		if _, ok := InterviewProgress(brief, nil, out.Script); !ok {
			b.Fatal(string(out.Script))
		}
	}
}

// TestConductTurnAllocations: a built-in turn that asks no follow-up (the question's
// follow-up is asked already, so the next question comes) allocates little beyond what
// it returns (the position, the messages) and the transcript it hands the engine: the
// answer is not copied, lowercased or split into words, and the position is not
// encoded by reflection. A follow-up turn tags the answer to name a phrase of it (see
// BenchmarkBuiltinProbe); that is once per verbatim question at most.
func TestConductTurnAllocations(t *testing.T) {
	title := "Ward rotas"
	brief := kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: []string{"How do you plan a rota?", "What gets in the way?"}}
	in := ConductInput{Brief: brief, Script: []byte(`{"phase":"verbatim","index":0,"probes":1,"asked":1099511627776}`),
		Answer: "We keep the rota on paper and it changes every week, so nobody quite knows who is on."}
	Conduct(context.Background(), NewBuiltin(), in) // the patterns compile on first use
	allocs := testing.AllocsPerRun(100, func() {
		out, err := Conduct(context.Background(), NewBuiltin(), in)
		if err != nil || len(out.Messages) != 1 || out.Messages[0] != brief.VerbatimQuestions[1] {
			t.Fatal(out, err)
		}
	})
	if allocs > 5 {
		t.Fatalf("%v allocations per turn, want at most 5", allocs)
	}
}

// BenchmarkBuiltinProbe is the built-in follow-up to a short answer: the answer tagged,
// its noun phrases read and the first phrasing not yet asked chosen.
func BenchmarkBuiltinProbe(b *testing.B) {
	req := ProbeRequest{Question: "How do you plan a rota?", Answer: "We keep the rota on paper and it changes every week, so nobody quite knows who is on."}
	m := NewBuiltin()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if p, err := m.Probe(ctx, req); err != nil || p == "" {
			b.Fatal(p, err)
		}
	}
}
