package jobs

import (
	"context"

	"interviewd/kv"
)

// RedactTexts returns texts (participant words, or notes about them) redacted by the
// organisation's chain exactly as an export's transcript cells are, in order. The
// research API shows transcript text only this way (search snippets, annotated spans):
// what it gives out is never more than an export would. An empty text stays empty.
// It returns an error when a redactor fails; the caller must then show nothing.
func (r *Runner) RedactTexts(ctx context.Context, org kv.ID, texts []string) ([]string, error) {
	if len(texts) == 0 {
		return []string{}, nil
	}
	row := exportInterview{Transcript: make([]exportMessage, len(texts))}
	for i, t := range texts {
		row.Transcript[i] = exportMessage{Speaker: kv.SpeakerParticipant, Text: t}
	}
	rows := []exportInterview{row}
	if err := r.redactTranscripts(ctx, org, nil, rows); err != nil {
		return nil, err
	}
	out := make([]string, len(texts))
	for i, m := range rows[0].Transcript {
		out[i] = m.Text
	}
	return out, nil
}
