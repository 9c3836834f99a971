package participant

import (
	"interviewd/kv"
	"interviewd/moderator"
)

// ParticipantProgress is where an interview stands in its scripted questions, for the
// page's "Question 3 of 8": screener and verbatim questions count, follow-ups do not,
// and screener questions the link's context answers are not asked, so not counted.
type ParticipantProgress struct {
	Question int `json:"question"` // 1-based: the scripted question being asked now
	Total    int `json:"total"`    // the scripted questions this interview asks
}

// participantProgress returns iv's progress through brief, the design it started with, or nil
// when it is not in progress at a scripted question.
func participantProgress(brief kv.Brief, iv kv.Interview) *ParticipantProgress {
	if iv.Status != kv.InterviewInProgress {
		return nil
	}
	p, ok := moderator.InterviewProgress(brief, iv.EntryAttributes, iv.Script)
	if !ok {
		return nil
	}
	return &ParticipantProgress{Question: p.Question, Total: p.Total}
}
