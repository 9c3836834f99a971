package webui

import (
	"html/template"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Working with a transcript: the study's tags, the highlights (annotations) of
// participant messages, the form that adds one, and the way to the study's other
// interviews; and the page that searches a study's transcripts.

// PageStudySearch is the search of a study's transcripts.
const PageStudySearch = "app_study_search"

// Mark is one highlight in a message: characters [Start, End) and what a screen
// reader hears after it.
type Mark struct {
	Start, End int
	Label      string // "Highlighted: Pricing, Habits; note: ..."
}

// TranscriptNotes is what the transcript page shows beside the messages.
type TranscriptNotes struct {
	StudyID string
	// Prev and Next are the study's interviews started just before and after this one
	// ("" at either end); Position and Of place it among them.
	Prev, Next   string
	Position, Of int
	Tags         []TagRow
	Highlights   []HighlightRow
	// Messages are the participant messages the form can highlight in.
	Messages []MessageOption
	Form     AnnotateForm
	Errors   FieldErrors
	// ReadOnly hides every change (a viewer's page): tags, highlights and the form.
	ReadOnly bool
}

// TagRow is one of the study's tags and how often this interview uses it.
type TagRow struct {
	ID, Name string
	Here     int // highlights of this interview with the tag
}

// HighlightRow is one annotation of the interview.
type HighlightRow struct {
	ID           string
	MessageIndex int
	Text, Note   string
	Tags         []string
}

// MessageOption is a participant message offered by the form.
type MessageOption struct {
	Index    int
	Label    string
	Selected bool
}

// AnnotateForm is the form's values (kept when it is refused).
type AnnotateForm struct {
	Message    int
	Quote      string
	Start, End string // characters, set by the page's script from a selection; "" to find Quote
	Tags       []string
	NewTag     string
	Note       string
}

// StudySearchPage is a page of search results.
type StudySearchPage struct {
	StudyID, StudyName string
	Query              string
	Hits               []SearchHitRow
	NextURL            string
	Searched           bool // a query was given (and no error)
	Errors             FieldErrors
}

// SearchHitRow is one message that matched, its snippet cut into plain and
// highlighted parts.
type SearchHitRow struct {
	URL       string // the message in its transcript
	Where     string // "Interview started 21 Nov 2026, message 4"
	Speaker   string
	Rehearsal bool
	Parts     []SnippetPart
}

// SnippetPart is a run of a snippet, highlighted or not.
type SnippetPart struct {
	Text string
	Hit  bool
}

// SnippetParts cuts text at the spans (characters, in order, not overlapping).
func SnippetParts(text string, spans [][2]int) []SnippetPart {
	var out []SnippetPart
	at := 0
	for _, s := range spans {
		if s[0] < at || s[1] <= s[0] {
			continue
		}
		if s[0] > at {
			out = append(out, SnippetPart{Text: runes(text, at, s[0])})
		}
		out = append(out, SnippetPart{Text: runes(text, s[0], s[1]), Hit: true})
		at = s[1]
	}
	if n := utf8.RuneCountInString(text); at < n {
		out = append(out, SnippetPart{Text: runes(text, at, n)})
	}
	return out
}

// runes returns characters [from, to) of s.
func runes(s string, from, to int) string {
	start, end, i := len(s), len(s), 0
	for b := range s {
		if i == from {
			start = b
		}
		if i == to {
			end = b
			break
		}
		i++
	}
	if start > end {
		return ""
	}
	return s[start:end]
}

// writeMarked writes a message's text with its highlights as <mark> elements: the
// text is cut wherever a highlight starts or ends, each run inside one or more
// highlights is marked, and after the last run of each highlight its label is written
// for screen readers (the marks themselves are not announced by all of them).
func writeMarked(b *strings.Builder, text string, marks []Mark) {
	if len(marks) == 0 {
		escape(b, text)
		return
	}
	n := utf8.RuneCountInString(text)
	cuts := []int{0, n}
	clamped := make([]Mark, len(marks))
	for i, m := range marks {
		m.Start, m.End = min(max(m.Start, 0), n), min(max(m.End, 0), n)
		clamped[i] = m
		cuts = append(cuts, m.Start, m.End)
	}
	marks = clamped
	sort.Ints(cuts)
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		if from == to {
			continue
		}
		var labels []string
		inside := false
		for _, m := range marks {
			if m.Start <= from && to <= m.End {
				inside = true
				if m.End == to {
					labels = append(labels, m.Label)
				}
			}
		}
		if !inside {
			escape(b, runes(text, from, to))
			continue
		}
		b.WriteString(`<mark class="anno">`)
		escape(b, runes(text, from, to))
		for _, l := range labels {
			b.WriteString(`<span class="visually-hidden"> (`)
			escape(b, l)
			b.WriteString(`)</span>`)
		}
		b.WriteString(`</mark>`)
	}
}

// Number is the message's number as a person counts (from 1).
func (h HighlightRow) Number() int { return h.MessageIndex + 1 }

// OptionsHTML is the highlight form's list of participant messages, written like the
// transcript's messages (see MessagesHTML) rather than by a template range: for a
// long interview the range cost more than the rest of the page.
func (n TranscriptNotes) OptionsHTML() template.HTML {
	var b strings.Builder
	b.Grow(len(n.Messages) * 90)
	for _, o := range n.Messages {
		b.WriteString(`<option value="`)
		b.WriteString(strconv.Itoa(o.Index))
		b.WriteByte('"')
		if o.Selected {
			b.WriteString(" selected")
		}
		b.WriteByte('>')
		escape(&b, o.Label)
		b.WriteString("</option>")
	}
	return template.HTML(b.String()) // every value above went through escape
}
