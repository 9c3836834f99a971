package webui

import (
	"reflect"
	"strings"
	"testing"
)

// TestWriteMarked: overlapping highlights cut the text into marked runs, each label
// after its highlight's last run, every piece escaped; characters, not bytes.
func TestWriteMarked(t *testing.T) {
	var b strings.Builder
	writeMarked(&b, "Zoë <says> café", []Mark{{Start: 0, End: 3, Label: "who"}, {Start: 2, End: 10, Label: "a <b>"}, {Start: 11, End: 99, Label: "far"}})
	want := `<mark class="anno">Zo</mark><mark class="anno">ë<span class="visually-hidden"> (who)</span></mark>` +
		`<mark class="anno"> &lt;says&gt;<span class="visually-hidden"> (a &lt;b&gt;)</span></mark> ` +
		`<mark class="anno">café<span class="visually-hidden"> (far)</span></mark>`
	if b.String() != want {
		t.Fatalf("got  %s\nwant %s", b.String(), want)
	}
	b.Reset()
	writeMarked(&b, "a<b", nil)
	if b.String() != "a&lt;b" {
		t.Fatalf("no marks: %s", b.String())
	}
}

func TestSnippetParts(t *testing.T) {
	got := SnippetParts("…plan on Sundays, plan", [][2]int{{1, 5}, {9, 16}, {3, 4}, {18, 22}})
	want := []SnippetPart{{"…", false}, {"plan", true}, {" on ", false}, {"Sundays", true}, {", ", false}, {"plan", true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}

// TestRenderAnnotationPages: the transcript with its tags, highlights, marks and
// neighbours, and the search page with its highlighted snippets.
func TestRenderAnnotationPages(t *testing.T) {
	u := mustUI(t)
	owner := AppShell{SignedIn: true, OrgName: "Acme", Env: "live", Role: "owner", CSRF: "tok123", Nav: NavInterviews}
	at := Stamp{ISO: "2026-11-23T18:00:00Z", Text: "23 Nov 2026, 18:00 UTC"}
	page := TranscriptPage{ID: "i1", StudyID: "s1", StudyName: "Rotas", Status: "completed", Started: at,
		Messages: []Message{{Speaker: "interviewer", Text: "When?", At: at}, {Speaker: "participant", Text: "On Sundays <always>", At: at, Marks: []Mark{{Start: 3, End: 10, Label: "highlighted: Habit"}}}},
		Notes: &TranscriptNotes{StudyID: "s1", Prev: "i0", Position: 2, Of: 2, Tags: []TagRow{{ID: "t1", Name: "Habit <x>", Here: 1}},
			Highlights: []HighlightRow{{ID: "a1", MessageIndex: 1, Text: "Sundays", Note: "weekly", Tags: []string{"Habit <x>"}}},
			Messages:   []MessageOption{{Index: 1, Label: "Message 2: On Sundays", Selected: true}},
			Form:       AnnotateForm{Quote: "Sun<", Tags: []string{"t1"}}, Errors: FieldErrors{"quote": "These words are not in the message."}}}
	page.Transcript, page.Count = page.MessagesHTML(), 2
	html := renderApp(t, u, PageTranscript, owner, page)
	for _, w := range []string{`href="/app/interviews/i0" rel="prev"`, "Interview 2 of 2", "Last interview", `<mark class="anno">Sundays<span class="visually-hidden"> (highlighted: Habit)</span></mark>`,
		`action="/app/interviews/i1/annotations"`, `<option value="1" selected>Message 2: On Sundays</option>`, `name="tags" value="t1" checked`, "Habit &lt;x&gt;",
		`id="annotate-quote-error">These words are not in the message.`, "Sun&lt;</textarea>", `href="#m1">Message 2</a>`, `action="/app/interviews/i1/annotations/a1/delete"`,
		`action="/app/studies/s1/search"`, `action="/app/interviews/i1/tags/t1/delete"`, "app_annotate.js", `name="csrf" value="tok123"`} {
		if !strings.Contains(html, w) {
			t.Errorf("transcript lacks %q", w)
		}
	}
	if strings.Contains(html, " style=") || strings.Contains(html, "<script>") {
		t.Error("inline script or style")
	}
	search := StudySearchPage{StudyID: "s1", StudyName: "Rotas", Query: `plan "on sundays"`, Searched: true, NextURL: "/app/studies/s1/search?q=x&cursor=c",
		Hits: []SearchHitRow{{URL: "/app/interviews/i1#m1", Where: "Interview started 23 Nov, message 2", Speaker: "Participant", Parts: SnippetParts("I plan <b>", [][2]int{{2, 6}})}}}
	html = renderApp(t, u, PageStudySearch, owner, search)
	for _, w := range []string{`href="/app/interviews/i1#m1"`, `I <mark>plan</mark> &lt;b&gt;`, `value="plan &#34;on sundays&#34;"`, `rel="next">Search further`} {
		if !strings.Contains(html, w) {
			t.Errorf("search lacks %q", w)
		}
	}
	if t.Failed() {
		t.Log(html)
	}
}
