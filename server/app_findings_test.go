package server

import (
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/plugins/plugintest"
	"interviewd/server/app"
)

// findingsFixture is a live study of organisation A with real interviews, made through
// the participant API: three completed (two on the "free" plan, one on "pro", one of
// them skipping the first question) and one that answered once and was left.
type findingsFixture struct {
	study   kv.Study
	brief   kv.Brief
	stopped kv.Interview // in progress, never finished
}

func findingsBrief() kv.Brief {
	title := "Shift planning"
	return kv.Brief{Title: &title,
		Objectives:        []string{"Understand how teams schedule their shifts", "Learn what teams would pay for"},
		VerbatimQuestions: []string{"How do you schedule shifts today?", "What goes wrong with the schedule?"}}
}

// Answers speak to the first objective (they share "schedule" and "shifts" with it)
// and never to the second, so the second is a gap whatever else an engine finds.
var findingsAnswers = []string{
	"We schedule shifts in a shared spreadsheet every Friday afternoon.",
	"The schedule breaks when someone is sick and shifts clash.",
	"Swapping shifts by phone takes hours; an app that did swaps would help.",
}

func (e *testEnv) mustFindingsStudy() findingsFixture {
	e.t.Helper()
	f := findingsFixture{brief: findingsBrief()}
	f.study = e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, f.brief)
	e.completeInterview(e.linkFor(f.study, kv.AudiencePerson, map[string]string{"plan": "free"}, ""), findingsAnswers)
	e.completeInterview(e.linkFor(f.study, kv.AudiencePerson, map[string]string{"plan": "pro"}, ""), findingsAnswers[1:])
	skipper := e.participant(e.linkFor(f.study, kv.AudiencePerson, map[string]string{"plan": "free"}, ""))
	skipper.open()
	skipper.skip()
	for i := 0; ; i++ {
		if i > 40 {
			e.t.Fatal("the skipping interview did not complete")
		}
		if skipper.mustSay(findingsAnswers[i%len(findingsAnswers)]).Status == kv.InterviewCompleted {
			break
		}
	}
	left := e.participant(e.linkFor(f.study, kv.AudienceGroup, nil, ""))
	left.open()
	left.mustSay(findingsAnswers[0])
	for _, iv := range e.interviewsOf(f.study) {
		if iv.Status == kv.InterviewInProgress {
			f.stopped = iv
		}
	}
	if f.stopped.ID.IsZero() {
		e.t.Fatal("no interview left in progress")
	}
	return f
}

// runAppAnalysis presses Run analysis (or Refresh) on the findings page and polls the
// page's status address until the job ends; it returns the job's final state.
func runAppAnalysis(t *testing.T, u *appClient, study kv.ID) app.AnalysisStatusJSON {
	t.Helper()
	loc := wantRedirect(t, u.post(t, "/app/studies/"+study.String()+"/findings", nil), "/app/studies/"+study.String()+"/findings?job=")
	job := strings.TrimPrefix(loc, "/app/studies/"+study.String()+"/findings?job=")
	return pollJSON(t, u, "/app/studies/"+study.String()+"/findings/status?job="+job, func(s app.AnalysisStatusJSON) bool {
		return s.Status == kv.AnalysisCompleted || s.Status == kv.AnalysisFailed
	})
}

// quoteLinks returns every quote of a as the link the page gives it.
func quoteLinks(a analysis.Analysis) []string {
	var out []string
	for _, q := range quotesOf(a) {
		out = append(out, fmt.Sprintf(`href="/app/interviews/%s#m%d"`, q.InterviewID, q.MessageIndex))
	}
	return out
}

var transcriptItem = regexp.MustCompile(`(?s)<li class="msg msg-[a-z]+" id="m([0-9]+)">.*?</li>`)

// TestAppFindings: the findings page over real sockets, from a study that never went
// live to a failed refresh, with every quote leading to its message, against what the
// API answers for the same analysis.
func TestAppFindings(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	f := e.mustFindingsStudy()
	base := "/app/studies/" + f.study.ID.String()

	t.Run("OK_NeverLiveExplains", func(t *testing.T) {
		never := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, findingsBrief())
		e.completeInterview(never.LinkToken, findingsAnswers) // a rehearsal
		page := wantPage(t, owner.get(t, "/app/studies/"+never.ID.String()+"/findings"), 200, "Nothing to analyse yet", "no analysis in test mode")
		if strings.Contains(page, "Run analysis") || strings.Contains(page, `method="post" action="/app/studies/`+never.ID.String()+`/findings"`) {
			t.Fatal("a study that never went live offers an analysis")
		}
		wantPage(t, owner.post(t, "/app/studies/"+never.ID.String()+"/findings", nil), 409, "Test mode: no analysis")
		wantPage(t, owner.get(t, "/app/studies/"+never.ID.String()+"/dashboard"), 200, "a study that has never been live has no analysis")
	})

	t.Run("OK_NoneYet", func(t *testing.T) {
		r := owner.get(t, base+"/findings")
		wantPage(t, r, 200, "No analysis yet", ">Run analysis<", `name="csrf"`, `href="`+base+`/findings" aria-current="page"`)
		if csp := r.header.Get("Content-Security-Policy"); csp != app.CSP {
			t.Fatalf("CSP %q", csp)
		}
	})

	first := runAppAnalysis(t, owner, f.study.ID)
	if first.Status != kv.AnalysisCompleted || first.Version == nil || *first.Version != 1 || first.FindingsURL != base+"/findings?job="+first.JobID {
		t.Fatalf("first analysis %+v", first)
	}
	_, a := e.getAnalysis("a_live", f.study.ID, "")
	if a.InterviewsIncluded != 3 || len(quotesOf(a)) == 0 {
		t.Fatalf("the API's analysis: %d interviews, %d quotes", a.InterviewsIncluded, len(quotesOf(a)))
	}

	t.Run("OK_ShowsTheAnalysis", func(t *testing.T) {
		want := []string{"The analysis finished.", "Version 1", `<span class="tag">latest</span>`, ">Refresh<",
			`Engine <span class="mono">` + a.Engine + `</span>`, fmt.Sprintf("%d interviews included", a.InterviewsIncluded),
			html.EscapeString(a.Summary)}
		gaps := 0
		for _, o := range a.Objectives {
			want = append(want, html.EscapeString(o.Objective), fmt.Sprintf("%d of %d interviews", o.Coverage.Interviews, o.Coverage.Of))
			if o.Gap {
				gaps++
			}
		}
		for _, th := range a.Themes {
			want = append(want, html.EscapeString(th.Label), `class="sentiment sentiment-`+th.Sentiment+`">`+th.Sentiment+`<`)
		}
		for _, q := range a.Questions {
			want = append(want, html.EscapeString(q.Question), fmt.Sprintf("%d answered · %d skipped", q.Answered, q.Skipped))
		}
		want = append(want, quoteLinks(a)...)
		page := wantPage(t, owner.get(t, first.FindingsURL), 200, want...)
		if gaps == 0 || strings.Count(page, `class="badge badge-gap">Gap<`) != gaps {
			t.Fatalf("%d gap badges on the page, the analysis has %d gaps", strings.Count(page, `class="badge badge-gap">Gap<`), gaps)
		}
		if strings.Contains(page, " style=") || strings.Contains(page, "<script>") {
			t.Fatal("inline style or script on the findings page")
		}
	})

	t.Run("OK_QuoteOpensItsMessage", func(t *testing.T) {
		for _, q := range quotesOf(a) {
			page := wantPage(t, owner.get(t, "/app/interviews/"+q.InterviewID), 200)
			found := false
			for _, m := range transcriptItem.FindAllStringSubmatch(page, -1) {
				if m[1] == strconv.Itoa(q.MessageIndex) {
					found = true
					if !strings.Contains(m[0], html.EscapeString(q.Text)) || !strings.Contains(m[0], "msg-participant") {
						t.Fatalf("message m%d of %s is not the quote %q:\n%s", q.MessageIndex, q.InterviewID, q.Text, m[0])
					}
				}
			}
			if !found {
				t.Fatalf("the transcript of %s has no message m%d", q.InterviewID, q.MessageIndex)
			}
		}
	})

	t.Run("OK_Segments", func(t *testing.T) {
		page := wantPage(t, owner.get(t, base+"/findings?segment=plan"), 200, `<option value="plan" selected>plan</option>`)
		if len(a.Themes) > 0 {
			wantPage(t, owner.get(t, base+"/findings?segment=plan"), 200, `by <span class="mono">plan</span>`,
				`free <span class="muted small">(2 interviews)`, `pro <span class="muted small">(1 interview)`)
		} else if !strings.Contains(page, "There are no themes to compare.") {
			t.Fatal("no themes, and the page does not say so")
		}
		wantPage(t, owner.get(t, base+"/findings?segment=nosuch"), 200, "carried the context key “nosuch”")
	})

	second := runAppAnalysis(t, owner, f.study.ID)
	if second.Status != kv.AnalysisCompleted || *second.Version != 2 {
		t.Fatalf("refresh %+v", second)
	}

	t.Run("OK_VersionPicker", func(t *testing.T) {
		wantPage(t, owner.get(t, base+"/findings"), 200, `<option value="2" selected>Version 2 (latest)</option>`, `<option value="1">Version 1</option>`, `<select id="version" name="version">`)
		old := wantPage(t, owner.get(t, base+"/findings?version=1"), 200, "Version 1", `<option value="1" selected>Version 1</option>`)
		if strings.Contains(old, `<span class="tag">latest</span>`) {
			t.Fatal("version 1 is called the latest")
		}
		wantPage(t, owner.get(t, base+"/findings?version=9"), 404, "Not found")
		wantPage(t, owner.get(t, base+"/findings?version=abc"), 422, "Version is a whole number")
	})

	t.Run("OK_FailedRefreshKeepsThePrevious", func(t *testing.T) {
		// A redactor that fails (the sandbox plugin exits non-zero without a mode)
		// fails the analysis the way a real one would.
		wasm := plugintest.Wasm(t, plugintest.Sandbox)
		if err := os.MkdirAll(filepath.Join(e.db.BlobDir(), "plugins"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.db.BlobDir(), "plugins", "sandbox.wasm"), wasm, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.PutPlugin(t.Context(), kv.OrgPlugin{OrgID: e.orgA.ID, Kind: kv.PluginRedactor, Name: "sandbox",
			Blob: filepath.Join("plugins", "sandbox.wasm")}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := e.db.RemovePlugin(t.Context(), e.orgA.ID, kv.PluginRedactor, "sandbox"); err != nil {
				t.Fatal(err)
			}
		}()
		failed := runAppAnalysis(t, owner, f.study.ID)
		if failed.Status != kv.AnalysisFailed || failed.Error == nil || failed.FindingsURL != "" {
			t.Fatalf("refresh with a failing redactor: %+v", failed)
		}
		wantPage(t, owner.get(t, base+"/findings?job="+failed.JobID), 200, "The analysis failed: "+html.EscapeString(*failed.Error),
			"The findings shown are the previous version.", `<option value="2" selected>Version 2 (latest)</option>`, `role="alert"`)
	})

	t.Run("ErrJobOfAnotherStudy", func(t *testing.T) {
		other := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, findingsBrief())
		r := owner.get(t, "/app/studies/"+other.ID.String()+"/findings/status?job="+first.JobID)
		if r.status != 404 {
			t.Fatalf("another study's job: %d %s", r.status, r.body)
		}
		// On the page, a job that is not the study's is simply not shown.
		page := wantPage(t, owner.get(t, "/app/studies/"+other.ID.String()+"/findings?job="+first.JobID), 200, "No analysis yet")
		if strings.Contains(page, "analysis-status") {
			t.Fatal("another study's job shown")
		}
	})

	t.Run("ErrRoles", func(t *testing.T) {
		// A researcher and a viewer read the findings; a viewer cannot run an analysis.
		member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
		wantPage(t, member.get(t, base+"/findings"), 200, "Version 2")
		wantPage(t, member.get(t, base+"/dashboard"), 200)
		study := wantPage(t, member.get(t, base), 200)
		if !strings.Contains(study, base+"/findings") || !strings.Contains(study, base+"/dashboard") {
			t.Fatal("a researcher's study page does not link to findings")
		}
		viewer := e.mustAppClient(t, "v@example.com", e.orgA.ID, kv.EnvLive, kv.RoleViewer)
		if page := wantPage(t, viewer.get(t, base+"/findings"), 200, "Version 2"); strings.Contains(page, `method="post" action="`+base+`/findings"`) {
			t.Fatal("a viewer is offered Run analysis")
		}
		wantPage(t, viewer.post(t, base+"/findings", nil), 403, "change nothing")
		admin := e.mustAppClient(t, "admin@example.com", e.orgA.ID, kv.EnvLive, kv.RoleAdmin)
		wantPage(t, admin.get(t, base+"/findings"), 200, "Version 2")
		wantPage(t, owner.get(t, base), 200, `href="`+base+`/findings"`, `href="`+base+`/dashboard"`)

		b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
		wantPage(t, b.get(t, base+"/findings"), 404, "Not found")
		wantPage(t, b.post(t, base+"/findings", nil), 404)
		wantPage(t, b.get(t, base+"/findings/status?job="+first.JobID), 404)
		wantPage(t, b.get(t, base+"/dashboard"), 404)
		// No CSRF token: refused before anything is queued.
		before, _ := e.db.FindAnalysisVersions(t.Context(), f.study.Partition(), f.study.ID)
		wantPage(t, owner.post(t, base+"/findings", url.Values{"csrf": {"forged"}}), 403)
		if after, _ := e.db.FindAnalysisVersions(t.Context(), f.study.Partition(), f.study.ID); len(after) != len(before) {
			t.Fatal("a forged post ran an analysis")
		}
	})

	t.Run("OK_TestEnvironmentExplains", func(t *testing.T) {
		inTest := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeLive, findingsBrief())
		test := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvTest, "")
		page := wantPage(t, test.get(t, "/app/studies/"+inTest.ID.String()+"/findings"), 200, "No analysis of test data")
		if strings.Contains(page, "Run analysis") {
			t.Fatal("test data offers an analysis")
		}
		wantPage(t, test.post(t, "/app/studies/"+inTest.ID.String()+"/findings", nil), 403)
		wantPage(t, test.get(t, "/app/studies/"+inTest.ID.String()+"/dashboard"), 200, "test data is never analysed")
		// The live study is not in the test environment at all.
		wantPage(t, test.get(t, base+"/findings"), 404)
	})

	t.Run("OK_Dashboard", func(t *testing.T) {
		_, latest := e.getAnalysis("a_live", f.study.ID, "")
		want := []string{`href="` + base + `/dashboard" aria-current="page"`, "4 interviews so far",
			`<th scope="row">Started</th><td>4</td><td>100%</td>`,
			`<th scope="row">Answered a question</th><td>4</td><td>100%</td>`,
			`<th scope="row">Completed</th><td>3</td><td>75%</td>`,
			fmt.Sprintf("From the latest analysis (version %d)", latest.Version),
			`role="img"`, `aria-labelledby="funnel-chart-t funnel-chart-d"`, `aria-labelledby="days-chart-t days-chart-d"`}
		// The question the left interview stands at, by its own progress.
		at, ok := moderator.InterviewProgress(f.brief, f.stopped.EntryAttributes, mustInterview(t, e, f.stopped).Script)
		if !ok {
			t.Fatal("the left interview has no position")
		}
		want = append(want, `<th scope="row">`+html.EscapeString(f.brief.VerbatimQuestions[at.Question-1])+`</th><td>1</td><td>0</td><td>1</td>`)
		for _, q := range latest.Questions {
			want = append(want, fmt.Sprintf(`<th scope="row">%s</th><td>%d</td><td>%d</td>`, html.EscapeString(q.Question), q.Answered, q.Skipped))
		}
		day := f.stopped.StartedAt.UTC().Format("2006-01-02")
		want = append(want, `<time datetime="`+day+`">`)
		page := wantPage(t, owner.get(t, base+"/dashboard"), 200, want...)
		if strings.Contains(page, " style=") || strings.Contains(page, "<script>") {
			t.Fatal("inline style or script on the dashboard")
		}
	})
}

func mustInterview(t *testing.T, e *testEnv, iv kv.Interview) kv.Interview {
	t.Helper()
	got, err := e.db.FindInterviewByID(t.Context(), iv.Partition(), iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
