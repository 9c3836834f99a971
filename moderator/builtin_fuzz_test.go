package moderator

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// Seeds shared by the authoring fuzz targets: guidance the tests above use, plus odd input.
var builtinFuzzSeeds = []string{
	"Interview nurses about night shifts",
	"We want to understand why customers cancel their subscriptions after the free trial, and learn what would bring them back.",
	"Run a study with designers to explore how they hand off work to developers. 30 minute sessions.",
	`How do people decide which bank to use? Ask "What made you choose your current bank?"`,
	"Add a question about pricing and remove question 2. Then make it 15 minutes; rename the study to \"Shift Life\"",
	`add the question "Do you nap; and then what?" and then delete question 1`,
	"reword the last question to \"\"",
	"remove question 99999; call it \u2028\x00",
	"make it 0 minutes",
	"write me a poem",
	"Ask kids for their home address",
	"“unbalanced quote and remove question 1",
	"\xff\xfe interview \xc3 users about \x80 things",
	"why why why why",
	"interview with about on for",
	"understand if they",
	"add a screener about whether",
	"add an objective",
	"rename to",
	"change objective 1",
	"change objective 2 to learn how my app breaks, then make it shorter",
	"Add a screener about how many staff work at your bakery",
	"add a question about how much flour they buy, and make it longer",
}

func FuzzAuthorCreate(f *testing.F) {
	for _, s := range builtinFuzzSeeds {
		f.Add(s, "")
	}
	f.Add("Draft a study from the attached notes", "1. How do you track expenses?\nQ2: What is your password?\n- Which tools?\x00?")
	f.Fuzz(func(t *testing.T, guidance, file string) {
		req := AuthorRequest{Guidance: guidance}
		if file != "" {
			req.Files = []FileText{{Name: "notes.txt", Text: file}}
		}
		b, err := NewBuiltin().Author(context.Background(), req)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Author(%q) error %v does not wrap ErrRefused", guidance, err)
			}
			return
		}
		checkBuiltinBrief(t, b, true)
		if again, err := NewBuiltin().Author(context.Background(), req); err != nil || !reflect.DeepEqual(b, again) {
			t.Fatalf("Author(%q) is not deterministic: %v", guidance, err)
		}
	})
}

func FuzzAuthorRefine(f *testing.F) {
	for _, s := range builtinFuzzSeeds {
		f.Add(s)
	}
	base := mustDraft(f, "We want to understand why customers cancel their subscriptions after the free trial")
	f.Fuzz(func(t *testing.T, guidance string) {
		cur := mustDraft(t, "We want to understand why customers cancel their subscriptions after the free trial")
		b, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: guidance, Current: &cur})
		if !reflect.DeepEqual(cur, base) {
			t.Fatalf("refine %q changed the current brief in place", guidance)
		}
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("refine %q error %v does not wrap ErrRefused", guidance, err)
			}
			return
		}
		checkBuiltinBrief(t, b, false)
	})
}

// FuzzBuiltinProbe: whatever the answer, the built-in follow-up is empty or one the
// script accepts (one line, short, not leading, not a scripted question), never asks for
// an example the answer gives, and is the same for the same request.
func FuzzBuiltinProbe(f *testing.F) {
	for _, a := range []string{"Mostly on paper.", "We keep the rota on paper and it changes every week.", "For example, last Tuesday the flour came late.",
		"I'm a night nurse, so the rota decides everything.", "My partner does it.", "\xff\x00 the <b>app</b> \u2028 is slow", "the the the", "Yes.", "", "“quoted” words"} {
		f.Add(a, "dig into pricing")
	}
	brief := mustDraft(f, "Interview independent bakery owners about how they plan staff rotas")
	f.Fuzz(func(t *testing.T, answer, note string) {
		req := ProbeRequest{Brief: brief, Question: brief.VerbatimQuestions[0], Answer: answer, Note: note}
		p, err := NewBuiltin().Probe(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if p == "" {
			return
		}
		if got, _, ok := acceptProbe(p, brief); !ok || got != p {
			t.Fatalf("answer %q: probe %q is not one the script accepts as it is", answer, p)
		}
		if builtinGivesExample.MatchString(answer) && asksExample(p) {
			t.Fatalf("answer %q gives an example, probe %q asks for one", answer, p)
		}
		if again, _ := NewBuiltin().Probe(context.Background(), req); again != p {
			t.Fatalf("answer %q: probes %q and %q", answer, p, again)
		}
	})
}
