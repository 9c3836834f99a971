package moderator

import (
	"interviewd/kv"
)

// What a participant is told about the length of an interview: how far along they are
// and how long the whole is likely to take. Both count the scripted questions this
// participant will actually be asked (screener questions the link's context answers are
// left out); follow-ups never count, since how many come depends on the answers.

// Realistic times per answer for the welcome's estimate, typed on a phone: a screener
// question is answered in a few words; a verbatim question takes a considered answer
// and usually one follow-up.
const (
	plannedScreenerSeconds = 30
	plannedVerbatimSeconds = 100
)

// Progress is where an interview stands in its scripted questions.
type Progress struct {
	Question int // 1-based: the scripted question being asked now (or followed up)
	Total    int // the scripted questions this interview asks
}

// plannedQuestions returns the positions of the scripted questions an interview with
// these facts asks, in order.
func plannedQuestions(brief kv.Brief, facts map[string]string) []Script {
	var out []Script
	for s := (Script{}).following(brief, facts); s.Phase != PhaseDone; s = s.following(brief, facts) {
		out = append(out, s)
	}
	return out
}

// InterviewProgress returns where the interview saved at script stands, and false when
// it is not at a scripted question (not started, done, or a position it cannot read).
func InterviewProgress(brief kv.Brief, facts map[string]string, script []byte) (Progress, bool) {
	if len(script) == 0 {
		return Progress{}, false
	}
	s, err := decodeScript(script)
	if err != nil {
		return Progress{}, false
	}
	if s.Phase != PhaseScreener && s.Phase != PhaseVerbatim {
		return Progress{}, false
	}
	// Counted as plannedQuestions lists them, without the list: this runs every turn.
	at, total := 0, 0
	for p := (Script{}).following(brief, facts); p.Phase != PhaseDone; p = p.following(brief, facts) {
		total++
		if p.Phase == s.Phase && p.Index == s.Index {
			at = total
		}
	}
	if at == 0 {
		return Progress{}, false
	}
	return Progress{Question: at, Total: total}, true
}

// PlannedLength returns how many scripted questions an interview with these facts asks
// and about how many minutes it takes (at least 1 when there is a question): the
// questions times a realistic time per answer, rounded up to a whole minute.
func PlannedLength(brief kv.Brief, facts map[string]string) (questions, minutes int) {
	secs := 0
	planned := plannedQuestions(brief, facts)
	for _, p := range planned {
		if p.Phase == PhaseScreener {
			secs += plannedScreenerSeconds
		} else {
			secs += plannedVerbatimSeconds
		}
	}
	return len(planned), (secs + 59) / 60
}

// ScriptTurns returns the most turns a rehearsal of brief can take, with the most
// follow-ups the script allows any engine: the greeting with the first scripted
// question, each further scripted question, up to scriptMaxProbes follow-ups after each
// verbatim question, then the closing on a turn of its own. A simulation given this
// many turns reaches every scripted question whatever its engine does.
func ScriptTurns(brief kv.Brief) int {
	turns := 1 // the closing
	for _, p := range plannedQuestions(brief, nil) {
		turns++
		if p.Phase == PhaseVerbatim {
			turns += scriptMaxProbes
		}
	}
	return turns
}

// Unasked returns how many of the scripted questions an interview with these facts
// asks come after position s (whose own question has been asked), and how many it asks
// in all: what a run stopped at s did not reach.
func (s Script) Unasked(brief kv.Brief, facts map[string]string) (left, total int) {
	rank := func(p Script) int {
		switch p.Phase {
		case "":
			return 0
		case PhaseScreener:
			return 1
		case PhaseVerbatim:
			return 2
		}
		return 3
	}
	for _, p := range plannedQuestions(brief, facts) {
		total++
		if rank(p) > rank(s) || (p.Phase == s.Phase && p.Index > s.Index) {
			left++
		}
	}
	return left, total
}
