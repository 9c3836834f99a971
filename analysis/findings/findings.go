// Package findings is the shape of an analysis: what the API returns and stores, and
// what the built-in analysis export formatters read. It is its own package, with the
// standard library only, so the formatters compiled to WebAssembly share these types
// without linking the analysis engines and their language models.
package findings

import "time"

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
	// ResearcherCodes are the study's tags with the spans researchers annotated;
	// absent when the study has none (see researcher_codes.go).
	ResearcherCodes []ResearcherCode `json:"researcher_codes,omitempty"`
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
	// Interviews are the ids of the interviews counted in Coverage, which may be more
	// than the findings quote. Never returned: it is stored beside the version so that
	// erasing an interview subtracts it exactly.
	Interviews []string `json:"-"`
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
	// Interviews are the ids of the interviews counted in Count (see
	// Objective.Interviews).
	Interviews []string `json:"-"`
}

// Suggestion is a request or idea participants voiced.
type Suggestion struct {
	Text           string  `json:"text"`
	InterviewCount int     `json:"interview_count"`
	Quotes         []Quote `json:"quotes"`
}
