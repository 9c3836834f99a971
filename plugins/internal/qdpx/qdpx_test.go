package qdpx

import (
	"bytes"
	"strings"
	"testing"

	"interviewd/plugins/qdpxcheck"
)

const seed = `{"config":{}}
{"study":{"id":"s1","title":"Rota"},"analysis":{"version":2,"engine":"builtin","generated_at":"2026-11-21T09:30:00Z","summary":"S",` +
	`"themes":[{"id":"t1","label":"Cost","sentiment":"negative","quotes":[{"interview_id":"i1","message_index":1,"text":"too dear"}]}],` +
	`"objectives":[{"objective":"Price","findings":[{"statement":"Dear","support":[{"interview_id":"i1","message_index":1,"text":"Zoë"}],"contrary":[]}]}]}}
{"interview":{"id":"i1","context":{"plan":"pro"},"messages":[{"speaker":"interviewer","text":"Price?"},{"speaker":"participant","text":"Zoë said too dear"}]}}
`

func TestRunSelectsQuotes(t *testing.T) {
	var out bytes.Buffer
	if err := Run(strings.NewReader(seed), &out); err != nil {
		t.Fatal(err)
	}
	p, err := qdpxcheck.Check(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Selections {
		got = append(got, s.Text)
	}
	// "Zoë" is 3 characters but 4 bytes: the positions count characters.
	if strings.Join(got, "|") != "Zoë|too dear" || p.Selections[0].Start != len("Interviewer: Price?\nParticipant: ") {
		t.Fatalf("selections %+v", p.Selections)
	}
}

// FuzzRun: whatever records arrive, the formatter fails cleanly or writes a project
// that checks, each selection inside its text.
func FuzzRun(f *testing.F) {
	f.Add(seed)
	f.Add(strings.Replace(seed, `"text":"Zoë"`, `"text":"<&>\u0001"`, 1))
	f.Add(`{"config":{}}` + "\n" + `{"analysis":{}}` + "\n")
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		if err := Run(strings.NewReader(in), &out); err != nil {
			return
		}
		if _, err := qdpxcheck.Check(out.Bytes()); err != nil {
			t.Fatalf("input %q gave a project that does not check: %v", in, err)
		}
	})
}
