package app

import (
	"context"
	"fmt"
	"strconv"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The dashboard of a study: how its interviews went. It reads interviews, so it needs
// export:read as the interviews pages do; the interviews and their design versions
// come from kv (no operation returns an interview's position in its script), the
// skipped questions from the latest analysis through get_analysis.

// dashboardDays is how many of the most recent days the per-day chart shows.
const dashboardDays = 60

// dashboardPage is the largest page of interviews read at a time.
const dashboardPage = 200

// findStudyInterviews returns every real (not rehearsal) interview of study, under
// export:read as list_interviews.
func (s *App) findStudyInterviews(ctx context.Context, p *pipeline.Principal, study kv.ID) ([]kv.Interview, error) {
	if err := s.appMay(p, "list_interviews", nil); err != nil {
		return nil, err
	}
	rehearsals := false
	f := kv.InterviewFilter{Partition: p.Partition, StudyID: &study, IsTest: &rehearsals, Limit: dashboardPage}
	var out []kv.Interview
	for {
		page, err := s.DB.FindInterviews(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out, nil
		}
		f.Cursor = page.Next
	}
}

func (s *App) buildDashboardPage(ctx context.Context, p *pipeline.Principal, study kv.ID) (webui.DashboardPage, error) {
	if err := s.appMay(p, "list_interviews", nil); err != nil {
		return webui.DashboardPage{}, err
	}
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.DashboardPage{}, err
	}
	ivs, err := s.findStudyInterviews(ctx, p, study)
	if err != nil {
		return webui.DashboardPage{}, err
	}
	versions, err := s.findDesignVersions(ctx, p, study)
	if err != nil {
		return webui.DashboardPage{}, err
	}
	briefs := make(map[int]kv.Brief, len(versions))
	for _, v := range versions {
		briefs[v.Version] = v.Brief
	}
	var current kv.Brief
	if d.Brief != nil {
		current = *d.Brief
	}
	stats := countStudy(ivs, briefs, current)
	if stats.Opened, err = s.DB.FindLinkOpens(ctx, p.Partition, study); err != nil {
		return webui.DashboardPage{}, err
	}
	page := webui.DashboardPage{Tabs: studyTabs(p, study, webui.TabDashboard), StudyID: study.String(), StudyName: d.Name, Total: stats.Started}
	fillFunnel(&page, stats)
	fillStops(&page, stats)
	fillDays(&page, stats)

	switch {
	case p.Partition.Env != kv.EnvLive:
		page.TestEnv = true
	case d.LaunchedAt == nil:
		page.NotLive = true
	default:
		_, open, err := s.DB.FindOpenAnalysis(ctx, p.Partition, study)
		if err != nil {
			return page, err
		}
		page.AnalysisRunning = open
		a, err := Call[analysis.Analysis](ctx, s, p, "get_analysis", &research.GetAnalysisInput{StudyID: study})
		switch {
		case errorReason(err) == "analysis_not_found":
			page.SkipsNone = true
		case err != nil:
			return page, err
		default:
			fillSkips(&page, a)
		}
	}
	return page, nil
}

// fillFunnel draws the funnel from link opened to completed. Its shares are of the
// opens, unless fewer opens than starts were counted (interviews started before opens
// were counted, or through the participant API without the invite page): then of the
// starts, so no share passes 100%.
func fillFunnel(page *webui.DashboardPage, s studyStats) {
	type step struct {
		label, unit string
		count       int
	}
	steps := []step{
		{"Link opened", "browser", s.Opened},
		{"Started", "interview", s.Started},
		{"Answered a question", "interview", s.Answered},
		{"Completed", "interview", s.Completed},
	}
	base := s.Opened
	page.FunnelBase = "link opened"
	if s.Opened < s.Started {
		base, page.FunnelBase, page.OpenedShort = s.Started, "started", true
	}
	page.FunnelChart = webui.BarChart{ID: "funnel-chart", Title: "Funnel",
		Desc: fmt.Sprintf("%d opened the invite link, %d started an interview, %d answered a question, %d completed.", s.Opened, s.Started, s.Answered, s.Completed)}
	page.Funnel = nil
	for _, st := range steps {
		pct := percentOf(st.count, base)
		page.Funnel = append(page.Funnel, webui.FunnelStep{Label: st.label, Count: st.count, Percent: pct})
		page.FunnelChart.Bars = append(page.FunnelChart.Bars, webui.Bar{Label: st.label, Kind: "accent", Share: share(st.count, base),
			Detail: fmt.Sprintf("%d %s (%d%% of %s)", st.count, pipeline.Plural(st.count, st.unit), pct, page.FunnelBase)})
	}
}

func fillStops(page *webui.DashboardPage, s studyStats) {
	most := 0
	for _, st := range s.Stops {
		most = max(most, st.InProgress+st.Failed)
		page.Unfinished += st.InProgress + st.Failed
	}
	page.DropOffChart = webui.BarChart{ID: "drop-chart", Title: "Where participants stop",
		Desc: fmt.Sprintf("%d unfinished %s, by the scripted question each last reached.", page.Unfinished, pipeline.Plural(page.Unfinished, "interview"))}
	for _, st := range s.Stops {
		total := st.InProgress + st.Failed
		page.DropOff = append(page.DropOff, webui.DropOffRow{Question: st.Question, InProgress: st.InProgress, Failed: st.Failed, Total: total})
		page.DropOffChart.Bars = append(page.DropOffChart.Bars, webui.Bar{Label: st.Question, Kind: "warn", Share: share(total, most),
			Detail: fmt.Sprintf("%d stopped here: %d still in progress, %d failed", total, st.InProgress, st.Failed)})
	}
}

func fillSkips(page *webui.DashboardPage, a analysis.Analysis) {
	page.SkipsVersion = a.Version
	page.SkipsChart = webui.BarChart{ID: "skips-chart", Title: "Skipped questions",
		Desc: fmt.Sprintf("For each scripted question, the share of the %d analysed interviews that skipped it.", a.InterviewsIncluded)}
	for _, q := range a.Questions {
		asked := q.Answered + q.Skipped
		row := webui.SkipRow{Question: q.Question, Answered: q.Answered, Skipped: q.Skipped, Percent: percentOf(q.Skipped, asked)}
		page.Skips = append(page.Skips, row)
		page.SkipsChart.Bars = append(page.SkipsChart.Bars, webui.Bar{Label: q.Question, Kind: "warn", Share: share(q.Skipped, asked),
			Detail: fmt.Sprintf("%d of %d skipped (%d%%)", q.Skipped, asked, row.Percent)})
	}
}

func fillDays(page *webui.DashboardPage, s studyStats) {
	days := s.Days
	if len(days) > dashboardDays {
		days, page.DaysCut = days[len(days)-dashboardDays:], true
	}
	started, completed := 0, 0
	page.DaysChart = webui.ColumnChart{ID: "days-chart", Title: "Interviews per day",
		TotalName: "Started", PartName: "Completed", TotalKind: "muted", PartKind: "accent"}
	for _, d := range days {
		started += d.Started
		completed += d.Completed
		page.Days = append(page.Days, webui.DayRow{Day: d.Day.Format("2006-01-02"), Label: d.Day.Format("2 Jan 2006"), Started: d.Started, Completed: d.Completed})
		page.DaysChart.Columns = append(page.DaysChart.Columns, webui.Column{Label: d.Day.Format("2 Jan"), Total: d.Started, Part: d.Completed})
	}
	if len(days) > 0 {
		page.DaysChart.Desc = "Over " + strconv.Itoa(len(days)) + " " + pipeline.Plural(len(days), "day") + " from " + days[0].Day.Format("2 Jan 2006") +
			": " + strconv.Itoa(started) + " interviews started, " + strconv.Itoa(completed) + " of them completed."
	}
}

// share is n of total as a fraction; 0 of nothing is 0.
func share(n, total int) float64 {
	if total <= 0 {
		return 0
	}
	return float64(n) / float64(total)
}
