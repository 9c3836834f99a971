package webui

import (
	"regexp"
	"strings"
	"testing"
)

// TestRenderAnalysisPages renders the findings and the dashboard with typical data:
// what a researcher must see (quotes linked to their messages, the gap badge, sentiment
// in words, a table beside every chart), the explanations instead of findings, and
// that user text is escaped and nothing is inline.
func TestRenderAnalysisPages(t *testing.T) {
	u := mustUI(t)
	owner := AppShell{SignedIn: true, OrgName: "Acme", Env: "live", Role: "owner", Credits: 3, CSRF: "tok123", Nav: NavStudies}
	at := Stamp{ISO: "2026-11-23T18:00:00Z", Text: "23 Nov 2026, 18:00 UTC"}
	q := QuoteView{Text: "The <export> is slow", URL: "/app/interviews/i1#m3", Where: "Interview i1, message 4"}
	tabs := StudyTabs{ID: "s1", Active: TabFindings, Analysis: true}
	full := FindingsPage{Tabs: tabs, StudyID: "s1", StudyName: "Rotas <b>", CanRun: true, Version: 2, Latest: true,
		Versions: []Option{{"2", "Version 2 (latest)", true}, {"1", "Version 1", false}}, Engine: "builtin", Generated: at, Interviews: 5, Dropped: 1,
		Summary: "Five interviews <analysed>.",
		Objectives: []ObjectiveView{
			{Objective: "Learn why exports fail", Covered: 4, Of: 5, Percent: 80, Findings: []FindingView{{Statement: "Exports are slow", Support: []QuoteView{q}, Contrary: []QuoteView{{Text: "Fast enough", URL: "/app/interviews/i2#m1", Where: "Interview i2, message 2"}}}}},
			{Objective: "Pricing", Covered: 1, Of: 5, Percent: 20, Gap: true},
		},
		Themes:      []ThemeView{{Label: "Slow exports", Sentiment: "negative", Count: 3, Of: 5, Percent: 60, Quotes: []QuoteView{q}}},
		ThemeChart:  BarChart{ID: "themes-chart", Title: "Themes", Desc: "Share per theme", Bars: []Bar{{Label: "Slow exports", Detail: "negative · 3 of 5 interviews (60%)", Share: .6, Kind: "negative"}}},
		Segments:    []Option{{"plan", "plan", true}},
		Segment:     &SegmentTable{Key: "plan", Columns: []SegmentColumn{{"free", 3}, {"pro", 2}}, Rows: []SegmentRow{{Theme: "Slow exports", Sentiment: "negative", Cells: []SegmentCell{{2, 67, true}, {1, 50, true}}}}},
		Questions:   []QuestionView{{Question: "How do you export?", Answered: 4, Skipped: 1, Groups: []AnswerGroupView{{Label: "By hand", Count: 2, Quotes: []QuoteView{q}}}}},
		Suggestions: []SuggestionView{{Text: "Add a schedule", Count: 2, Quotes: []QuoteView{q}}},
		Job:         &AnalysisJobView{ID: "j9", Status: "failed", Error: "The analysis did not complete in time."},
	}
	running := full
	running.Job = &AnalysisJobView{ID: "j9", Status: "running", Poll: "/app/studies/s1/findings/status?job=j9"}
	auto := FindingsPage{Tabs: tabs, StudyID: "s1", StudyName: "Rotas", None: true, CanRun: true,
		Job: &AnalysisJobView{ID: "j8", Status: "queued", Poll: "/app/studies/s1/findings/status?job=j8", Auto: true}}
	dash := DashboardPage{Tabs: StudyTabs{ID: "s1", Active: TabDashboard, Analysis: true}, StudyID: "s1", StudyName: "Rotas", Total: 4,
		Funnel:      []FunnelStep{{"Link opened", 8, 100}, {"Started", 4, 50}, {"Answered a question", 3, 38}, {"Completed", 2, 25}},
		FunnelBase:  "link opened",
		FunnelChart: BarChart{ID: "funnel-chart", Title: "Funnel", Desc: "d", Bars: []Bar{{Label: "Started", Detail: "4", Share: 1}}},
		DropOff:     []DropOffRow{{Question: "Why <now>?", InProgress: 1, Failed: 1, Total: 2}}, DropOffChart: BarChart{ID: "drop-chart", Title: "Stops", Bars: []Bar{{Label: "Why", Share: 1}}},
		Skips: []SkipRow{{Question: "How?", Answered: 1, Skipped: 1, Percent: 50}}, SkipsChart: BarChart{ID: "skips-chart", Title: "Skips", Bars: []Bar{{Label: "How?", Share: .5}}}, SkipsVersion: 3,
		Days: []DayRow{{Day: "2026-11-21", Label: "21 Nov 2026", Started: 4, Completed: 2}}, DaysChart: ColumnChart{ID: "days-chart", Title: "Per day", TotalName: "Started", PartName: "Completed", Columns: []Column{{"21 Nov", 4, 2}}}}
	cases := []struct {
		name        string
		page        string
		data        any
		want, never []string
	}{
		{"OK_Findings", PageFindings, full, []string{
			`href="/app/studies/s1/findings" aria-current="page"`, `href="/app/studies/s1/dashboard"`,
			"Five interviews &lt;analysed&gt;.", `href="/app/interviews/i1#m3"`, "The &lt;export&gt; is slow", "Supporting", "Contrary", "Fast enough",
			`class="badge badge-gap">Gap<`, "Thin evidence", "4 of 5 interviews (80%)",
			`role="img"`, `aria-labelledby="themes-chart-t themes-chart-d"`, `class="sentiment sentiment-negative">negative<`,
			`<select id="segment" name="segment"><option value="plan" selected>plan</option>`, "free <span class=\"muted small\">(3 interviews)", "2 <span class=\"muted small\">(67%)",
			"How do you export?", "4 answered · 1 skipped", "By hand", "Add a schedule",
			`action="/app/studies/s1/findings"`, `name="csrf" value="tok123"`, ">Refresh<", `<option value="1">Version 1</option>`,
			"Engine <span class=\"mono\">builtin</span>", "5 interviews included", "1 quote dropped",
			"The analysis failed: The analysis did not complete in time.", "previous version", `role="alert"`,
		}, []string{"Run analysis", "spinner"}},
		{"OK_FindingsRunning", PageFindings, running, []string{`data-poll="/app/studies/s1/findings/status?job=j9"`, "An analysis is running…", "spinner", "Check again",
			"The findings below are version 2 until it finishes."}, []string{"The analysis failed", "started automatically"}},
		{"OK_FindingsStartedByAnInterview", PageFindings, auto, []string{`data-poll="/app/studies/s1/findings/status?job=j8"`, "An analysis is queued: it starts shortly…",
			"It was started automatically after a live interview completed.", "No analysis yet"}, []string{"The findings below are version"}},
		{"OK_FindingsNone", PageFindings, FindingsPage{Tabs: tabs, StudyID: "s1", StudyName: "Rotas", None: true, CanRun: true},
			[]string{"No analysis yet", ">Run analysis<"}, []string{"Summary", "Refresh", "Engine"}},
		{"OK_FindingsNotLive", PageFindings, FindingsPage{Tabs: tabs, StudyID: "s1", StudyName: "Rotas", NotLive: true},
			[]string{"never been live", "no analysis in test mode"}, []string{"Run analysis", "Refresh", `action="/app/studies/s1/findings"`}},
		{"OK_FindingsTestEnv", PageFindings, FindingsPage{Tabs: tabs, StudyID: "s1", StudyName: "Rotas", TestEnv: true},
			[]string{"No analysis of test data"}, []string{"Run analysis"}},
		{"OK_Dashboard", PageDashboard, dash, []string{
			`href="/app/studies/s1/dashboard" aria-current="page"`, "Funnel as a table", "<details",
			`<th scope="col">Of link opened</th>`, `<th scope="row">Link opened</th><td>8</td><td>100%</td>`, `<th scope="row">Answered a question</th><td>3</td><td>38%</td>`,
			"Why &lt;now&gt;?", "version 3", "How?", "50%", `<time datetime="2026-11-21">21 Nov 2026</time>`, `aria-labelledby="days-chart-t days-chart-d"`,
		}, []string{"Run one on the Findings page", "An analysis of this study is running", "Fewer opens than starts"}},
		{"OK_DashboardAnalysisRunning", PageDashboard, DashboardPage{Tabs: dash.Tabs, StudyID: "s1", StudyName: "Rotas", SkipsNone: true, AnalysisRunning: true,
			FunnelBase: "started", OpenedShort: true},
			[]string{"An analysis of this study is running", `<a href="/app/studies/s1/findings">Follow it on the Findings page</a>`, "Fewer opens than starts", `<th scope="col">Of started</th>`},
			[]string{"Run one on the Findings page"}},
		{"OK_DashboardEmpty", PageDashboard, DashboardPage{Tabs: dash.Tabs, StudyID: "s1", StudyName: "Rotas", SkipsNone: true},
			[]string{"Every interview so far has completed", "No interviews yet", "Run one on the Findings page"}, []string{`<svg class="chart chart-columns"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html := renderApp(t, u, c.page, owner, c.data)
			for _, w := range c.want {
				if !strings.Contains(html, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, n := range c.never {
				if strings.Contains(html, n) {
					t.Errorf("page shows %q", n)
				}
			}
			if strings.Contains(html, "ZgotmplZ") {
				t.Errorf("a value was refused by html/template (ZgotmplZ)")
			}
			if strings.Contains(html, "<script>") || strings.Contains(html, " style=") || strings.Contains(html, "onclick") {
				t.Errorf("inline script or style")
			}
			if t.Failed() {
				t.Log(html)
			}
		})
	}
}

// TestBarChartSVG: bars are as long as their share, labelled in words, named for
// assistive technology, and every value is escaped.
func TestBarChartSVG(t *testing.T) {
	evil := `"><script>alert('x')</script>&`
	c := BarChart{ID: "c1", Title: "Themes " + evil, Desc: "desc", Bars: []Bar{
		{Label: evil, Detail: "negative · 3 of 5 (60%)", Share: .6, Kind: "negative"},
		{Label: strings.Repeat("long ", 30), Detail: "positive", Share: 0.001, Kind: "positive"},
		{Label: "none", Detail: "0 of 5", Share: 0, Kind: `bad" onload="x`},
		{Label: "over", Detail: "all", Share: 7},
	}}
	out := string(c.SVG())
	for _, w := range []string{
		`role="img"`, `aria-labelledby="c1-t c1-d"`, `<title id="c1-t">Themes &#34;&gt;&lt;script&gt;`, `<desc id="c1-d">desc</desc>`,
		`class="bar bar-negative" x="0" y="24" width="60.00%"`, "negative · 3 of 5 (60%)",
		`width="0.60%"`,   // a tiny share still shows
		`width="100.00%"`, // a share over 1 is cut at the full width
		"…</text>",        // a long label is shortened
	} {
		if !strings.Contains(out, w) {
			t.Errorf("chart lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "<script>") || strings.Contains(out, "'x'") || strings.Contains(out, " style=") || strings.Contains(out, `onload="x`) {
		t.Errorf("unescaped or inline:\n%s", out)
	}
	// One filled bar per non-zero share, and a track per row.
	if got := strings.Count(out, `class="bar bar-`); got != 3 {
		t.Errorf("%d bars drawn, want 3 (zero shares draw none)", got)
	}
	if got := strings.Count(out, `class="chart-track"`); got != 4 {
		t.Errorf("%d tracks, want 4", got)
	}
	if (BarChart{ID: "e"}).SVG() != "" {
		t.Error("an empty chart draws something")
	}
}

// TestColumnChartSVG: columns scale to the busiest day, the part sits inside its
// total, the legend names both colours in words, and each column says its numbers.
func TestColumnChartSVG(t *testing.T) {
	c := ColumnChart{ID: "d", Title: "Per day", Desc: "x", TotalName: "Started", PartName: "Completed", TotalKind: "muted", PartKind: "accent",
		Columns: []Column{{"20 Nov", 4, 2}, {"21 Nov", 0, 0}, {"22 Nov <b>", 2, 2}}}
	out := string(c.SVG())
	heights := regexp.MustCompile(`class="bar bar-(muted|accent)" x="[0-9.]+%" y="[0-9]+" width="[0-9.]+%" height="([0-9]+)"`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, h := range heights {
		got = append(got, h[1]+":"+h[2])
	}
	// 4 of 4 is the full plot height, 2 of 4 half of it; the empty day draws nothing.
	want := []string{"muted:150", "accent:75", "muted:75", "accent:75"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("bars %v, want %v\n%s", got, want, out)
	}
	for _, w := range []string{">Started</text>", ">Completed</text>", "<title>20 Nov: 4 started, 2 completed</title>", "22 Nov &lt;b&gt;", "Most in a day: 4", `text-anchor="end"`} {
		if !strings.Contains(out, w) {
			t.Errorf("chart lacks %q", w)
		}
	}
	if (ColumnChart{}).SVG() != "" {
		t.Error("an empty chart draws something")
	}
}
