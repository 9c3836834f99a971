// Package analysisdoc reads the records the host writes to the analysis export formats
// (the built-in analysis-md, analysis-html and qdpx formatters), so the three share
// one reading of them. It is plugin code: compiled into the WebAssembly formatters,
// it depends on the standard library and package findings (types only), never on the
// server's packages (an organisation's formatter reads the same records as JSON).
//
// After the {"config": {...}} line the host writes:
//
//   - first, one record {"study": {"id", "title"}, "analysis": {...}}: the analysis as
//     get_analysis returns it (summary, objectives, themes, questions, suggestions,
//     version, engine, generated_at, interviews_included, quotes_dropped);
//   - then, for formats that carry transcripts (qdpx), one record per interview the
//     analysis includes, oldest first: {"interview": {"id", "started_at",
//     "completed_at", "context": {...}, "messages": [{"speaker", "text"}, ...]}}, the
//     whole transcript in order (a quote's message_index is a position in it),
//     redacted exactly as the analysis's quotes were.
package analysisdoc

import (
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"

	"interviewd/analysis/findings"
	"interviewd/plugins/internal/jsontext"
)

// MaxLine bounds one record (a whole analysis, or one interview's transcript).
const MaxLine = 32 << 20

// Study names the study the analysis is of.
type Study struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// The analysis's shape is the API's (package findings); these names are the same types.
type (
	Analysis    = findings.Analysis
	Quote       = findings.Quote
	Objective   = findings.Objective
	Coverage    = findings.Coverage
	Finding     = findings.Finding
	Theme       = findings.Theme
	QuestionSet = findings.QuestionSet
	AnswerGroup = findings.AnswerGroup
	Suggestion  = findings.Suggestion
)

// Head is the first record: the study and its analysis.
type Head struct {
	Study    Study     `json:"study"`
	Analysis *Analysis `json:"analysis"`
}

// Interview is one interview's (redacted) transcript.
type Interview struct {
	ID          string            `json:"id"`
	StartedAt   string            `json:"started_at"`
	CompletedAt string            `json:"completed_at"`
	Context     map[string]string `json:"context"`
	Messages    []Message         `json:"messages"`
}

// Message is one transcript line; its position in Interview.Messages is the
// message_index quotes name.
type Message struct {
	Speaker string `json:"speaker"` // "participant" or "interviewer"
	Text    string `json:"text"`
}

// SpeakerInterviewer is the interviewer's speaker value; anything else is the
// participant.
const SpeakerInterviewer = "interviewer"

// Reader reads the records from a formatter's stdin.
type Reader struct {
	lines *jsontext.LineReader
}

// Open reads the configuration line and the head record from r. It returns an error
// naming the line for a missing or malformed one.
func Open(r io.Reader) (*Reader, Head, error) {
	rd := &Reader{lines: jsontext.NewLineReader(r, MaxLine)}
	line, err := rd.lines.Next()
	if errors.Is(err, io.EOF) {
		return nil, Head{}, errors.New(`no input: the first line must be {"config": {...}}`)
	}
	if err != nil {
		return nil, Head{}, err
	}
	if _, found, err := jsontext.Member(line, "config"); err != nil || !found {
		return nil, Head{}, errors.New(`the first line must be {"config": {...}}`)
	}
	line, err = rd.lines.Next()
	if errors.Is(err, io.EOF) {
		return nil, Head{}, errors.New(`no records: the first record must be {"study": {...}, "analysis": {...}}`)
	}
	if err != nil {
		return nil, Head{}, err
	}
	var h Head
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, Head{}, errors.New("record 1: " + err.Error())
	}
	if h.Analysis == nil {
		return nil, Head{}, errors.New(`record 1 has no "analysis"`)
	}
	return rd, h, nil
}

// NextInterview returns the next interview record, or io.EOF after the last.
func (rd *Reader) NextInterview() (Interview, error) {
	line, err := rd.lines.Next()
	if err != nil {
		return Interview{}, err
	}
	var rec struct {
		Interview *Interview `json:"interview"`
	}
	where := "record " + strconv.Itoa(rd.lines.Line()-1)
	if err := json.Unmarshal(line, &rec); err != nil {
		return Interview{}, errors.New(where + ": " + err.Error())
	}
	if rec.Interview == nil || rec.Interview.ID == "" {
		return Interview{}, errors.New(where + ` is not {"interview": {"id": ...}}`)
	}
	return *rec.Interview, nil
}

// Percent writes a share (0 to 1) as a whole percentage, "67%".
func Percent(share float64) string {
	return strconv.Itoa(int(share*100+0.5)) + "%"
}

// Segment is one (context key, value) count of a theme.
type Segment struct {
	Key, Value string
	Interviews int
}

// Segments returns a theme's segment counts ordered by key, then value: maps have no
// order, and a report must read the same every time.
func Segments(m map[string]map[string]int) []Segment {
	var out []Segment
	for k, vs := range m {
		for v, n := range vs {
			out = append(out, Segment{Key: k, Value: v, Interviews: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Value < out[j].Value
	})
	return out
}

// Title is the report's title: the study's title, or its id when it has none.
func (h Head) Title() string {
	if h.Study.Title != "" {
		return h.Study.Title
	}
	if h.Study.ID != "" {
		return "Study " + h.Study.ID
	}
	return "Study " + h.Analysis.StudyID
}

// GeneratedAtText formats when a was made, in UTC to the minute.
func GeneratedAtText(a *Analysis) string {
	if a.GeneratedAt.IsZero() {
		return "unknown"
	}
	return a.GeneratedAt.UTC().Format("2006-01-02 15:04 UTC")
}
