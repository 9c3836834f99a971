package webui

// The analysis pages of a study: its findings (one version of the analysis of its
// completed live interviews) and its dashboard (how interviews went: the funnel, where
// participants stop, skipped questions, interviews per day). Like every research page,
// their data is plain values filled in by the server; the charts are SVG built here.

// Analysis page names for RenderApp.
const (
	PageFindings  = "app_study_findings"
	PageDashboard = "app_study_dashboard"
)

// Study tabs: StudyTabs.Active names the one shown.
const (
	TabStudy     = "study"
	TabFindings  = "findings"
	TabDashboard = "dashboard"
)

// StudyTabs is a study's own navigation: its page, its findings and its dashboard
// (the last two only for a role that reads interviews).
type StudyTabs struct {
	ID       string
	Active   string // Tab*
	Analysis bool   // may read findings and the dashboard
}

// QuoteView is a participant's words with the way to where they were said: the
// transcript, scrolled to and highlighting that message.
type QuoteView struct {
	Text string
	URL  string // "/app/interviews/ID#m7"
	// Where names the source for a screen reader and the eye: "Interview 0193ab12, message 8".
	Where string
}

// FindingView is one statement with its quotes for and against, side by side.
type FindingView struct {
	Statement string
	Support   []QuoteView
	Contrary  []QuoteView
}

// ObjectiveView is what the interviews said about one learning objective.
type ObjectiveView struct {
	Objective string
	Findings  []FindingView
	Covered   int // interviews with evidence
	Of        int // interviews included
	Percent   int
	Gap       bool
}

// ThemeView is one theme with its quotes.
type ThemeView struct {
	Label       string
	Description string
	Sentiment   string // positive, negative, mixed, neutral
	Count       int
	Of          int
	Percent     int
	Quotes      []QuoteView
}

// SegmentColumn is one value of the chosen context key, with how many included
// interviews carry it.
type SegmentColumn struct {
	Value string
	N     int
}

// SegmentCell is how many interviews of one segment show one theme.
type SegmentCell struct {
	Count   int
	Percent int  // of the segment's interviews
	Known   bool // the segment's size is known, so Percent means something
}

// SegmentRow is one theme across the segments.
type SegmentRow struct {
	Theme     string
	Sentiment string
	Cells     []SegmentCell
}

// SegmentTable compares the themes across the values of one context key.
type SegmentTable struct {
	Key     string
	Columns []SegmentColumn
	Rows    []SegmentRow
}

// AnswerGroupView is one group of similar answers to a question.
type AnswerGroupView struct {
	Label  string
	Count  int
	Quotes []QuoteView
}

// QuestionView is what participants answered to one scripted question.
type QuestionView struct {
	Question string
	Screener bool
	Answered int
	Skipped  int
	Groups   []AnswerGroupView
}

// SuggestionView is a request or idea participants voiced.
type SuggestionView struct {
	Text   string
	Count  int
	Quotes []QuoteView
}

// AnalysisJobView is the state of the analysis job the page was sent to watch, or of
// the study's analysis under way however it was started.
type AnalysisJobView struct {
	ID     string
	Status string // queued, running, completed, failed
	Error  string // why it failed
	// Poll is the status address the page's script polls while the job runs; "" once
	// it has ended.
	Poll string
	// Auto: the job was started by a live interview completing, not by a person or an
	// agent asking.
	Auto bool
}

// FindingsPage is one version of a study's findings, or why there is none.
type FindingsPage struct {
	Tabs      StudyTabs
	StudyID   string
	StudyName string

	// Why there are no findings to show, if so. NotLive: the study never went live (its
	// interviews were rehearsals). TestEnv: test-environment data has no analysis.
	// None: no analysis has completed yet.
	NotLive bool
	TestEnv bool
	None    bool

	CanRun bool // may start an analysis (the button)
	// Job is the study's analysis under way (however it was started), else the job named
	// by ?job=, if any.
	Job *AnalysisJobView

	Version    int
	Latest     bool
	Versions   []Option // the version picker, newest first
	Engine     string
	Generated  Stamp
	Interviews int
	Dropped    int // quotes the grounding check dropped
	Erased     int // interviews taken out since (erasure or retention)

	Summary     string
	Objectives  []ObjectiveView
	Themes      []ThemeView
	ThemeChart  BarChart
	Segments    []Option // context keys to compare by; the chosen one Selected
	Segment     *SegmentTable
	SegmentNote string // why no comparison is shown for the key asked for
	Questions   []QuestionView
	Suggestions []SuggestionView
}

// FunnelStep is one step of the funnel: link opened, started, answered, completed.
type FunnelStep struct {
	Label   string
	Count   int
	Percent int // of DashboardPage.FunnelBase
}

// DropOffRow is one scripted question with the unfinished interviews that stopped at
// it: still in progress there, or failed there.
type DropOffRow struct {
	Question   string
	InProgress int
	Failed     int
	Total      int
}

// SkipRow is one scripted question's answered and skipped counts.
type SkipRow struct {
	Question string
	Answered int
	Skipped  int
	Percent  int // skipped, of answered + skipped
}

// DayRow is one day's interviews: started that day, and how many of those completed.
type DayRow struct {
	Day       string // "2026-11-21"
	Label     string // "21 Nov 2026"
	Started   int
	Completed int
}

// DashboardPage is a study's dashboard: charts, each with its numbers in a table.
type DashboardPage struct {
	Tabs      StudyTabs
	StudyID   string
	StudyName string
	Total     int // real (not rehearsal) interviews

	Funnel      []FunnelStep
	FunnelChart BarChart
	// FunnelBase names the step the funnel's shares are of: "link opened", or "started"
	// when fewer opens than starts were counted (OpenedShort).
	FunnelBase  string
	OpenedShort bool

	DropOff      []DropOffRow
	DropOffChart BarChart
	Unfinished   int

	Skips        []SkipRow
	SkipsChart   BarChart
	SkipsVersion int  // the analysis version the skips come from; 0: none
	SkipsNone    bool // no analysis to count skips from
	NotLive      bool // the study never went live: no analysis, so no skips
	TestEnv      bool // test-environment data is never analysed
	// AnalysisRunning: an analysis of the study is queued or running, so the skips
	// change when it finishes.
	AnalysisRunning bool

	Days      []DayRow
	DaysChart ColumnChart
	DaysCut   bool // only the most recent days are shown
}
