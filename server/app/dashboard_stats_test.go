package app

import (
	"reflect"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/webui"
)

// TestCountStudy: the dashboard's numbers from a study's interviews. Rehearsals never
// count; the funnel counts starts, interviews with an answer and completions; each
// unfinished interview stands at the question its script names in its own design
// version, in the study's question order; days run from the first to the last with
// empty days kept.
func TestCountStudy(t *testing.T) {
	at := func(s string) []byte {
		t.Helper()
		var pos moderator.Script
		switch s {
		case "":
			return nil
		case "start":
		case "done":
			pos.Phase = moderator.PhaseDone
		default:
			if err := json.Unmarshal([]byte(s), &pos); err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal(pos)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v1 := kv.Brief{PreInterviewQuestions: []string{"Team size?"}, VerbatimQuestions: []string{"Old question?", "How do you plan?"}}
	v2 := kv.Brief{PreInterviewQuestions: []string{"Team size?"}, VerbatimQuestions: []string{"How do you plan?", "What breaks?"}}
	briefs := map[int]kv.Brief{1: v1, 2: v2}
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 30, 0, 0, time.UTC) }
	secs := 40
	iv := func(status string, started time.Time, version int, script string, answered, rehearsal bool) kv.Interview {
		out := kv.Interview{Status: status, StartedAt: started, DesignVersion: version, Script: at(script), IsTest: rehearsal}
		if answered {
			out.DurationSeconds = &secs
		}
		return out
	}
	ivs := []kv.Interview{
		iv(kv.InterviewCompleted, day(20, 9), 2, "done", true, false),
		iv(kv.InterviewCompleted, day(22, 23), 2, "done", true, false),
		iv(kv.InterviewInProgress, day(22, 1), 2, `{"phase":"verbatim","index":1}`, true, false),  // What breaks?
		iv(kv.InterviewFailed, day(22, 2), 2, `{"phase":"verbatim","index":1}`, true, false),      // What breaks?
		iv(kv.InterviewInProgress, day(20, 3), 1, `{"phase":"verbatim","index":0}`, true, false),  // Old question? (v1 only)
		iv(kv.InterviewInProgress, day(20, 4), 2, `{"phase":"screener","index":0}`, false, false), // Team size?
		iv(kv.InterviewInProgress, day(20, 5), 2, "", false, false),                               // before anything
		iv(kv.InterviewFailed, day(20, 6), 2, "done", true, false),                                // ended after the last
		iv(kv.InterviewInProgress, day(20, 7), 9, `{"phase":"verbatim","index":0}`, true, false),  // a version the store lacks
		iv(kv.InterviewInProgress, day(20, 8), 2, `{"phase":"verbatim","index":7}`, true, false),  // outside the brief
		iv(kv.InterviewCompleted, day(25, 8), 2, "done", true, true),                              // a rehearsal
	}
	got := countStudy(ivs, briefs, v2)
	if got.Started != 10 || got.Answered != 8 || got.Completed != 2 {
		t.Fatalf("funnel %d → %d → %d, want 10 → 8 → 2", got.Started, got.Answered, got.Completed)
	}
	wantStops := []questionStop{
		{Question: stopBeforeFirst, InProgress: 1},
		{Question: "Team size?", InProgress: 1},
		{Question: "What breaks?", InProgress: 1, Failed: 1},
		{Question: "Old question?", InProgress: 1},
		{Question: stopAfterLast, Failed: 1},
		{Question: stopUnknown, InProgress: 2},
	}
	if !reflect.DeepEqual(got.Stops, wantStops) {
		t.Fatalf("stops\n got %+v\nwant %+v", got.Stops, wantStops)
	}
	wantDays := []dayCount{
		{Day: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Started: 7, Completed: 1},
		{Day: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{Day: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), Started: 3, Completed: 1},
	}
	if !reflect.DeepEqual(got.Days, wantDays) {
		t.Fatalf("days\n got %+v\nwant %+v", got.Days, wantDays)
	}

	empty := countStudy(nil, briefs, v2)
	if empty.Started != 0 || empty.Stops != nil || empty.Days != nil {
		t.Fatalf("no interviews: %+v", empty)
	}
}

// TestDashboardDaysKeepTheMostRecent: a study running longer than the chart shows
// keeps its latest days, and says so.
func TestDashboardDaysKeepTheMostRecent(t *testing.T) {
	var s studyStats
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range dashboardDays + 5 {
		s.Days = append(s.Days, dayCount{Day: start.AddDate(0, 0, i), Started: i})
	}
	var page webui.DashboardPage
	fillDays(&page, s)
	if !page.DaysCut || len(page.Days) != dashboardDays || page.Days[0].Started != 5 || page.Days[dashboardDays-1].Day != "2026-03-06" {
		t.Fatalf("cut %v, %d days from %+v to %+v", page.DaysCut, len(page.Days), page.Days[0], page.Days[len(page.Days)-1])
	}
}
