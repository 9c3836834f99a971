package app

import (
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/moderator"
)

// studyStats is what a study's dashboard counts from its real interviews (never
// rehearsals): the funnel, where unfinished interviews stand, and interviews per day.
type studyStats struct {
	// The funnel. Opened: browsers that opened an invite page of the study while it was
	// live, each once (kv.FindLinkOpens; a link opened while the study could not take
	// interviews is not counted). Started: interviews begun (the participant pressed
	// Start). Answered: the participant said something (answered or skipped a question).
	Opened, Started, Answered, Completed int
	// Stops are the unfinished interviews by the scripted question each last reached,
	// in the order the study asks its questions.
	Stops []questionStop
	// Days are interviews started per UTC day, every day from the first to the last.
	Days []dayCount
}

// questionStop is one place unfinished interviews stand.
type questionStop struct {
	Question   string
	InProgress int // still open there
	Failed     int // ended there without completing
}

// dayCount is one day's interviews: started that day, and how many of those completed.
type dayCount struct {
	Day       time.Time // midnight UTC
	Started   int
	Completed int
}

// Where an unfinished interview stands when no scripted question names it.
const (
	stopBeforeFirst = "Before the first question"
	stopAfterLast   = "After the last question"
	stopUnknown     = "A question no longer in the design"
)

// countStudy counts ivs (a study's interviews). briefs holds the design of each
// version the interviews used; current is the study's brief now, whose questions
// order the stops (questions only older versions asked come after, in the order met).
func countStudy(ivs []kv.Interview, briefs map[int]kv.Brief, current kv.Brief) studyStats {
	var s studyStats
	stops := map[string]*questionStop{}
	order := append(append([]string{}, current.PreInterviewQuestions...), current.VerbatimQuestions...)
	days := map[time.Time]*dayCount{}
	for _, iv := range ivs {
		if iv.IsTest {
			continue
		}
		s.Started++
		if iv.DurationSeconds != nil || iv.Status == kv.InterviewCompleted {
			s.Answered++
		}
		day := iv.StartedAt.UTC().Truncate(24 * time.Hour)
		dc := days[day]
		if dc == nil {
			dc = &dayCount{Day: day}
			days[day] = dc
		}
		dc.Started++
		if iv.Status == kv.InterviewCompleted {
			s.Completed++
			dc.Completed++
			continue
		}
		at := stopOf(iv, briefs)
		st := stops[at]
		if st == nil {
			st = &questionStop{Question: at}
			stops[at] = st
		}
		if iv.Status == kv.InterviewFailed {
			st.Failed++
		} else {
			st.InProgress++
		}
	}
	// Stops in the study's order: before the first, each question, questions of older
	// designs, after the last, then anything unknown.
	seen := map[string]bool{}
	add := func(q string) {
		if st := stops[q]; st != nil && !seen[q] {
			seen[q] = true
			s.Stops = append(s.Stops, *st)
		}
	}
	add(stopBeforeFirst)
	for _, q := range order {
		add(q)
	}
	for _, iv := range ivs { // older designs' questions, in the order the interviews list them
		if !iv.IsTest && iv.Status != kv.InterviewCompleted {
			if q := stopOf(iv, briefs); q != stopAfterLast && q != stopUnknown {
				add(q)
			}
		}
	}
	add(stopAfterLast)
	add(stopUnknown)
	if len(days) > 0 {
		first, last := time.Time{}, time.Time{}
		for d := range days {
			if first.IsZero() || d.Before(first) {
				first = d
			}
			if d.After(last) {
				last = d
			}
		}
		for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
			if dc := days[d]; dc != nil {
				s.Days = append(s.Days, *dc)
			} else {
				s.Days = append(s.Days, dayCount{Day: d})
			}
		}
	}
	return s
}

// stopOf names the scripted question an unfinished interview last reached, from the
// position the interview keeps and the design it started with.
func stopOf(iv kv.Interview, briefs map[int]kv.Brief) string {
	if len(iv.Script) == 0 {
		return stopBeforeFirst
	}
	var pos moderator.Script // stored as its JSON (moderator's encodeScript)
	if err := json.Unmarshal(iv.Script, &pos); err != nil {
		return stopUnknown
	}
	switch pos.Phase {
	case "":
		return stopBeforeFirst
	case moderator.PhaseDone:
		return stopAfterLast
	}
	brief, ok := briefs[iv.DesignVersion]
	if !ok {
		return stopUnknown
	}
	if q := pos.Question(brief); q != "" {
		return q
	}
	return stopUnknown
}
