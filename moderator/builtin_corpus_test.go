package moderator

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"interviewd/kv"
)

// The built-in engine's quality suite: every guidance text of a corpus is drafted into a
// brief, and every brief is read by the checks of builtin_quality_test.go. The briefs are
// written to testdata/briefs.md for a person to review; the test fails when that file no
// longer matches what the engine drafts (go test ./moderator -run Corpus -update
// rewrites it). -corpus checks another corpus file of the same format instead (and
// -briefs writes its briefs to a file).

var (
	updateBriefs = flag.Bool("update", false, "rewrite testdata/briefs.md from testdata/guidance.txt")
	otherCorpus  = flag.String("corpus", "", "check the briefs drafted from this guidance corpus (the format of testdata/guidance.txt) instead")
	otherBriefs  = flag.String("briefs", "", "with -corpus, write that corpus's briefs to this file for review")
)

const (
	corpusFile = "testdata/guidance.txt"
	briefsFile = "testdata/briefs.md"
)

// corpusCase is one guidance text of a corpus.
type corpusCase struct {
	name     string
	subject  []string
	guidance string
	files    []FileText
}

// readCorpus reads a corpus: entries start with "=== name"; an optional "subject: a | b"
// line follows; then the guidance, then files, each after "--- file: NAME".
func readCorpus(tb testing.TB, path string) []corpusCase {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []corpusCase
	var cur *corpusCase
	var text []string
	flush := func() {
		if cur == nil {
			return
		}
		body := strings.TrimSpace(strings.Join(text, "\n"))
		if n := len(cur.files); n > 0 {
			cur.files[n-1].Text = body
		} else {
			cur.guidance = body
		}
		text = nil
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			if cur != nil {
				out = append(out, *cur)
			}
			cur = &corpusCase{name: strings.TrimSpace(line[4:])}
		case cur == nil:
			// comments and blank lines before the first entry
		case strings.HasPrefix(line, "--- file: "):
			flush()
			cur.files = append(cur.files, FileText{Name: strings.TrimSpace(line[10:])})
		case strings.HasPrefix(line, "subject: ") && cur.guidance == "" && len(text) == 0 && cur.files == nil:
			for _, s := range strings.Split(line[9:], "|") {
				if s = strings.TrimSpace(s); s != "" {
					cur.subject = append(cur.subject, s)
				}
			}
		default:
			text = append(text, line)
		}
	}
	flush()
	if cur != nil {
		out = append(out, *cur)
	}
	for _, c := range out {
		if c.guidance == "" {
			tb.Fatalf("%s: entry %q has no guidance", path, c.name)
		}
	}
	return out
}

func TestBuiltinCorpus(t *testing.T) {
	path := corpusFile
	if *otherCorpus != "" {
		path = *otherCorpus
	}
	cases := readCorpus(t, path)
	if *otherCorpus == "" && len(cases) < 60 {
		t.Fatalf("the corpus has %d guidance texts; it should have at least 60", len(cases))
	}
	m := NewBuiltin()
	var doc strings.Builder
	var sum corpusSummary
	for _, c := range cases {
		b, err := m.Author(context.Background(), AuthorRequest{Guidance: c.guidance, Files: c.files})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		checkBuiltinBrief(t, b, true)
		r := checkBriefQuality(c.guidance, c.files, c.subject, b)
		sum.add(r)
		for _, p := range r.title {
			t.Errorf("%s: title %q: %s", c.name, *b.Title, p)
		}
		for _, p := range r.subject {
			t.Errorf("%s: %s", c.name, p)
		}
		for _, s := range sortedKeys(r.sentences) {
			t.Errorf("%s: %q: %s", c.name, s, strings.Join(r.sentences[s], "; "))
		}
		for _, s := range sortedKeys(r.questions) {
			t.Errorf("%s: %q: %s", c.name, s, strings.Join(r.questions[s], "; "))
		}
		writeCase(&doc, c, b, r)
	}
	t.Logf("%s", sum.line(len(cases)))
	if *otherCorpus != "" {
		if *otherBriefs != "" {
			out := "# Briefs the built-in engine drafts from " + path + "\n\n" + sum.line(len(cases)) + "\n\n" + doc.String()
			if err := os.WriteFile(*otherBriefs, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	out := "# Briefs the built-in engine drafts from testdata/guidance.txt\n\n" +
		"Written by `go test ./moderator -run Corpus -update`; TestBuiltinCorpus fails when this file is stale.\n\n" +
		sum.line(len(cases)) + "\n\n" + doc.String()
	if *updateBriefs {
		if err := os.WriteFile(filepath.FromSlash(briefsFile), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(filepath.FromSlash(briefsFile))
	if err != nil || string(have) != out {
		t.Errorf("%s is stale: run go test ./moderator -run Corpus -update and review the diff", briefsFile)
	}
}

// corpusSummary counts what the checks found over a corpus.
type corpusSummary struct {
	checked, broken, cutTitles, badQuestions, noSubject int
}

func (s *corpusSummary) add(r briefReport) {
	s.checked += r.checked
	s.broken += len(r.sentences)
	s.badQuestions += len(r.questions)
	s.noSubject += len(r.subject)
	if len(r.title) > 0 {
		s.cutTitles++
	}
}

func (s corpusSummary) line(n int) string {
	return fmt.Sprintf("%d guidance texts; %d objectives and questions checked: %d broken sentences, %d cut titles, %d closed, leading or repeated questions, %d missing subjects.",
		n, s.checked, s.broken, s.cutTitles, s.badQuestions, s.noSubject)
}

func writeCase(w *strings.Builder, c corpusCase, b kv.Brief, r briefReport) {
	fmt.Fprintf(w, "## %s\n\n", c.name)
	for line := range strings.Lines(c.guidance) {
		fmt.Fprintf(w, "> %s", line)
	}
	w.WriteString("\n")
	for _, f := range c.files {
		fmt.Fprintf(w, ">\n> (file %s, %d lines)\n", f.Name, strings.Count(f.Text, "\n")+1)
	}
	fmt.Fprintf(w, "\n**%s** (%d minutes)\n\n", *b.Title, *b.EstimatedDurationMinutes)
	mark := func(s string) string {
		var p []string
		p = append(p, r.sentences[s]...)
		p = append(p, r.questions[s]...)
		if len(p) > 0 {
			return " ⚠ " + strings.Join(p, "; ")
		}
		return ""
	}
	for _, p := range r.title {
		fmt.Fprintf(w, "⚠ title: %s\n\n", p)
	}
	for _, p := range r.subject {
		fmt.Fprintf(w, "⚠ %s\n\n", p)
	}
	w.WriteString("Objectives:\n")
	for _, o := range b.Objectives {
		fmt.Fprintf(w, "- %s%s\n", o, mark(o))
	}
	w.WriteString("\nScreener:\n")
	for _, q := range b.PreInterviewQuestions {
		fmt.Fprintf(w, "- %s%s\n", q, mark(q))
	}
	w.WriteString("\nQuestions:\n")
	for i, q := range b.VerbatimQuestions {
		own := ""
		if r.researcher[q] {
			own = " (the researcher's)"
		}
		fmt.Fprintf(w, "%d. %s%s%s\n", i+1, q, own, mark(q))
	}
	w.WriteString("\n")
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
