package mdreport

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"
)

// renderQuote renders line as the report writes a quote and returns the text of the
// block quote's paragraph and whether the rendering held any element but those.
func renderQuote(tb testing.TB, line string) (string, bool) {
	tb.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe())).Convert([]byte("> "+escapeLine(line)+"\n"), &out); err != nil {
		tb.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		tb.Fatal(err)
	}
	var text strings.Builder
	extra := false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			text.WriteString(n.Data)
		case n.Type == html.ElementNode && !strings.Contains(" html head body blockquote p ", " "+n.Data+" "):
			extra = true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return strings.TrimSpace(text.String()), extra
}

func TestEscapeLineRendersAsWritten(t *testing.T) {
	for _, line := range []string{
		`<script>alert("x")</script>`,
		"# not a heading",
		"- not a list",
		"+ nor this",
		"12. nor this",
		"3) nor this",
		"*not emphasis* _nor this_ `nor code`",
		"[not a link](http://example.com) ![nor an image](x.png)",
		"&lt; stays as typed &amp;",
		"a | table | row",
		"~~not struck~~",
		"=== not a heading underline",
		`back\slash \* kept`,
		"<http://example.com> is not an autolink",
		"Zoë paid 5 € 😀",
	} {
		got, extra := renderQuote(t, line)
		if got != line || extra {
			t.Errorf("%q renders as %q (other elements: %v)", line, got, extra)
		}
	}
}

// FuzzEscapeLine: whatever one line a participant writes, the report's block quote
// shows exactly that line and makes nothing else of it.
func FuzzEscapeLine(f *testing.F) {
	for _, s := range []string{"<b>bold</b>", "# h", "1. x", "*a*", "[a](b)", "&amp;", "a\\b", "-x", "`c`", "<!-- c -->", "<?php ?>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n\x00") || strings.TrimSpace(line) != line || line == "" || !isPrintable(line) {
			t.Skip() // one trimmed, printable line: the report splits lines itself
		}
		if got, extra := renderQuote(t, line); got != line || extra {
			t.Fatalf("%q renders as %q (other elements: %v)", line, got, extra)
		}
	})
}

func isPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// TestResearcherCodes: the codes' section names each code, its share, its passages
// and notes, escaped; a report without codes has no such section.
func TestResearcherCodes(t *testing.T) {
	in := `{"config":{}}
{"study":{"id":"s1","title":"Rota"},"analysis":{"version":1,"engine":"builtin","interviews_included":2,` +
		`"researcher_codes":[{"id":"t1","name":"Price *talk*","interview_count":1,"share":0.5,"segments":{},"quotes":[{"interview_id":"i1","message_index":1,"text":"too dear","note":"said [twice]"}]}]}}
`
	var out bytes.Buffer
	if err := Run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Researcher codes", `| Price \*talk\* | 1 | 50%`, "> too dear", `*Note:* said \[twice\]`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	if err := Run(strings.NewReader(strings.Replace(in, `"researcher_codes"`, `"no_codes"`, 1)), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Researcher codes") {
		t.Fatal("a report without codes has their section")
	}
}
