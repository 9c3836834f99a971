package analysis

import "interviewd/analysis/findings"

// summarise is findings.Summarise over the analysis of in.
func summarise(in Input, a *Analysis) string {
	a.InterviewsIncluded = len(in.Interviews)
	return findings.Summarise(a)
}
