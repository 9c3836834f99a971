package analysis

import (
	"context"
	"fmt"
	"strings"
)

// NewBuiltin returns the offline, deterministic engine ("builtin").
func NewBuiltin() Engine { return &builtin{} }

type builtin struct{}

func (*builtin) Name() string { return "builtin" }

// Analyse groups each scripted question's answers and measures each objective's
// coverage by the words participants share with it.
func (b *builtin) Analyse(ctx context.Context, in Input) (*Analysis, error) {
	a := Empty(in, b.Name())
	for qi, q := range in.Questions {
		a.Questions[qi] = QuestionSet{Question: q.Text, Kind: q.Kind, Groups: []AnswerGroup{}}
	}
	for _, iv := range in.Interviews {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		answered := make([]bool, len(in.Questions))
		for _, ans := range AnswersOf(in.Questions, iv) {
			for _, mi := range ans.Messages {
				if !IsNonAnswer(iv.Messages[mi].Text) {
					answered[ans.Question] = true
				}
			}
		}
		for qi, ok := range answered {
			if ok {
				a.Questions[qi].Answered++
			} else {
				a.Questions[qi].Skipped++
			}
		}
	}
	for oi, o := range in.Objectives {
		words := contentWords(o)
		n := 0
		var support []Quote
		for _, iv := range in.Interviews {
			for mi, m := range iv.Messages {
				if m.Speaker == SpeakerParticipant && sharesWord(m.Text, words) {
					n++
					support = append(support, Quote{InterviewID: iv.ID, MessageIndex: mi, Text: m.Text})
					break
				}
			}
		}
		if len(support) > 0 {
			a.Objectives[oi].Findings = []Finding{{Statement: fmt.Sprintf("%d interviews speak to this.", n), Support: support, Contrary: []Quote{}}}
		}
		a.Objectives[oi].Coverage = coverage(n, len(in.Interviews))
		a.Objectives[oi].Gap = IsGap(n, len(in.Interviews))
	}
	a.Summary = fmt.Sprintf("%d interviews analysed.", len(in.Interviews))
	return a, nil
}

// Empty returns an analysis of in with nothing found yet: every objective a gap with
// no findings, every question listed, and every list non-nil.
func Empty(in Input, engine string) *Analysis {
	a := &Analysis{
		StudyID:            in.StudyID,
		Engine:             engine,
		InterviewsIncluded: len(in.Interviews),
		Objectives:         make([]Objective, len(in.Objectives)),
		Themes:             []Theme{},
		Questions:          make([]QuestionSet, len(in.Questions)),
		Suggestions:        []Suggestion{},
	}
	for i, o := range in.Objectives {
		a.Objectives[i] = Objective{Objective: o, Findings: []Finding{}, Coverage: coverage(0, len(in.Interviews)), Gap: true}
	}
	for i, q := range in.Questions {
		a.Questions[i] = QuestionSet{Question: q.Text, Kind: q.Kind, Skipped: len(in.Interviews), Groups: []AnswerGroup{}}
	}
	return a
}

func contentWords(s string) map[string]bool {
	w := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if len(f) > 4 {
			w[f] = true
		}
	}
	return w
}

func sharesWord(text string, words map[string]bool) bool {
	for w := range contentWords(text) {
		if words[w] {
			return true
		}
	}
	return false
}
