package qdpx

import (
	"bytes"
	"fmt"
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

// TestRunResearcherCodes: each tag is a code under "Researcher codes", each annotated
// span a selection coded with it (and with a theme quoting the same span), the note
// its description.
func TestRunResearcherCodes(t *testing.T) {
	in := strings.Replace(seed, `"objectives":`, `"researcher_codes":[{"id":"tag1","name":"Price talk","interview_count":1,"share":1,"segments":{},`+
		`"quotes":[{"interview_id":"i1","message_index":1,"text":"too dear","note":"said twice"},{"interview_id":"i1","message_index":1,"text":"said"}]}],"objectives":`, 1)
	var out bytes.Buffer
	if err := Run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	p, err := qdpxcheck.Check(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var codeGUID string
	for g, c := range p.Codes {
		if strings.Join(c.Path, "/") == "Researcher codes/Price talk" {
			codeGUID = g
		}
	}
	if codeGUID == "" {
		t.Fatalf("no researcher code in %+v", p.Codes)
	}
	var got []string
	for _, s := range p.Selections {
		coded := false
		for _, c := range s.Codes {
			coded = coded || c == codeGUID
		}
		got = append(got, fmt.Sprintf("%s coded=%v codes=%d note=%q", s.Text, coded, len(s.Codes), s.Description))
	}
	want := []string{`Zoë coded=false codes=1 note=""`, `said coded=true codes=1 note=""`, `too dear coded=true codes=2 note="said twice"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("selections\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without researcher codes the project is byte for byte what it was.
	var plain, again bytes.Buffer
	if err := Run(strings.NewReader(seed), &plain); err != nil {
		t.Fatal(err)
	}
	if err := Run(strings.NewReader(strings.Replace(seed, `"objectives":`, `"researcher_codes":[],"objectives":`, 1)), &again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), again.Bytes()) || bytes.Contains(plain.Bytes(), []byte("Researcher codes")) {
		t.Fatal("an empty list of researcher codes changed the project")
	}
}
