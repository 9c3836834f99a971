// Package analysisdoc reads the records the host writes to the analysis export formats
// (the built-in analysis-md, analysis-html and qdpx formatters), so the three share
// one reading of them. It is plugin code: compiled into the WebAssembly formatters,
// it depends on the standard library only, and on the records' JSON, never on the
// server's packages (an organisation's formatter reads the same records).
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
	"time"

	"interviewd/plugins/internal/jsontext"
)

// MaxLine bounds one record (a whole analysis, or one interview's transcript).
const MaxLine = 32 << 20

// Study names the study the analysis is of.
type Study struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Analysis is one version of a study's findings, as the API shows it.
type Analysis struct {
	StudyID            string        `json:"study_id"`
	Version            int           `json:"version"`
	GeneratedAt        time.Time     `json:"generated_at"`
	Engine             string        `json:"engine"`
	InterviewsIncluded int           `json:"interviews_included"`
	QuotesDropped      int           `json:"quotes_dropped"`
	Summary            string        `json:"summary"`
	Objectives         []Objective   `json:"objectives"`
	Themes             []Theme       `json:"themes"`
	Questions          []QuestionSet `json:"questions"`
	Suggestions        []Suggestion  `json:"suggestions"`
}

// Quote is an exact span of one participant message.
type Quote struct {
	InterviewID  string `json:"interview_id"`
	MessageIndex int    `json:"message_index"`
	Text         string `json:"text"`
}

// Objective is what the interviews said about one learning objective.
type Objective struct {
	Objective string    `json:"objective"`
	Findings  []Finding `json:"findings"`
	Coverage  Coverage  `json:"coverage"`
	Gap       bool      `json:"gap"`
}

// Coverage is how many of the included interviews gave evidence for an objective.
type Coverage struct {
	Interviews int     `json:"interviews"`
	Of         int     `json:"of"`
	Share      float64 `json:"share"`
}

// Finding is one statement with the quotes for and against it.
type Finding struct {
	Statement string  `json:"statement"`
	Support   []Quote `json:"support"`
	Contrary  []Quote `json:"contrary"`
}

// Theme is a pattern across interviews.
type Theme struct {
	ID             string                    `json:"id"`
	Label          string                    `json:"label"`
	Description    string                    `json:"description"`
	Sentiment      string                    `json:"sentiment"`
	InterviewCount int                       `json:"interview_count"`
	Share          float64                   `json:"share"`
	Quotes         []Quote                   `json:"quotes"`
	Segments       map[string]map[string]int `json:"segments"`
}

// QuestionSet is what participants answered to one scripted question.
type QuestionSet struct {
	Question string        `json:"question"`
	Kind     string        `json:"kind"`
	Answered int           `json:"answered"`
	Skipped  int           `json:"skipped"`
	Groups   []AnswerGroup `json:"groups"`
}

// AnswerGroup is a group of similar answers to one question.
type AnswerGroup struct {
	Label  string  `json:"label"`
	Count  int     `json:"count"`
	Quotes []Quote `json:"quotes"`
}

// Suggestion is a request or idea participants voiced.
type Suggestion struct {
	Text           string  `json:"text"`
	InterviewCount int     `json:"interview_count"`
	Quotes         []Quote `json:"quotes"`
}

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

// GeneratedAtText formats when the analysis was made, in UTC to the minute.
func (a *Analysis) GeneratedAtText() string {
	if a.GeneratedAt.IsZero() {
		return "unknown"
	}
	return a.GeneratedAt.UTC().Format("2006-01-02 15:04 UTC")
}
