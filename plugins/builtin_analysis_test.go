package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"

	"interviewd/plugins/internal/analysisdoc"
	"interviewd/plugins/qdpxcheck"
)

// The analysis formatters, run through the host as exports run them, over one
// analysis that has every part filled and participant text made to break each format:
// markup, HTML, line breaks, non-ASCII characters.

const (
	ivA      = "0193f000-0000-7000-8000-00000000000a"
	ivB      = "0193f000-0000-7000-8000-00000000000b"
	scriptQ  = `<script>alert("x")</script> & it # broke`
	multiQ   = "- first line\n12. second line"
	unicodeQ = "Zoë paid 5 € — too much 😀"
)

// sampleInterviews are two redacted transcripts whose participant messages hold the
// sample's quotes.
func sampleInterviews() []analysisdoc.Interview {
	return []analysisdoc.Interview{
		{ID: ivA, StartedAt: "2026-11-20T10:00:00.000Z", CompletedAt: "2026-11-20T10:12:00.000Z", Context: map[string]string{"plan": "pro", "region": "eu"},
			Messages: []analysisdoc.Message{
				{Speaker: "interviewer", Text: "How do you plan shifts?"},
				{Speaker: "participant", Text: "Honestly " + scriptQ + " when the rota changed."},
				{Speaker: "interviewer", Text: "What would help?"},
				{Speaker: "participant", Text: "Reach me at [EMAIL]. " + multiQ},
			}},
		{ID: ivB, StartedAt: "2026-11-20T11:00:00.000Z", Context: map[string]string{"plan": "free"},
			Messages: []analysisdoc.Message{
				{Speaker: "interviewer", Text: "How do you plan shifts?"},
				{Speaker: "participant", Text: "We use paper. " + unicodeQ + "!"},
			}},
	}
}

func sampleAnalysis() analysisdoc.Analysis {
	q := func(iv string, mi int, text string) analysisdoc.Quote {
		return analysisdoc.Quote{InterviewID: iv, MessageIndex: mi, Text: text}
	}
	return analysisdoc.Analysis{
		StudyID: "0193f000-0000-7000-8000-0000000000ff", Version: 3, Engine: "builtin", InterviewsIncluded: 2, QuotesDropped: 1,
		GeneratedAt: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC),
		Summary:     "Teams plan shifts *by hand*; [pricing] worries them.",
		Objectives: []analysisdoc.Objective{
			{Objective: "Understand how teams schedule shifts", Coverage: analysisdoc.Coverage{Interviews: 2, Of: 2, Share: 1},
				Findings: []analysisdoc.Finding{{Statement: "Rota changes break plans",
					Support:  []analysisdoc.Quote{q(ivA, 1, scriptQ)},
					Contrary: []analysisdoc.Quote{q(ivB, 1, "We use paper.")}}}},
			{Objective: "Learn what teams would pay for", Gap: true, Coverage: analysisdoc.Coverage{Interviews: 1, Of: 2, Share: 0.5}},
		},
		Themes: []analysisdoc.Theme{{ID: "t1", Label: "Cost | price", Description: "Price comes up unprompted.", Sentiment: "negative",
			InterviewCount: 2, Share: 1, Quotes: []analysisdoc.Quote{q(ivB, 1, unicodeQ), q(ivA, 1, scriptQ)},
			Segments: map[string]map[string]int{"plan": {"pro": 1, "free": 1}}}},
		Questions: []analysisdoc.QuestionSet{{Question: "How do you plan shifts?", Kind: "verbatim", Answered: 2,
			Groups: []analysisdoc.AnswerGroup{{Label: "By hand", Count: 2, Quotes: []analysisdoc.Quote{q(ivB, 1, "We use paper.")}}}}},
		Suggestions: []analysisdoc.Suggestion{{Text: "A shared calendar", InterviewCount: 1, Quotes: []analysisdoc.Quote{q(ivA, 3, multiQ)}}},
	}
}

// analysisRecords encodes the head record and, when withInterviews, the transcripts.
func analysisRecords(tb testing.TB, a analysisdoc.Analysis, ivs []analysisdoc.Interview) []json.RawMessage {
	tb.Helper()
	head, err := json.Marshal(map[string]any{"study": analysisdoc.Study{ID: a.StudyID, Title: "Shift <planning>"}, "analysis": a})
	if err != nil {
		tb.Fatal(err)
	}
	recs := []json.RawMessage{head}
	for _, iv := range ivs {
		b, err := json.Marshal(map[string]any{"interview": iv})
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, b)
	}
	return recs
}

func runFormatter(tb testing.TB, p *Plugin, recs []json.RawMessage) []byte {
	tb.Helper()
	var out bytes.Buffer
	if err := p.Format(context.Background(), map[string]any{}, recs, &out); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

func TestBuiltinAnalysisDescriptors(t *testing.T) {
	h := mustHost(t, Config{})
	for name, media := range map[string]string{
		BuiltinAnalysisMarkdown: "text/markdown; charset=utf-8",
		BuiltinAnalysisHTML:     "text/html; charset=utf-8",
		BuiltinQDPX:             "application/zip",
	} {
		p := mustBuiltin(t, h, name)
		if d := p.Descriptor(); d != (Descriptor{Kind: KindFormatter, Name: name, MediaType: media, ABIVersion: 1}) {
			t.Errorf("%s: Descriptor = %+v", name, d)
		}
	}
}

func TestBuiltinAnalysisMarkdown(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustBuiltin(t, h, BuiltinAnalysisMarkdown)
	md := string(runFormatter(t, p, analysisRecords(t, sampleAnalysis(), nil)))
	for _, want := range []string{
		"# Findings: Shift \\<planning\\>\n",
		"Teams plan shifts \\*by hand\\*; \\[pricing\\] worries them.",
		"### 1\\. Understand how teams schedule shifts",
		"**Coverage:** 1 of 2 interviews (50%).",
		"> **Gap:**",
		"#### Rota changes break plans",
		"> \\<script\\>alert(\"x\")\\</script\\> \\& it \\# broke\n>\n> — interview " + ivA + ", message 1\n",
		"**Contrary quotes**\n\n> We use paper.\n>\n> — interview " + ivB + ", message 1\n",
		"> \\- first line\n> 12\\. second line\n>\n> — interview " + ivA + ", message 3\n",
		"| Cost \\| price | negative | 2 | 100% |",
		"| plan | free | 1 |\n| plan | pro | 1 |",
		"> " + unicodeQ + "\n",
		"*Verbatim question* · answered 2, skipped 0",
		"#### By hand (2 answers)",
		"### A shared calendar",
		"Version 3 · engine builtin · generated 2026-11-21 09:30 UTC · interviews included: 2 · quotes dropped: 1",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	// A CommonMark renderer that lets raw HTML through (as many do) shows the quotes
	// as text, in block quotes, and makes no element of them.
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe())).Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	rendered := out.String()
	if strings.Contains(strings.ToLower(rendered), "<script") {
		t.Fatalf("the rendered report holds a script element:\n%s", rendered)
	}
	doc, err := html.Parse(strings.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	quotes := textsOf(doc, "blockquote")
	for _, want := range []string{scriptQ, "We use paper.", unicodeQ, "- first line\n12. second line"} {
		if !anyContains(quotes, want) {
			t.Errorf("no rendered block quote reads %q; block quotes: %q", want, quotes)
		}
	}
	if headings := textsOf(doc, "h1"); len(headings) != 1 || headings[0] != "Findings: Shift <planning>" {
		t.Errorf("h1 = %q", headings)
	}
	if lists := textsOf(doc, "ol"); len(lists) != 0 {
		t.Errorf("a quote became a list: %q", lists)
	}
}

func TestBuiltinAnalysisHTML(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustBuiltin(t, h, BuiltinAnalysisHTML)
	page := string(runFormatter(t, p, analysisRecords(t, sampleAnalysis(), nil)))
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Fatalf("the page holds a script element:\n%s", page)
	}
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; it # broke",
		"<title>Findings: Shift &lt;planning&gt;</title>",
		"@media print",
		`content="default-src 'none'; style-src 'unsafe-inline'"`,
		"Interview " + ivA + ", message 1",
		"quotes dropped: 1",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"script", "link", "img", "iframe"} {
		if n := textsOf(doc, tag); len(n) != 0 {
			t.Errorf("the page has %d <%s> elements: it must stand alone", len(n), tag)
		}
	}
	quotes := textsOf(doc, "blockquote")
	for _, want := range []string{scriptQ, unicodeQ, multiQ, "We use paper."} {
		if !anyContains(quotes, want) {
			t.Errorf("no block quote reads %q: %q", want, quotes)
		}
	}
	if n := len(textsOf(doc, "h3")); n != 5 { // 2 objectives, 1 theme, 1 question, 1 suggestion
		t.Errorf("%d h3 headings, want 5", n)
	}
	if gap := textsOf(doc, "p"); !anyContains(gap, "Gap: the evidence is thin") {
		t.Error("the gap is not called out")
	}
}

func TestBuiltinQDPX(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustBuiltin(t, h, BuiltinQDPX)
	a := sampleAnalysis()
	ivs := sampleInterviews()
	file := runFormatter(t, p, analysisRecords(t, a, ivs))
	proj, err := qdpxcheck.Check(file)
	if err != nil {
		t.Fatalf("the project does not check:\n%v", err)
	}
	if proj.Origin != "interviewd" || !strings.Contains(proj.Name, "Shift <planning>") || !strings.Contains(proj.Description, a.Summary) {
		t.Errorf("project %q origin %q description %q", proj.Name, proj.Origin, proj.Description)
	}
	if len(proj.Sources) != 2 || proj.Sources[0].Values["plan"] != "pro" || proj.Sources[0].Values["region"] != "eu" || proj.Sources[1].Values["plan"] != "free" {
		t.Fatalf("sources %+v", proj.Sources)
	}
	if want := "Interviewer: How do you plan shifts?\nParticipant: Honestly " + scriptQ; !strings.HasPrefix(proj.Sources[0].Text, want) {
		t.Errorf("source text %q, want it to start %q", proj.Sources[0].Text, want)
	}
	// Every quote of the analysis is one selection that selects exactly its text, in
	// its interview's source, coded with the codes it is evidence for.
	type span struct{ iv, text string }
	want := map[span][]string{
		{ivA, scriptQ}:         {"Cost | price", "Supporting"},
		{ivB, "We use paper."}: {"Contrary", "By hand"},
		{ivB, unicodeQ}:        {"Cost | price"},
		{ivA, multiQ}:          {"A shared calendar"},
	}
	if len(proj.Selections) != len(want) {
		t.Fatalf("%d selections, want %d: %+v", len(proj.Selections), len(want), proj.Selections)
	}
	for _, sel := range proj.Selections {
		iv := strings.TrimPrefix(sel.Source, "Interview ")
		codes, ok := want[span{iv, sel.Text}]
		if !ok {
			t.Errorf("selection [%d,%d) of %s selects %q, no quote's text", sel.Start, sel.End, iv, sel.Text)
			continue
		}
		var got []string
		for _, g := range sel.Codes {
			got = append(got, proj.Codes[g].Name)
		}
		if strings.Join(got, ",") != strings.Join(codes, ",") {
			t.Errorf("%q is coded %q, want %q", sel.Text, got, codes)
		}
	}
	if c := codeNamed(proj, "Cost | price"); c.Path[0] != "Themes" || !c.Codable {
		t.Errorf("theme code %+v", c)
	}
	if c := codeNamed(proj, "Rota changes break plans"); strings.Join(c.Path, "/") != "Objectives/Understand how teams schedule shifts/Rota changes break plans" || c.Codable {
		t.Errorf("finding code %+v", c)
	}

	t.Run("OK_Deterministic", func(t *testing.T) {
		if again := runFormatter(t, p, analysisRecords(t, a, ivs)); !bytes.Equal(again, file) {
			t.Fatal("the same analysis gave a different file")
		}
	})
	t.Run("OK_UnplacedQuoteCounted", func(t *testing.T) {
		// The organisation's redaction changed since the analysis: one message no
		// longer holds its quote, and an erased interview is not sent at all.
		changed := sampleInterviews()[:1]
		changed[0].Messages[3].Text = "Reach me at [EMAIL]. [PHONE]"
		proj, err := qdpxcheck.Check(runFormatter(t, p, analysisRecords(t, a, changed)))
		if err != nil {
			t.Fatal(err)
		}
		if len(proj.Selections) != 1 || proj.Selections[0].Text != scriptQ || !strings.Contains(proj.Description, "3 quoted passages could not be placed") {
			t.Fatalf("selections %+v, description %q", proj.Selections, proj.Description)
		}
	})
	t.Run("OK_EmptyAnalysis", func(t *testing.T) {
		empty := analysisdoc.Analysis{StudyID: a.StudyID, Version: 1, Engine: "builtin"}
		if _, err := qdpxcheck.Check(runFormatter(t, p, analysisRecords(t, empty, nil))); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBuiltinAnalysisRefusesBadRecords(t *testing.T) {
	h := mustHost(t, Config{})
	for _, name := range []string{BuiltinAnalysisMarkdown, BuiltinAnalysisHTML, BuiltinQDPX} {
		p := mustBuiltin(t, h, name)
		for _, tc := range []struct {
			recs []json.RawMessage
			want string
		}{
			{nil, `no records: the first record must be {"study": {...}, "analysis": {...}}`},
			{[]json.RawMessage{json.RawMessage(`{"cells":["a"]}`)}, `record 1 has no "analysis"`},
			{[]json.RawMessage{json.RawMessage(`{"analysis":{"version":"x"}}`)}, "record 1: json: cannot unmarshal"},
		} {
			err := p.Format(context.Background(), nil, tc.recs, &bytes.Buffer{})
			pe := wantPluginError(t, err, ReasonExit, "exited with code 1")
			if !strings.Contains(pe.Stderr, name+": "+tc.want) {
				t.Errorf("%s: Stderr = %q, want %q", name, pe.Stderr, tc.want)
			}
		}
	}
	p := mustBuiltin(t, h, BuiltinQDPX)
	recs := analysisRecords(t, sampleAnalysis(), nil)
	err := p.Format(context.Background(), nil, append(recs, json.RawMessage(`{"cells":[]}`)), &bytes.Buffer{})
	if pe := wantPluginError(t, err, ReasonExit, "exited with code 1"); !strings.Contains(pe.Stderr, `record 2 is not {"interview"`) {
		t.Errorf("Stderr = %q", pe.Stderr)
	}
}

func codeNamed(p *qdpxcheck.Project, name string) qdpxcheck.Code {
	for _, c := range p.Codes {
		if c.Name == name {
			return c
		}
	}
	return qdpxcheck.Code{Path: []string{""}}
}

// textsOf returns the text content of every element named tag under n.
func textsOf(n *html.Node, tag string) []string {
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, textContent(n))
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textContent(c))
	}
	return b.String()
}

func anyContains(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
