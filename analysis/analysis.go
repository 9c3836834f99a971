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

	"interviewd/analysis/findings"
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
	Codes      []Code // the researchers' tags and annotated spans (researcher_codes.go)
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

// The findings' shape lives in package findings, which the WebAssembly export
// formatters read too; these names are the same types.
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

	ResearcherCode = findings.ResearcherCode
	CodedQuote     = findings.CodedQuote
)
