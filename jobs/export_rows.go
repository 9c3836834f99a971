package jobs

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"interviewd/kv"
)

// The export's fixed leading columns (DECISIONS §10).
var exportFixedColumns = []string{"interview_id", "study_id", "started_at", "completed_at", "duration_seconds", "modality", "invite_audience"}

// ExportTable is an export before formatting: a header and one row per interview.
type ExportTable struct {
	Header []string
	Rows   [][]string
}

// exportMessage is one transcript line as the export sees it; redaction rewrites Text
// in a copy, so the stored transcript is never touched.
type exportMessage struct {
	Speaker string
	Text    string
}

// exportInterview is one interview with its transcript.
type exportInterview struct {
	Interview  kv.Interview
	Transcript []exportMessage
}

// buildExportTable lays out the (already redacted) interviews as the CSV of DECISIONS §10: fixed columns, context.<key> for
// the union of context keys (sorted), one column per screener then verbatim question,
// then the transcript. The interviewer note is not an input, so it cannot appear.
// After the transcript come the participant columns, only for a study that has their
// data (exportParticipantColumns): a study without consent or completion codes exports
// exactly the columns it always has.
func buildExportTable(brief kv.Brief, ps kv.ParticipantSettings, ivs []exportInterview) ExportTable {
	keys := map[string]bool{}
	for _, iv := range ivs {
		for k := range iv.Interview.EntryAttributes {
			keys[k] = true
		}
	}
	ctxKeys := make([]string, 0, len(keys))
	for k := range keys {
		ctxKeys = append(ctxKeys, k)
	}
	sort.Strings(ctxKeys)
	questions := append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)

	t := ExportTable{}
	t.Header = append(t.Header, exportFixedColumns...)
	for _, k := range ctxKeys {
		t.Header = append(t.Header, "context."+k)
	}
	t.Header = append(append(t.Header, questions...), "transcript")
	consent, codes := exportParticipantColumns(ps, ivs)
	if consent {
		t.Header = append(t.Header, "consented_at", "consent_text")
	}
	if codes {
		t.Header = append(t.Header, "completion_code")
	}

	for _, e := range ivs {
		iv := e.Interview
		row := []string{iv.ID.String(), iv.StudyID.String(), exportTime(&iv.StartedAt), exportTime(iv.CompletedAt),
			exportInt(iv.DurationSeconds), iv.Modality, exportString(iv.InviteAudience)}
		for _, k := range ctxKeys {
			row = append(row, iv.EntryAttributes[k])
		}
		answers := answersByQuestion(questions, e.Transcript)
		for _, q := range questions {
			row = append(row, answers[q])
		}
		row = append(row, transcriptText(e.Transcript))
		if consent {
			row = append(row, exportTime(iv.ConsentedAt), iv.ConsentText)
		}
		if codes {
			row = append(row, iv.CompletionCode)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// exportParticipantColumns says which participant columns an export has: the consent
// columns when the study asks for consent or any interview recorded one (it may have
// asked earlier), the completion code when it issues codes or any interview has one.
// Deciding by the study as well as the rows keeps the columns steady for a study from
// its first export on, even one with no rows yet.
func exportParticipantColumns(ps kv.ParticipantSettings, ivs []exportInterview) (consent, codes bool) {
	consent, codes = ps.ConsentText != "", ps.IssuesCompletionCode()
	for _, e := range ivs {
		consent = consent || e.Interview.ConsentedAt != nil
		codes = codes || e.Interview.CompletionCode != ""
	}
	return consent, codes
}

// answersByQuestion pairs each scripted question with what the participant said after
// the interviewer asked it, up to the next scripted question (follow-up answers
// included, joined by a blank line).
func answersByQuestion(questions []string, transcript []exportMessage) map[string]string {
	answers := map[string][]string{}
	current := ""
	for _, m := range transcript {
		if m.Speaker == kv.SpeakerInterviewer {
			for _, q := range questions {
				if q != "" && strings.Contains(m.Text, q) {
					current = q
				}
			}
			continue
		}
		if current != "" {
			answers[current] = append(answers[current], m.Text)
		}
	}
	out := make(map[string]string, len(answers))
	for q, a := range answers {
		out[q] = strings.Join(a, "\n\n")
	}
	return out
}

func transcriptText(transcript []exportMessage) string {
	var b strings.Builder
	for i, m := range transcript {
		if i > 0 {
			b.WriteByte('\n')
		}
		if m.Speaker == kv.SpeakerInterviewer {
			b.WriteString("Interviewer: ")
		} else {
			b.WriteString("Participant: ")
		}
		b.WriteString(m.Text)
	}
	return b.String()
}

func exportTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func exportInt(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

func exportString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
