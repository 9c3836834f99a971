package qdpx

import (
	"strconv"

	"interviewd/plugins/internal/analysisdoc"
)

// researcherCodes is the code book's part for the study's tags, as researchers applied
// them to spans of transcripts: one code per tag, each annotated span a selection
// coded with it and described by the researcher's note. nil when the analysis has no
// researcher codes, which leaves the project of a study without tags as it was.
func (w *writer) researcherCodes(a *analysisdoc.Analysis) *code {
	if len(a.ResearcherCodes) == 0 {
		return nil
	}
	parent := &code{GUID: guid(w.study, "researcher-codes"), Name: "Researcher codes", Description: "The study's tags, as researchers applied them to what participants said."}
	used := map[string]bool{}
	for i, rc := range a.ResearcherCodes {
		key := rc.ID
		if key == "" || used[key] {
			key = "#" + strconv.Itoa(i)
		}
		used[key] = true
		c := &code{GUID: guid(w.study, "researcher-code", key), Name: nameOr(rc.Name, "Code "+strconv.Itoa(i+1)), IsCodable: true,
			Description: describe(rc.Name, "", "Applied by researchers in "+strconv.Itoa(rc.InterviewCount)+" interviews ("+analysisdoc.Percent(rc.Share)+")."+segmentText(rc.Segments))}
		for _, q := range rc.Quotes {
			qr := w.code1(c.GUID, analysisdoc.Quote{InterviewID: q.InterviewID, MessageIndex: q.MessageIndex, Text: q.Text})
			if q.Note != "" && !contains(qr.notes, q.Note) {
				qr.notes = append(qr.notes, q.Note)
			}
		}
		parent.Code = append(parent.Code, c)
	}
	return parent
}
