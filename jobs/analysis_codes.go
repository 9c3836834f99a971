package jobs

import (
	"context"

	"interviewd/analysis"
	"interviewd/kv"
)

// researcherCodes adds the study's tags and their annotated spans to an analysis's
// input. The spans and notes go through the organisation's redaction chain as the
// messages did, so a span of redacted words matches the redacted message it is in
// (or, redacted apart from its context, does not and is left out: never unredacted).
// A study without tags adds nothing and runs no redactor.
func (r *Runner) researcherCodes(ctx context.Context, p kv.Partition, study kv.ID, in *analysis.Input) error {
	tags, anns, err := r.db.FindStudyAnnotations(ctx, p, study)
	if err != nil || len(tags) == 0 {
		return err
	}
	texts := make([]string, 0, 2*len(anns))
	for _, a := range anns {
		texts = append(texts, a.Text, a.Note)
	}
	red, err := r.RedactTexts(ctx, p.Org, texts)
	if err != nil {
		return err
	}
	at := make(map[kv.ID]int, len(tags))
	in.Codes = make([]analysis.Code, len(tags))
	for i, t := range tags {
		at[t.ID] = i
		in.Codes[i] = analysis.Code{ID: t.ID.String(), Name: t.Name}
	}
	for i, a := range anns {
		span := analysis.CodedSpan{InterviewID: a.InterviewID.String(), MessageIndex: a.MessageIndex, Start: a.Start,
			Text: boundText(red[2*i]), Note: red[2*i+1]}
		for _, tag := range a.TagIDs {
			if c, ok := at[tag]; ok {
				in.Codes[c].Spans = append(in.Codes[c].Spans, span)
			}
		}
	}
	return nil
}
