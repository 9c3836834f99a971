package app

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The findings page of a study: one version of the analysis of its completed live
// interviews. It runs the API's own operations (get_analysis, start_analysis,
// get_analysis_status), so the page refuses whatever the API refuses: export:read,
// live data only, a study that has been live. What no operation returns — the
// version list and the segment sizes a version counted — is read from kv under the
// same rules once get_analysis has allowed the read.

// FindingsQuery is what the findings page's address asks for.
type FindingsQuery struct {
	Version int    // 0: the latest
	Job     string // an analysis job to report on (after Run analysis)
	Segment string // the context key to compare themes by
}

// studyTabs is a study's own navigation, with the analysis tabs for a principal who
// reads interviews.
func studyTabs(p *pipeline.Principal, study kv.ID, active string) webui.StudyTabs {
	return webui.StudyTabs{ID: study.String(), Active: active, Analysis: p.Has(kv.ScopeExportRead)}
}

// findingsURL is the findings page's address watching job.
func findingsURL(study kv.ID, job string) string {
	u := "/app/studies/" + study.String() + "/findings"
	if job != "" {
		u += "?job=" + job
	}
	return u
}

// appStartAnalysis starts (or finds running) the study's analysis; it returns the
// job's id.
func (s *App) appStartAnalysis(ctx context.Context, p *pipeline.Principal, study kv.ID) (string, error) {
	job, err := Call[research.AnalysisJob](ctx, s, p, "start_analysis", &research.StudyIDInput{StudyID: study})
	return job.JobID, err
}

// appAnalysisStatus returns the analysis job's state when it is one of study's, and
// ENOTFOUND otherwise (another study's job is not this page's to show).
func (s *App) appAnalysisStatus(ctx context.Context, p *pipeline.Principal, study kv.ID, job string) (research.AnalysisStatus, error) {
	st, err := Call[research.AnalysisStatus](ctx, s, p, "get_analysis_status", &research.JobIDInput{JobID: job})
	if err != nil {
		return st, err
	}
	if st.StudyID != study.String() {
		return research.AnalysisStatus{}, kv.Errorf(kv.ENOTFOUND, "not_found", "Job not found.")
	}
	return st, nil
}

// openAnalysisView returns the study's analysis that is queued or running, however it
// was started, as get_analysis_status reports it; nil when there is none.
func (s *App) openAnalysisView(ctx context.Context, p *pipeline.Principal, study kv.ID) (*webui.AnalysisJobView, error) {
	j, ok, err := s.DB.FindOpenAnalysis(ctx, p.Partition, study)
	if err != nil || !ok {
		return nil, err
	}
	st, err := s.appAnalysisStatus(ctx, p, study, j.ID.String())
	if err != nil {
		if pipeline.ToAPIError(err).Status == 404 {
			return nil, nil // gone between the two reads
		}
		return nil, err
	}
	v := jobView(study, st)
	if spec, err := j.AnalysisSpec(); err == nil && spec.Trigger == kv.AnalysisOnInterview {
		v.Auto = true
	}
	return v, nil
}

func jobView(study kv.ID, st research.AnalysisStatus) *webui.AnalysisJobView {
	v := &webui.AnalysisJobView{ID: st.JobID, Status: st.Status}
	if st.Error != nil {
		v.Error = *st.Error
	}
	if st.Status == kv.AnalysisQueued || st.Status == kv.AnalysisRunning {
		v.Poll = "/app/studies/" + study.String() + "/findings/status?job=" + st.JobID
	}
	return v
}

// errorReason returns the reason code an error answers with ("analysis_not_found").
func errorReason(err error) string {
	if err == nil {
		return ""
	}
	return pipeline.ToAPIError(err).Code
}

// buildFindingsPage gathers the findings page: the explanation of why there are none,
// or the version asked for with the job's state beside it.
func (s *App) buildFindingsPage(ctx context.Context, p *pipeline.Principal, study kv.ID, q FindingsQuery) (webui.FindingsPage, error) {
	if err := s.appMay(p, "get_analysis", nil); err != nil {
		return webui.FindingsPage{}, err
	}
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.FindingsPage{}, err
	}
	page := webui.FindingsPage{Tabs: studyTabs(p, study, webui.TabFindings), StudyID: study.String(), StudyName: d.Name}
	switch {
	case p.Partition.Env != kv.EnvLive:
		page.TestEnv = true
		return page, nil
	case d.LaunchedAt == nil:
		page.NotLive = true
		return page, nil
	}
	page.CanRun = p.MayChangeResearch() // export:read, live data, a study that has been live: start_analysis's rules
	if q.Job != "" {
		st, err := s.appAnalysisStatus(ctx, p, study, q.Job)
		switch {
		case err == nil:
			page.Job = jobView(study, st)
		case pipeline.ToAPIError(err).Status != 404:
			return page, err
		} // a job that is gone or not this study's: the page simply shows no job
	}
	if page.Job == nil || page.Job.Poll == "" {
		// No job under way named: the study's own may have been started elsewhere (the
		// API, an agent, a completed interview), and is shown and followed the same way.
		open, err := s.openAnalysisView(ctx, p, study)
		if err != nil {
			return page, err
		}
		if open != nil {
			page.Job = open
		}
	}
	in := &research.GetAnalysisInput{StudyID: study}
	if q.Version > 0 {
		in.Version = &q.Version
	}
	a, err := Call[analysis.Analysis](ctx, s, p, "get_analysis", in)
	if errorReason(err) == "analysis_not_found" && q.Version == 0 {
		page.None = true
		return page, nil
	}
	if err != nil {
		return page, err
	}
	stored, err := s.DB.FindAnalysis(ctx, p.Partition, study, a.Version)
	if err != nil {
		return page, err
	}
	versions, err := s.DB.FindAnalysisVersions(ctx, p.Partition, study)
	if err != nil {
		return page, err
	}
	fillFindings(&page, a, stored, versions, q.Segment)
	return page, nil
}

// fillFindings puts version a of the findings on the page: stored is its record (the
// interviews it counted and those erased since), versions every version's number.
func fillFindings(page *webui.FindingsPage, a analysis.Analysis, stored kv.AnalysisVersion, versions []int, segment string) {
	page.Version, page.Engine, page.Generated = a.Version, a.Engine, StampOf(a.GeneratedAt)
	page.Interviews, page.Dropped, page.Erased = a.InterviewsIncluded, a.QuotesDropped, stored.Erased
	page.Summary = a.Summary
	latest := 0
	for _, v := range versions {
		latest = max(latest, v)
	}
	page.Latest = a.Version >= latest
	for i := len(versions) - 1; i >= 0; i-- {
		label := "Version " + strconv.Itoa(versions[i])
		if versions[i] == latest {
			label += " (latest)"
		}
		page.Versions = append(page.Versions, webui.Option{Value: strconv.Itoa(versions[i]), Label: label, Selected: versions[i] == a.Version})
	}
	for _, o := range a.Objectives {
		ov := webui.ObjectiveView{Objective: o.Objective, Covered: o.Coverage.Interviews, Of: o.Coverage.Of,
			Percent: percentOf(o.Coverage.Interviews, o.Coverage.Of), Gap: o.Gap}
		for _, f := range o.Findings {
			ov.Findings = append(ov.Findings, webui.FindingView{Statement: f.Statement, Support: quoteViews(f.Support), Contrary: quoteViews(f.Contrary)})
		}
		page.Objectives = append(page.Objectives, ov)
	}
	of := a.InterviewsIncluded
	page.ThemeChart = webui.BarChart{ID: "themes-chart", Title: "Themes by share of interviews",
		Desc: fmt.Sprintf("One bar per theme: the share of the %d interviews that show it, with its sentiment.", of)}
	for _, th := range a.Themes {
		share := th.Share
		if of > 0 {
			share = float64(th.InterviewCount) / float64(of)
		}
		tv := webui.ThemeView{Label: th.Label, Description: th.Description, Sentiment: sentimentWord(th.Sentiment),
			Count: th.InterviewCount, Of: of, Percent: int(math.Round(share * 100)), Quotes: quoteViews(th.Quotes)}
		page.Themes = append(page.Themes, tv)
		page.ThemeChart.Bars = append(page.ThemeChart.Bars, webui.Bar{Label: th.Label, Share: share, Kind: tv.Sentiment,
			Detail: fmt.Sprintf("%s · %d of %d %s (%d%%)", tv.Sentiment, th.InterviewCount, of, pipeline.Plural(of, "interview"), tv.Percent)})
	}
	fillSegments(page, a, stored, segment)
	for _, qs := range a.Questions {
		qv := webui.QuestionView{Question: qs.Question, Screener: qs.Kind == analysis.QuestionScreener, Answered: qs.Answered, Skipped: qs.Skipped}
		for _, g := range qs.Groups {
			qv.Groups = append(qv.Groups, webui.AnswerGroupView{Label: g.Label, Count: g.Count, Quotes: quoteViews(g.Quotes)})
		}
		page.Questions = append(page.Questions, qv)
	}
	for _, sg := range a.Suggestions {
		page.Suggestions = append(page.Suggestions, webui.SuggestionView{Text: sg.Text, Count: sg.InterviewCount, Quotes: quoteViews(sg.Quotes)})
	}
}

// segmentNone heads the column of interviews whose link carried no value for the key.
const segmentNone = "(not set)"

// fillSegments offers every context key the version's interviews carried and compares
// the themes across the values of the one asked for (the first key when none is).
func fillSegments(page *webui.FindingsPage, a analysis.Analysis, stored kv.AnalysisVersion, segment string) {
	keys := map[string]bool{}
	for _, src := range stored.Sources {
		for k := range src.Context {
			keys[k] = true
		}
	}
	for _, th := range a.Themes {
		for k := range th.Segments {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	if segment == "" {
		segment = sorted[0]
	}
	for _, k := range sorted {
		page.Segments = append(page.Segments, webui.Option{Value: k, Label: k, Selected: k == segment})
	}
	if !keys[segment] {
		page.SegmentNote = "No interview of this version carried the context key “" + segment + "”. Choose one from the list."
		return
	}
	if len(a.Themes) == 0 {
		page.SegmentNote = "There are no themes to compare."
		return
	}
	page.Segment = segmentTable(a, stored, segment)
}

// segmentTable counts, for each theme, its interviews by the value of key, with each
// value's share of the interviews carrying it. Interviews without the key make a last
// "(not set)" column when there are any.
func segmentTable(a analysis.Analysis, stored kv.AnalysisVersion, key string) *webui.SegmentTable {
	sizes := map[string]int{}
	unset := 0
	for _, src := range stored.Sources {
		if v, ok := src.Context[key]; ok {
			sizes[v]++
		} else {
			unset++
		}
	}
	for _, th := range a.Themes { // values a theme counted that the sources no longer name (an erased interview)
		for v := range th.Segments[key] {
			if _, ok := sizes[v]; !ok {
				sizes[v] = 0
			}
		}
	}
	values := make([]string, 0, len(sizes))
	for v := range sizes {
		values = append(values, v)
	}
	sort.Strings(values)
	t := &webui.SegmentTable{Key: key}
	for _, v := range values {
		t.Columns = append(t.Columns, webui.SegmentColumn{Value: v, N: sizes[v]})
	}
	if unset > 0 {
		t.Columns = append(t.Columns, webui.SegmentColumn{Value: segmentNone, N: unset})
	}
	for _, th := range a.Themes {
		row := webui.SegmentRow{Theme: th.Label, Sentiment: sentimentWord(th.Sentiment)}
		counted := 0
		for _, v := range values {
			n := th.Segments[key][v]
			counted += n
			row.Cells = append(row.Cells, webui.SegmentCell{Count: n, Percent: percentOf(n, sizes[v]), Known: sizes[v] > 0})
		}
		if unset > 0 {
			n := max(th.InterviewCount-counted, 0)
			row.Cells = append(row.Cells, webui.SegmentCell{Count: n, Percent: percentOf(n, unset), Known: true})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// quoteViews links each quote to its message in the transcript (ids m0, m1, ... on
// the transcript page).
func quoteViews(qs []analysis.Quote) []webui.QuoteView {
	out := make([]webui.QuoteView, 0, len(qs))
	for _, q := range qs {
		short := q.InterviewID
		if len(short) > 8 {
			short = short[:8]
		}
		out = append(out, webui.QuoteView{Text: q.Text,
			URL:   "/app/interviews/" + q.InterviewID + "#m" + strconv.Itoa(q.MessageIndex),
			Where: "Interview " + short + ", message " + strconv.Itoa(q.MessageIndex+1)})
	}
	return out
}

// sentimentWord keeps a theme's sentiment to the known words (it names a CSS class).
func sentimentWord(s string) string {
	switch s {
	case analysis.SentimentPositive, analysis.SentimentNegative, analysis.SentimentMixed:
		return s
	}
	return analysis.SentimentNeutral
}

// percentOf returns n of total as a whole percentage; 0 of nothing is 0.
func percentOf(n, total int) int {
	if total <= 0 {
		return 0
	}
	return int(math.Round(float64(n) * 100 / float64(total)))
}
