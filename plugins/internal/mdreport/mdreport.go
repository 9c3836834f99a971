// Package mdreport writes a study's analysis as a Markdown report. It is the logic of
// the built-in analysis-md formatter plugin, kept importable so it is tested natively
// as well as through the WebAssembly host.
//
// Every string that comes from an interview or an engine is escaped: Markdown
// renderers pass raw HTML through, so a participant's "<script>" must stay text, and
// a quote starting with "#" or "-" must not become a heading or a list.
package mdreport

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"interviewd/plugins/internal/analysisdoc"
)

// MediaType is the media type of the artifact.
const MediaType = "text/markdown; charset=utf-8"

// Run speaks the formatter side of the plugin ABI: it reads the configuration line and
// the analysis record (see package analysisdoc) and writes the report. Interview
// records, if any follow, are not needed and not read. It returns an error for missing
// or malformed records, or a failed write.
func Run(stdin io.Reader, stdout io.Writer) error {
	_, h, err := analysisdoc.Open(stdin)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	write(w, h)
	return w.Flush()
}

// report accumulates the document; bufio.Writer keeps the first write error.
type report struct{ w *bufio.Writer }

func (r report) line(parts ...string) {
	for _, p := range parts {
		r.w.WriteString(p)
	}
	r.w.WriteByte('\n')
}

func (r report) blank() { r.w.WriteByte('\n') }

func write(w *bufio.Writer, h analysisdoc.Head) {
	r := report{w}
	a := h.Analysis
	r.line("# Findings: ", oneLine(h.Title()))
	r.blank()
	r.line("Analysis version ", strconv.Itoa(a.Version), " of ", plural(a.InterviewsIncluded, "completed live interview"),
		", generated ", analysisdoc.GeneratedAtText(a), ".")
	r.blank()
	if strings.TrimSpace(a.Summary) != "" {
		r.line("## Summary")
		r.blank()
		r.paragraph(a.Summary)
	}
	writeObjectives(r, a)
	writeThemes(r, a)
	writeQuestions(r, a)
	writeSuggestions(r, a)
	writeResearcherCodes(r, a)
	r.line("---")
	r.blank()
	r.line("Version ", strconv.Itoa(a.Version), " · engine ", oneLine(a.Engine), " · generated ", analysisdoc.GeneratedAtText(a),
		" · interviews included: ", strconv.Itoa(a.InterviewsIncluded), " · quotes dropped: ", strconv.Itoa(a.QuotesDropped))
	r.blank()
	r.line("Quotes are exact passages of what participants wrote, after the organisation's redaction; " +
		"message numbers count a transcript's messages from 0. " +
		"Quotes dropped are passages an engine offered that were not found word for word in the interview they named.")
}

func writeObjectives(r report, a *analysisdoc.Analysis) {
	if len(a.Objectives) == 0 {
		return
	}
	r.line("## Objectives")
	r.blank()
	for i, o := range a.Objectives {
		r.line("### ", strconv.Itoa(i+1), "\\. ", oneLine(o.Objective))
		r.blank()
		r.line("**Coverage:** ", strconv.Itoa(o.Coverage.Interviews), " of ", plural(o.Coverage.Of, "interview"),
			" (", analysisdoc.Percent(o.Coverage.Share), ").")
		r.blank()
		if o.Gap {
			r.line("> **Gap:** the evidence is thin. Fewer than 3 interviews, or under 20% of them, speak to this objective.")
			r.blank()
		}
		if len(o.Findings) == 0 {
			r.line("*No findings.*")
			r.blank()
		}
		for _, f := range o.Findings {
			r.line("#### ", oneLine(f.Statement))
			r.blank()
			r.line("**Supporting quotes**")
			r.blank()
			r.quotes(f.Support)
			r.line("**Contrary quotes**")
			r.blank()
			r.quotes(f.Contrary)
		}
	}
}

func writeThemes(r report, a *analysisdoc.Analysis) {
	if len(a.Themes) == 0 {
		return
	}
	r.line("## Themes")
	r.blank()
	r.line("| Theme | Sentiment | Interviews | Share |")
	r.line("| --- | --- | ---: | ---: |")
	for _, t := range a.Themes {
		r.line("| ", oneLine(t.Label), " | ", oneLine(t.Sentiment), " | ", strconv.Itoa(t.InterviewCount), " | ", analysisdoc.Percent(t.Share), " |")
	}
	r.blank()
	for _, t := range a.Themes {
		r.line("### ", oneLine(t.Label))
		r.blank()
		if strings.TrimSpace(t.Description) != "" {
			r.paragraph(t.Description)
		}
		r.line("**Sentiment:** ", oneLine(t.Sentiment), " · **Interviews:** ", strconv.Itoa(t.InterviewCount),
			" (", analysisdoc.Percent(t.Share), ")")
		r.blank()
		if segs := analysisdoc.Segments(t.Segments); len(segs) > 0 {
			r.line("| Context | Value | Interviews |")
			r.line("| --- | --- | ---: |")
			for _, s := range segs {
				r.line("| ", oneLine(s.Key), " | ", oneLine(s.Value), " | ", strconv.Itoa(s.Interviews), " |")
			}
			r.blank()
		}
		r.quotes(t.Quotes)
	}
}

func writeQuestions(r report, a *analysisdoc.Analysis) {
	if len(a.Questions) == 0 {
		return
	}
	r.line("## Questions")
	r.blank()
	for _, q := range a.Questions {
		r.line("### ", oneLine(q.Question))
		r.blank()
		kind := "Verbatim question"
		if q.Kind == "screener" {
			kind = "Screener question"
		}
		r.line("*", kind, "* · answered ", strconv.Itoa(q.Answered), ", skipped ", strconv.Itoa(q.Skipped))
		r.blank()
		for _, g := range q.Groups {
			r.line("#### ", oneLine(g.Label), " (", plural(g.Count, "answer"), ")")
			r.blank()
			r.quotes(g.Quotes)
		}
	}
}

func writeSuggestions(r report, a *analysisdoc.Analysis) {
	if len(a.Suggestions) == 0 {
		return
	}
	r.line("## Suggestions")
	r.blank()
	for _, s := range a.Suggestions {
		r.line("### ", oneLine(s.Text))
		r.blank()
		r.line("Voiced in ", plural(s.InterviewCount, "interview"), ".")
		r.blank()
		r.quotes(s.Quotes)
	}
}

// quotes writes each quote as a block quote with its interview and message under it.
func (r report) quotes(qs []analysisdoc.Quote) {
	if len(qs) == 0 {
		r.line("*None.*")
		r.blank()
		return
	}
	for _, q := range qs {
		for _, l := range lines(q.Text) {
			if l == "" {
				r.line(">")
			} else {
				r.line("> ", escapeLine(l))
			}
		}
		r.line(">")
		r.line("> — interview ", escapeLine(q.InterviewID), ", message ", strconv.Itoa(q.MessageIndex))
		r.blank()
	}
}

// paragraph writes text as paragraphs, its line breaks kept.
func (r report) paragraph(text string) {
	for _, l := range lines(strings.TrimSpace(text)) {
		if l == "" {
			r.blank()
			continue
		}
		r.line(escapeLine(l), "  ") // two spaces: a hard line break
	}
	r.blank()
}

// lines splits text at its line breaks (LF, CRLF or CR).
func lines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	return strings.Split(text, "\n")
}

// oneLine escapes text for a heading or a table cell: its line breaks become spaces.
func oneLine(text string) string {
	return escapeLine(strings.Join(strings.Fields(strings.Join(lines(text), " ")), " "))
}

// escapeLine escapes one line of text so that it renders as itself: each character
// that can open inline markup (emphasis, code, links, images, raw HTML, entities,
// tables, strikethrough, headings) gets a backslash, and so does whatever at the start
// of the line would begin a list, a block quote, a heading or a setext underline.
// CommonMark lets a backslash escape any ASCII punctuation, so the escapes never show.
func escapeLine(l string) string {
	var b strings.Builder
	b.Grow(len(l) + 8)
	start := true // still in the line's leading spaces
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '&', '#', '!', '{', '}':
			b.WriteByte('\\')
		case '-', '+', '=':
			if start {
				b.WriteByte('\\')
			}
		case '.', ')':
			// "12." or "3)" at the start of a line opens an ordered list.
			if j := leadingDigits(l); j > 0 && i == j {
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' {
			start = false
		}
	}
	return b.String()
}

// leadingDigits returns the index after the digits that start l (after its leading
// spaces), or 0 when it does not start with a digit.
func leadingDigits(l string) int {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	j := i
	for j < len(l) && l[j] >= '0' && l[j] <= '9' {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
