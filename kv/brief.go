package kv

// Brief is a study's authored design as the API shows it. All five fields are always
// present on the wire; slices are never nil once normalised.
type Brief struct {
	Title                    *string  `json:"title"`
	Objectives               []string `json:"objectives"`
	PreInterviewQuestions    []string `json:"pre_interview_questions"`
	VerbatimQuestions        []string `json:"verbatim_questions"`
	EstimatedDurationMinutes *int     `json:"estimated_duration_minutes"`
}

// Normalised returns a copy whose slices are non-nil, so it encodes as [] rather than null.
func (b Brief) Normalised() Brief {
	out := b
	out.Objectives = nonNil(b.Objectives)
	out.PreInterviewQuestions = nonNil(b.PreInterviewQuestions)
	out.VerbatimQuestions = nonNil(b.VerbatimQuestions)
	return out
}

func nonNil(s []string) []string {
	return append(make([]string, 0, len(s)), s...)
}
