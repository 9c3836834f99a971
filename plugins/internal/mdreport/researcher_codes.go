package mdreport

import (
	"strconv"

	"interviewd/plugins/internal/analysisdoc"
)

// writeResearcherCodes writes the study's tags as researchers applied them: each code
// with its interviews and share, then its passages with the researcher's note. Nothing
// when the analysis has none, so a study without tags reads as before.
func writeResearcherCodes(r report, a *analysisdoc.Analysis) {
	if len(a.ResearcherCodes) == 0 {
		return
	}
	r.line("## Researcher codes")
	r.blank()
	r.line("| Code | Interviews | Share |")
	r.line("| --- | ---: | ---: |")
	for _, c := range a.ResearcherCodes {
		r.line("| ", oneLine(c.Name), " | ", strconv.Itoa(c.InterviewCount), " | ", analysisdoc.Percent(c.Share), " |")
	}
	r.blank()
	for _, c := range a.ResearcherCodes {
		r.line("### ", oneLine(c.Name))
		r.blank()
		r.line("Applied in ", plural(c.InterviewCount, "interview"), " (", analysisdoc.Percent(c.Share), ").")
		r.blank()
		for _, q := range c.Quotes {
			r.quotes([]analysisdoc.Quote{{InterviewID: q.InterviewID, MessageIndex: q.MessageIndex, Text: q.Text}})
			if q.Note != "" {
				r.line("*Note:* ", oneLine(q.Note))
				r.blank()
			}
		}
		if len(c.Quotes) == 0 {
			r.line("*None.*")
			r.blank()
		}
	}
}
