package server

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// cspWatch makes every page the tab opens record the Content-Security-Policy
// violations it meets (in window.__csp), so a test can tell that nothing inline was
// refused. It runs through the DevTools protocol, which the page's CSP does not govern.
const cspWatch = `window.__csp = [];
document.addEventListener('securitypolicyviolation', function (e) { window.__csp.push(e.violatedDirective + ' ' + e.blockedURI); });`

func (b appTab) watchCSP() {
	b.t.Helper()
	b.do("watch CSP violations", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch})
		return err
	}))
}

// checkAxeAll is checkAxe held to no violation at all, whatever its impact: the
// analysis pages are new, so nothing is grandfathered.
func checkAxeAll(t *testing.T, b appTab) {
	t.Helper()
	checkAxe(t, b)
	const run = `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
		.then(function (r) { return r.violations.map(function (v) {
			return v.id + ' (' + (v.impact || '') + '): ' + v.help + ' at ' + v.nodes.map(function (n) { return n.target.join(' '); }).join(', ');
		}); })`
	vs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	if len(vs) > 0 {
		t.Fatalf("accessibility: %d violations on %s:\n%s", len(vs), b.location(), strings.Join(vs, "\n"))
	}
}

// noCSPViolations fails the test when the current page met a CSP refusal.
func noCSPViolations(t *testing.T, b appTab) {
	t.Helper()
	if v := eval[[]string](b.page, "CSP violations", `window.__csp || ['no watcher']`); len(v) > 0 {
		t.Fatalf("%s: Content-Security-Policy refused %v", b.location(), v)
	}
}

// TestAppBrowserFindings: a researcher runs the analysis of a study whose interviews
// were real participant API interviews, with the real analysis job and the built-in
// engine; the page follows the job and shows the findings by itself; a quote opens the
// transcript at its message, highlighted; the dashboard's charts are images with names
// and tables. Every page passes axe (light and dark) and meets no CSP refusal, at phone
// width.
func TestAppBrowserFindings(t *testing.T) {
	e := mustServeApp(t)
	f := e.mustFindingsStudy()
	base := "/app/studies/" + f.study.ID.String()

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.watchCSP()
	b.open(base)
	b.submit(`nav.study-tabs a[href="`+base+`/findings"]`, base+"/findings")
	if h := b.text(".analysis-run h2"); h != "No analysis yet" {
		t.Fatalf("findings before any analysis: %q", h)
	}
	checkAxeAll(t, b)
	noCSPViolations(t, b)

	// Run analysis: the page watches the job and shows the findings when it completes.
	b.submit(`form[action="`+base+`/findings"] button[type=submit]`, base+"/findings")
	b.waitFor("the findings", `!!document.querySelector('.analysis-meta') && document.readyState === 'complete'`)
	if got := b.text("#analysis-status"); got != "The analysis finished." {
		t.Fatalf("status after the job: %q", got)
	}
	if n := eval[int](b.page, "objectives", `document.querySelectorAll('.card.objective').length`); n != len(f.brief.Objectives) {
		t.Fatalf("%d objective cards, the brief has %d objectives", n, len(f.brief.Objectives))
	}
	if !strings.Contains(b.text(".objective-gap"), "Gap") {
		t.Fatal("no gap badge on the objective no interview speaks to")
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)
	noCSPViolations(t, b)

	// A refresh whose job is already under way elsewhere (recorded and running, as on
	// another node): the page shows it running over version 1, polls, and turns to
	// version 2 by itself once the real runner has finished it.
	p := f.study.Partition()
	held, _, err := e.db.CreateAnalysisJob(t.Context(), kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: f.study.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.StartAnalysis(t.Context(), p, held.ID); err != nil {
		t.Fatal(err)
	}
	b.submit(`form[action="`+base+`/findings"] button[type=submit]`, base+"/findings")
	if got := b.text("#analysis-status"); !strings.Contains(got, "An analysis is running") || !strings.Contains(b.text(".analysis-run h2"), "Version 1") {
		t.Fatalf("while running: %q over %q", got, b.text(".analysis-run h2"))
	}
	if loc := eval[string](b.page, "address", `location.search`); loc != "?job="+held.ID.String() {
		t.Fatalf("the page watches %s, the study's job is %s", loc, held.ID)
	}
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	e.runner.Enqueue(held)
	b.waitFor("version 2", `!window.__stale && document.readyState === 'complete' && document.querySelector('.analysis-run h2').textContent.indexOf('Version 2') === 0`)
	if got := b.text("#analysis-status"); got != "The analysis finished." {
		t.Fatalf("status after the held job: %q", got)
	}
	noCSPViolations(t, b)

	// An analysis started elsewhere, as after a completed interview: the page opened
	// plainly (no ?job=) shows it running over version 2, follows it, and turns to
	// version 3 by itself once the runner has finished it.
	auto, _, err := e.db.CreateAnalysisJob(t.Context(), kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: f.study.ID, Trigger: kv.AnalysisOnInterview})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.StartAnalysis(t.Context(), p, auto.ID); err != nil {
		t.Fatal(err)
	}
	b.open(base + "/findings")
	if got := b.text("#analysis-status"); !strings.Contains(got, "An analysis is running") || !strings.Contains(b.text(".analysis-run h2"), "Version 2") ||
		!strings.Contains(b.text("#analysis-origin"), "started automatically after a live interview completed") {
		t.Fatalf("an analysis started elsewhere: %q over %q", got, b.text(".analysis-run h2"))
	}
	checkAxeAll(t, b)
	noCSPViolations(t, b)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	e.runner.Enqueue(auto)
	b.waitFor("version 3", `!window.__stale && document.readyState === 'complete' && document.querySelector('.analysis-run h2').textContent.indexOf('Version 3') === 0`)
	noCSPViolations(t, b)

	// A quote opens its transcript at the message it quotes, which the page marks.
	quote := eval[string](b.page, "a quote", `document.querySelector('.quote p').textContent`)
	href := eval[string](b.page, "its link", `document.querySelector('a.quote-source').getAttribute('href')`)
	b.submit(`a.quote-source`, "/app/interviews/")
	b.waitFor("the quoted message", `!!document.querySelector('.msg:target')`)
	hash := href[strings.Index(href, "#"):]
	if got := eval[string](b.page, "target", `'#' + document.querySelector('.msg:target').id`); got != hash {
		t.Fatalf("target %s, link %s", got, href)
	}
	said := eval[string](b.page, "said", `document.querySelector('.msg:target p').textContent`)
	if !strings.Contains(said, strings.Trim(quote, "“”")) || !strings.Contains(b.text(".msg:target .who"), "Participant") {
		t.Fatalf("the message at %s says %q, the quote %q", hash, said, quote)
	}
	marked := eval[bool](b.page, "highlight", `(function(){
		var t = document.querySelector('.msg:target'), o = document.querySelector('.msg:not(:target)');
		var a = getComputedStyle(t), c = getComputedStyle(o);
		return a.outlineStyle === 'solid' && a.backgroundColor !== c.backgroundColor;
	})()`)
	if !marked {
		t.Fatal("the quoted message is not highlighted")
	}
	checkAxeAll(t, b)
	noCSPViolations(t, b)

	// The dashboard: every chart an image with a name and a description, each with its
	// numbers in a table.
	b = e.signedIn(t, "a@example.com", "Org A", "live")
	b.watchCSP()
	b.open(base + "/findings")
	b.submit(`nav.study-tabs a[href="`+base+`/dashboard"]`, base+"/dashboard")
	charts := eval[int](b.page, "charts", `document.querySelectorAll('svg.chart[role=img]').length`)
	named := eval[int](b.page, "named charts", `Array.prototype.filter.call(document.querySelectorAll('svg.chart[role=img]'), function (s) {
		var ids = (s.getAttribute('aria-labelledby') || '').split(' ');
		return ids.length === 2 && ids.every(function (id) { var el = document.getElementById(id); return el && el.textContent.trim() !== ''; });
	}).length`)
	tables := eval[int](b.page, "tables", `document.querySelectorAll('details.chart-table table').length`)
	if charts < 4 || named != charts || tables != charts {
		t.Fatalf("%d charts, %d named, %d tables", charts, named, tables)
	}
	b.do("open the tables", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details.chart-table').forEach(function (d) { d.open = true; })`))
	if got := b.text("#funnel-h + p + figure + details table tbody"); !strings.Contains(got, "Link opened\t0") || !strings.Contains(got, "Completed\t3") {
		t.Fatalf("funnel table: %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)
	noCSPViolations(t, b)

	// A wide screen draws the same charts without the page growing sideways.
	w := e.browserAt(t, 1280, 900)
	w.signIn("a@example.com")
	w.chooseWorkspace("Org A", "live")
	w.open(base + "/dashboard")
	checkAxeAll(t, w)
	w.open(base + "/findings")
	checkAxeAll(t, w)
}
