package analysis

import (
	"sort"
	"strings"
)

// Researcher codes: the tags researchers put on spans of participant messages, read
// beside what an engine finds. An engine does not decide them, so no engine computes
// them: ResearcherCodes lays them out from the input after the engine has run, the
// same for every engine. Like any quote, a coded span must be an exact span of the
// (redacted) participant message it names, or it is not quoted.

// Code is one of the study's tags and the spans annotated with it.
type Code struct {
	ID    string
	Name  string
	Spans []CodedSpan
}

// CodedSpan is one annotated span: the message it is in, its text and the note on it,
// redacted as the messages are.
type CodedSpan struct {
	InterviewID  string
	MessageIndex int
	Start        int // the span's first character in the stored message: its order
	Text         string
	Note         string
}

// ResearcherCodes returns the input's codes as the analysis reports them, in the
// order of in.Codes: the interviews (of those included) whose participants' words
// carry each code, their share and segments, and the spans as quotes, by interview
// (in input order), message and position. A span of an interview the analysis does not
// include, or one that is not an exact span of its participant message, is left out.
// It returns nil when the input has no codes.
func ResearcherCodes(in Input) []ResearcherCode {
	if len(in.Codes) == 0 {
		return nil
	}
	order := make(map[string]int, len(in.Interviews))
	for i, iv := range in.Interviews {
		order[iv.ID] = i
	}
	out := make([]ResearcherCode, 0, len(in.Codes))
	for _, c := range in.Codes {
		spans := make([]CodedSpan, 0, len(c.Spans))
		for _, s := range c.Spans {
			i, ok := order[s.InterviewID]
			if !ok || s.MessageIndex < 0 || s.MessageIndex >= len(in.Interviews[i].Messages) {
				continue
			}
			m := in.Interviews[i].Messages[s.MessageIndex]
			if m.Speaker != SpeakerParticipant || s.Text == "" || !strings.Contains(m.Text, s.Text) {
				continue
			}
			spans = append(spans, s)
		}
		sort.SliceStable(spans, func(a, b int) bool {
			x, y := spans[a], spans[b]
			if x.InterviewID != y.InterviewID {
				return order[x.InterviewID] < order[y.InterviewID]
			}
			if x.MessageIndex != y.MessageIndex {
				return x.MessageIndex < y.MessageIndex
			}
			return x.Start < y.Start
		})
		rc := ResearcherCode{ID: c.ID, Name: c.Name, Quotes: make([]CodedQuote, len(spans)), Segments: map[string]map[string]int{}}
		seen := map[string]bool{}
		for j, s := range spans {
			rc.Quotes[j] = CodedQuote{InterviewID: s.InterviewID, MessageIndex: s.MessageIndex, Text: s.Text, Note: s.Note}
			if seen[s.InterviewID] {
				continue
			}
			seen[s.InterviewID] = true
			for k, v := range in.Interviews[order[s.InterviewID]].Context {
				if rc.Segments[k] == nil {
					rc.Segments[k] = map[string]int{}
				}
				rc.Segments[k][v]++
			}
		}
		rc.InterviewCount = len(seen)
		rc.Share = share(rc.InterviewCount, len(in.Interviews))
		out = append(out, rc)
	}
	return out
}
