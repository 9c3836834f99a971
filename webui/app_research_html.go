package webui

import (
	"html/template"
	"strconv"
	"strings"
)

// The research pages' long lists — a transcript's messages, the studies list's rows —
// are written here rather than by a template range: html/template runs an escaper
// through reflection for every action of every row, which made a 60-message transcript
// cost about ten times its page's other work. These writers escape every value for the
// element text or quoted attribute it lands in (& < > " ' and NUL), so what a
// template would have made safe is safe here too; the rest of each page stays a
// template.

// escape appends s to b, safe as element text or inside a double- or single-quoted
// attribute value.
func escape(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&#34;"
		case '\'':
			rep = "&#39;"
		case 0:
			rep = "\uFFFD"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// speakerLabel is how a transcript names a speaker.
func speakerLabel(speaker string) string {
	if speaker == "interviewer" {
		return "Interviewer"
	}
	return "Participant"
}

// speakerClass keeps a class name to the two known speakers.
func speakerClass(speaker string) string {
	if speaker == "interviewer" {
		return "interviewer"
	}
	return "participant"
}

// MessagesHTML is the transcript's list items: speaker, time since the start (the
// moment itself in the title and datetime) and text. Each item's id is "m" and its
// position in the transcript (m0, m1, ...), the message_index a finding's quote names,
// so a quote links to the very message it comes from.
func (p TranscriptPage) MessagesHTML() template.HTML {
	var b strings.Builder
	n := 0
	for _, m := range p.Messages {
		n += len(m.Text) + 230
	}
	b.Grow(n)
	for i, m := range p.Messages {
		b.WriteString(`<li class="msg msg-`)
		b.WriteString(speakerClass(m.Speaker))
		b.WriteString(`" id="m`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`"><span class="who">`)
		b.WriteString(speakerLabel(m.Speaker))
		b.WriteString(`</span> <time class="muted small" datetime="`)
		escape(&b, m.At.ISO)
		b.WriteString(`" title="`)
		escape(&b, m.At.Text)
		b.WriteString(`">`)
		escape(&b, m.Offset)
		b.WriteString(`</time><p>`)
		writeMarked(&b, m.Text, m.Marks)
		b.WriteString("</p></li>\n")
	}
	return template.HTML(b.String()) // every value above went through escape
}

// RowsHTML is the studies table's rows: name (linked), mode badge, created, updated.
func (p StudiesPage) RowsHTML() template.HTML {
	var b strings.Builder
	b.Grow(len(p.Studies) * 420)
	for _, st := range p.Studies {
		b.WriteString(`<tr><th scope="row"><a href="/app/studies/`)
		escape(&b, st.ID)
		b.WriteString(`">`)
		escape(&b, st.Name)
		b.WriteString(`</a></th><td><span class="mode mode-`)
		escape(&b, st.Mode)
		b.WriteString(`">`)
		escape(&b, st.Mode)
		b.WriteString(`</span></td>`)
		stampCell(&b, st.Created)
		stampCell(&b, st.Updated)
		b.WriteString("</tr>\n")
	}
	return template.HTML(b.String()) // every value above went through escape
}

func stampCell(b *strings.Builder, s Stamp) {
	b.WriteString(`<td><time datetime="`)
	escape(b, s.ISO)
	b.WriteString(`">`)
	escape(b, s.Text)
	b.WriteString(`</time></td>`)
}
