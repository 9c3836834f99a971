// Package qdpx writes a study's analysis and its interviews as a REFI-QDA project (a
// .qdpx file), the exchange format NVivo, ATLAS.ti, MAXQDA and other qualitative
// analysis tools import. It is the logic of the built-in qdpx formatter plugin, kept
// importable so it is tested natively as well as through the WebAssembly host.
//
// The file is a zip holding project.qde (QDA-XML, namespace urn:QDA-XML:project:1.0)
// and one plain-text source per interview under sources/. Each transcript is written
// one message per line, "Interviewer: " or "Participant: " before it, as the CSV
// export's transcript column reads. The analysis becomes the code book: themes, the
// findings of each objective (supporting and contrary evidence apart), the answer
// groups of each question and the suggestions. Every quote becomes a PlainTextSelection
// of its interview's source, coded with each code it is evidence for.
//
// Positions follow the standard: characters (Unicode code points) counted from 0 in
// the source's text, startPosition at the quote's first character and endPosition
// just after its last. Every GUID is derived from the study and what it names, and
// every time in the zip is the analysis's own, so one analysis always gives the same
// bytes.
package qdpx

import (
	"archive/zip"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"interviewd/plugins/internal/analysisdoc"
)

// MediaType is the media type of the artifact: REFI-QDA registers none, and a .qdpx
// is a zip archive.
const MediaType = "application/zip"

// ProjectFile is the project document's name inside the archive; sources live in
// SourcesDir, and a TextSource's plainTextPath is "internal://" and the file's name.
const (
	ProjectFile = "project.qde"
	SourcesDir  = "sources/"
)

// Colours of theme codes by sentiment.
var sentimentColour = map[string]string{
	"positive": "#2E7D32",
	"negative": "#C62828",
	"mixed":    "#EF6C00",
	"neutral":  "#757575",
}

// maxName bounds a code's name; the whole text is in its description.
const maxName = 120

// quoteRef is one distinct quoted span (interview, message, text) and the codes it is
// evidence for, in the order they were first met.
type quoteRef struct {
	message int
	text    string
	codes   []string
	notes   []string // researchers' notes on the span (researcher_codes.go)
}

// writer builds the project while the interviews stream past.
type writer struct {
	study, user, created string
	modified             time.Time
	zip                  *zip.Writer
	quotes               map[string][]*quoteRef // by interview id
	seen                 map[string]*quoteRef   // by interview, message and text
	placed               map[string]bool        // interviews whose source was written
	unplaced             int
	proj                 project
	varGUID              map[string]string // context key → Variable GUID
}

// Run speaks the formatter side of the plugin ABI: it reads the configuration line,
// the analysis record and the interview records (see package analysisdoc) and writes
// the .qdpx archive. It returns an error for missing or malformed records or a failed
// write.
func Run(stdin io.Reader, stdout io.Writer) error {
	rd, h, err := analysisdoc.Open(stdin)
	if err != nil {
		return err
	}
	w := newWriter(h, stdout)
	for {
		iv, err := rd.NextInterview()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := w.addSource(iv); err != nil {
			return err
		}
	}
	return w.finish(h)
}

func newWriter(h analysisdoc.Head, out io.Writer) *writer {
	a := h.Analysis
	study := h.Study.ID
	if study == "" {
		study = a.StudyID
	}
	w := &writer{study: study, zip: zip.NewWriter(out), quotes: map[string][]*quoteRef{}, seen: map[string]*quoteRef{},
		placed: map[string]bool{}, varGUID: map[string]string{}, modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
	if !a.GeneratedAt.IsZero() {
		w.modified = a.GeneratedAt.UTC()
		w.created = w.modified.Format(time.RFC3339)
	}
	w.user = guid(study, "user")
	w.proj = project{
		Name:         "Findings: " + h.Title() + " (version " + strconv.Itoa(a.Version) + ")",
		Origin:       "interviewd",
		CreatingUser: w.user,
		Created:      w.created,
		Users:        []user{{GUID: w.user, Name: "interviewd (" + a.Engine + ")"}},
	}
	w.proj.CodeBook = w.codeBook(a)
	return w
}

// codeBook lays the analysis out as codes and indexes its quotes by interview.
func (w *writer) codeBook(a *analysisdoc.Analysis) []*code {
	var top []*code
	if len(a.Themes) > 0 {
		parent := &code{GUID: guid(w.study, "themes"), Name: "Themes", Description: "Patterns across interviews, with their sentiment and prevalence."}
		usedID := map[string]bool{}
		for i, t := range a.Themes {
			key := t.ID
			if key == "" || usedID[key] {
				key = "#" + strconv.Itoa(i)
			}
			usedID[key] = true
			c := &code{GUID: guid(w.study, "theme", key), Name: nameOr(t.Label, "Theme "+strconv.Itoa(i+1)), IsCodable: true, Color: sentimentColour[t.Sentiment],
				Description: describe(t.Label, t.Description, "Sentiment: "+t.Sentiment+". Interviews: "+strconv.Itoa(t.InterviewCount)+" ("+analysisdoc.Percent(t.Share)+")."+segmentText(t.Segments))}
			w.code(c.GUID, t.Quotes)
			parent.Code = append(parent.Code, c)
		}
		top = append(top, parent)
	}
	if len(a.Objectives) > 0 {
		parent := &code{GUID: guid(w.study, "objectives"), Name: "Objectives", Description: "The study's learning objectives and the findings for each."}
		for i, o := range a.Objectives {
			oi := strconv.Itoa(i)
			cover := "Coverage: " + strconv.Itoa(o.Coverage.Interviews) + " of " + strconv.Itoa(o.Coverage.Of) + " interviews (" + analysisdoc.Percent(o.Coverage.Share) + ")."
			if o.Gap {
				cover += " Gap: the evidence is thin."
			}
			oc := &code{GUID: guid(w.study, "objective", oi), Name: nameOr(o.Objective, "Objective "+strconv.Itoa(i+1)), Description: describe(o.Objective, "", cover)}
			for j, f := range o.Findings {
				fi := strconv.Itoa(j)
				fc := &code{GUID: guid(w.study, "objective", oi, "finding", fi), Name: nameOr(f.Statement, "Finding "+strconv.Itoa(j+1)), Description: describe(f.Statement, "", "")}
				support := &code{GUID: guid(w.study, "objective", oi, "finding", fi, "support"), Name: "Supporting", IsCodable: true,
					Description: "Evidence for: " + f.Statement}
				contrary := &code{GUID: guid(w.study, "objective", oi, "finding", fi, "contrary"), Name: "Contrary", IsCodable: true,
					Description: "Evidence against: " + f.Statement}
				w.code(support.GUID, f.Support)
				w.code(contrary.GUID, f.Contrary)
				fc.Code = []*code{support, contrary}
				oc.Code = append(oc.Code, fc)
			}
			parent.Code = append(parent.Code, oc)
		}
		top = append(top, parent)
	}
	if len(a.Questions) > 0 {
		parent := &code{GUID: guid(w.study, "questions"), Name: "Questions", Description: "The scripted questions and the groups of answers to each."}
		for i, q := range a.Questions {
			qi := strconv.Itoa(i)
			qc := &code{GUID: guid(w.study, "question", qi), Name: nameOr(q.Question, "Question "+strconv.Itoa(i+1)),
				Description: describe(q.Question, "", q.Kind+" question; answered "+strconv.Itoa(q.Answered)+", skipped "+strconv.Itoa(q.Skipped)+".")}
			for j, g := range q.Groups {
				gc := &code{GUID: guid(w.study, "question", qi, "group", strconv.Itoa(j)), Name: nameOr(g.Label, "Group "+strconv.Itoa(j+1)), IsCodable: true,
					Description: describe(g.Label, "", strconv.Itoa(g.Count)+" answers.")}
				w.code(gc.GUID, g.Quotes)
				qc.Code = append(qc.Code, gc)
			}
			parent.Code = append(parent.Code, qc)
		}
		top = append(top, parent)
	}
	if len(a.Suggestions) > 0 {
		parent := &code{GUID: guid(w.study, "suggestions"), Name: "Suggestions", Description: "Requests and ideas participants voiced."}
		for i, s := range a.Suggestions {
			sc := &code{GUID: guid(w.study, "suggestion", strconv.Itoa(i)), Name: nameOr(s.Text, "Suggestion "+strconv.Itoa(i+1)), IsCodable: true,
				Description: describe(s.Text, "", "Voiced in "+strconv.Itoa(s.InterviewCount)+" interviews.")}
			w.code(sc.GUID, s.Quotes)
			parent.Code = append(parent.Code, sc)
		}
		top = append(top, parent)
	}
	if rc := w.researcherCodes(a); rc != nil {
		top = append(top, rc)
	}
	return top // none leaves the code book out: the schema wants at least one code in it
}

// code records that each quote is evidence for the code codeGUID.
func (w *writer) code(codeGUID string, quotes []analysisdoc.Quote) {
	for _, q := range quotes {
		w.code1(codeGUID, q)
	}
}

// code1 records that the quote is evidence for the code and returns its span's record.
func (w *writer) code1(codeGUID string, q analysisdoc.Quote) *quoteRef {
	key := q.InterviewID + "\x00" + strconv.Itoa(q.MessageIndex) + "\x00" + q.Text
	qr := w.seen[key]
	if qr == nil {
		qr = &quoteRef{message: q.MessageIndex, text: q.Text}
		w.seen[key] = qr
		w.quotes[q.InterviewID] = append(w.quotes[q.InterviewID], qr)
	}
	if !contains(qr.codes, codeGUID) {
		qr.codes = append(qr.codes, codeGUID)
	}
	return qr
}

// addSource writes one interview's transcript to the archive and places its quotes.
func (w *writer) addSource(iv analysisdoc.Interview) error {
	if w.placed[iv.ID] {
		return errors.New("interview " + iv.ID + " is sent twice")
	}
	w.placed[iv.ID] = true
	var text strings.Builder
	starts := make([]int, len(iv.Messages)) // each message's first character, in code points
	pos := 0
	for i, m := range iv.Messages {
		if i > 0 {
			text.WriteByte('\n')
			pos++
		}
		prefix := "Participant: "
		if m.Speaker == analysisdoc.SpeakerInterviewer {
			prefix = "Interviewer: "
		}
		text.WriteString(prefix)
		pos += len(prefix) // ASCII
		starts[i] = pos
		text.WriteString(m.Text)
		pos += utf8.RuneCountInString(m.Text)
	}
	src := textSource{GUID: guid(w.study, "source", iv.ID), Name: "Interview " + iv.ID, CreatingUser: w.user, Created: w.created}
	file := src.GUID + ".txt"
	src.PlainTextPath = "internal://" + file
	src.Description = sourceDescription(iv)
	for _, q := range w.quotes[iv.ID] {
		if q.message < 0 || q.message >= len(iv.Messages) || iv.Messages[q.message].Speaker == analysisdoc.SpeakerInterviewer {
			w.unplaced++
			continue
		}
		msg := iv.Messages[q.message].Text
		at := strings.Index(msg, q.text)
		if at < 0 || q.text == "" {
			// The message no longer reads as it did when analysed (the organisation's
			// redaction settings changed since): the quote cannot be placed.
			w.unplaced++
			continue
		}
		start := starts[q.message] + utf8.RuneCountInString(msg[:at])
		end := start + utf8.RuneCountInString(q.text)
		sel := selection{GUID: guid(w.study, "selection", iv.ID, strconv.Itoa(start), strconv.Itoa(end)), Name: name(q.text),
			Start: start, End: end, CreatingUser: w.user, Created: w.created, Description: strings.Join(q.notes, "\n\n")}
		for _, c := range q.codes {
			sel.Codings = append(sel.Codings, coding{GUID: guid(w.study, "coding", sel.GUID, c), CreatingUser: w.user, Created: w.created, CodeRef: c})
		}
		src.Selections = append(src.Selections, sel)
	}
	sort.SliceStable(src.Selections, func(i, j int) bool {
		a, b := src.Selections[i], src.Selections[j]
		return a.Start < b.Start || (a.Start == b.Start && a.End < b.End)
	})
	src.Selections = mergeSame(src.Selections)
	keys := make([]string, 0, len(iv.Context))
	for k := range iv.Context {
		if strings.TrimSpace(k) != "" { // a variable needs a name
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := w.varGUID[k]
		if !ok {
			g = guid(w.study, "variable", k)
			w.varGUID[k] = g
		}
		src.Values = append(src.Values, variableValue{VariableRef: g, TextValue: iv.Context[k]})
	}
	w.proj.Sources = append(w.proj.Sources, src)
	f, err := w.zip.CreateHeader(&zip.FileHeader{Name: SourcesDir + file, Method: zip.Deflate, Modified: w.modified})
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text.String())
	return err
}

// mergeSame joins selections of one span (one passage quoted under two message
// indexes cannot happen, but two identical quotes can differ only in a code): one
// selection per span, with every coding.
func mergeSame(sels []selection) []selection {
	out := sels[:0]
	for _, s := range sels {
		if n := len(out); n > 0 && out[n-1].GUID == s.GUID {
			if out[n-1].Description == "" {
				out[n-1].Description = s.Description
			}
			for _, c := range s.Codings {
				if !hasCoding(out[n-1].Codings, c.GUID) {
					out[n-1].Codings = append(out[n-1].Codings, c)
				}
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// finish writes project.qde and closes the archive.
func (w *writer) finish(h analysisdoc.Head) error {
	a := h.Analysis
	for id, refs := range w.quotes {
		if !w.placed[id] {
			w.unplaced += len(refs) // an interview that was not sent (erased since)
		}
	}
	if len(w.varGUID) > 0 {
		keys := make([]string, 0, len(w.varGUID))
		for k := range w.varGUID {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.proj.Variables = append(w.proj.Variables, variable{GUID: w.varGUID[k], Name: k, Type: "Text"})
		}
	}
	var d strings.Builder
	if s := strings.TrimSpace(a.Summary); s != "" {
		d.WriteString(s)
		d.WriteString("\n\n")
	}
	d.WriteString("Analysis version " + strconv.Itoa(a.Version) + " by engine " + a.Engine + ", generated " + analysisdoc.GeneratedAtText(a) +
		" from " + strconv.Itoa(a.InterviewsIncluded) + " completed live interviews; " + strconv.Itoa(a.QuotesDropped) + " quotes dropped.")
	if w.unplaced > 0 {
		d.WriteString(" " + strconv.Itoa(w.unplaced) + " quoted passages could not be placed in the transcripts as exported now (an interview erased, or the organisation's redaction changed since the analysis).")
	}
	w.proj.Description = d.String()
	f, err := w.zip.CreateHeader(&zip.FileHeader{Name: ProjectFile, Method: zip.Deflate, Modified: w.modified})
	if err != nil {
		return err
	}
	if err := w.proj.write(f); err != nil {
		return err
	}
	return w.zip.Close()
}

// name shortens text to a code's or selection's name: one line, at most maxName
// characters.
func name(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= maxName {
		return text
	}
	n := 0
	for i := range text {
		if n == maxName-1 {
			return text[:i] + "…"
		}
		n++
	}
	return text
}

// nameOr is name(text), or fallback when text has nothing to show: a code needs a
// name a person can pick in a list.
func nameOr(text, fallback string) string {
	if n := name(text); n != "" {
		return n
	}
	return fallback
}

// describe is a code's description: its whole text when the name had to shorten it,
// then detail and facts.
func describe(full, detail, facts string) string {
	var parts []string
	if name(full) != full {
		parts = append(parts, full)
	}
	if d := strings.TrimSpace(detail); d != "" {
		parts = append(parts, d)
	}
	if facts != "" {
		parts = append(parts, facts)
	}
	return strings.Join(parts, "\n\n")
}

func segmentText(m map[string]map[string]int) string {
	segs := analysisdoc.Segments(m)
	if len(segs) == 0 {
		return ""
	}
	parts := make([]string, len(segs))
	for i, s := range segs {
		parts[i] = s.Key + "=" + s.Value + ": " + strconv.Itoa(s.Interviews)
	}
	return " Segments: " + strings.Join(parts, ", ") + "."
}

func sourceDescription(iv analysisdoc.Interview) string {
	var parts []string
	if iv.StartedAt != "" {
		parts = append(parts, "Started "+iv.StartedAt+".")
	}
	if iv.CompletedAt != "" {
		parts = append(parts, "Completed "+iv.CompletedAt+".")
	}
	return strings.Join(parts, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasCoding(list []coding, g string) bool {
	for _, c := range list {
		if c.GUID == g {
			return true
		}
	}
	return false
}
