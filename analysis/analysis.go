// Package analysis turns a study's completed interviews into findings: a summary,
// findings per objective with supporting and contrary quotes, themes with their
// prevalence by segment, per-question answer groups and suggestions. It is pure:
// interviews in, findings out; storage, redaction and jobs live elsewhere.
//
// It earns its own folder because two engines (the built-in offline one and a
// model-based one) must produce the same shape, and one grounding check must stand
// between any engine and what is stored: a quote that is not an exact span of the
// participant message it names never leaves this package.
package analysis

import (
	"context"
	"time"
)

// Speakers of a transcript message, as stored by kv.
const (
	SpeakerParticipant = "participant"
	SpeakerInterviewer = "interviewer"
)

// Sentiments a theme may carry.
const (
	SentimentPositive = "positive"
	SentimentNegative = "negative"
	SentimentMixed    = "mixed"
	SentimentNeutral  = "neutral"
)

// Question kinds: screener (pre-interview) or verbatim.
const (
	QuestionScreener = "screener"
	QuestionVerbatim = "verbatim"
)

// Input is everything an engine reads: the study's design (objectives and scripted
// questions over the design versions its interviews used) and the interviews, with
// every message already redacted the way exports are.
type Input struct {
	StudyID    string
	Objectives []string
	Questions  []Question
	Interviews []Interview
}

// Question is one scripted question, asked word for word by the interviewer.
type Question struct {
	Text string
	Kind string // QuestionScreener or QuestionVerbatim
}

// Interview is one completed live interview.
type Interview struct {
	ID            string
	DesignVersion int
	Context       map[string]string // the link's context: segment keys and values
	Messages      []Message         // the whole transcript, in order
}

// Message is one transcript line. Its position in Interview.Messages is the
// message_index quotes refer to.
type Message struct {
	Speaker string
	Text    string
}

// Engine produces an analysis from an input. The result is checked by Ground before
// anyone sees it, so an engine may be wrong about a quote but never gets one stored.
type Engine interface {
	// Name is what the analysis records as its engine ("builtin", "model:<name>").
	Name() string
	// Analyse returns the analysis of in; an error fails the job with its message.
	Analyse(ctx context.Context, in Input) (*Analysis, error)
}

// Analysis is one version of a study's findings.
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

// Objective holds what the interviews said about one learning objective.
type Objective struct {
	Objective string    `json:"objective"`
	Findings  []Finding `json:"findings"`
	Coverage  Coverage  `json:"coverage"`
	// Gap is true when the evidence is thin: fewer than 3 interviews, or under 20%
	// of them, speak to the objective.
	Gap bool `json:"gap"`
}

// Coverage is how many of the included interviews gave evidence for an objective.
type Coverage struct {
	Interviews int     `json:"interviews"`
	Of         int     `json:"of"`
	Share      float64 `json:"share"`
}

// Finding is one statement with the quotes for it and against it, side by side.
type Finding struct {
	Statement string  `json:"statement"`
	Support   []Quote `json:"support"`
	Contrary  []Quote `json:"contrary"`
}

// Theme is a pattern across interviews.
type Theme struct {
	ID             string  `json:"id"`
	Label          string  `json:"label"`
	Description    string  `json:"description"`
	Sentiment      string  `json:"sentiment"`
	InterviewCount int     `json:"interview_count"`
	Share          float64 `json:"share"`
	Quotes         []Quote `json:"quotes"`
	// Segments counts the interviews with the theme by each value of each context
	// key: {"plan": {"free": 7, "pro": 2}}.
	Segments map[string]map[string]int `json:"segments"`
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
