package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/mail/smtptest"
	"interviewd/moderator"
)

// The web app in a real browser: a real server whose mail goes to a real SMTP server
// (mail/smtptest), headless Chromium through chromedp, and axe-core (pinned in
// .ci/node) for the accessibility check. Without Chromium or axe-core these tests skip,
// unless INTERVIEWD_REQUIRE_BROWSER=1 (CI) makes that a failure.
//
//	e := mustServeApp(t)
//	tab := e.signedIn(t, "a@example.com", "Org A", "live") // Org A's owner
//	tab.open("/app/settings/developer")
//	checkAxe(t, tab)

// appBrowserEnv is a served app with its SMTP server and the browser binary.
type appBrowserEnv struct {
	*testEnv
	smtp     *smtptest.Server
	chromium string
	lastPath string
}

// withMail makes the server send its mail through sender.
func withMail(sender mail.Sender) serveOption {
	return func(c *Config, _ *kv.Options) { c.Mail = sender }
}

// mustServeApp boots the server of mustServe (organisations A and B; A's owner is
// a@example.com, B's b@example.com) with its mail going to a real SMTP server. It skips
// (or fails under INTERVIEWD_REQUIRE_BROWSER=1) without Chromium or axe-core.
func mustServeApp(t *testing.T, opts ...serveOption) *appBrowserEnv {
	t.Helper()
	return mustServeAppEngine(t, moderator.NewBuiltin(), opts...)
}

// mustServeAppEngine is mustServeApp with the moderator engine m.
func mustServeAppEngine(t *testing.T, m moderator.Engine, opts ...serveOption) *appBrowserEnv {
	t.Helper()
	chromium := chromiumPath(t)
	axeSource(t)
	srv := smtptest.Start(t)
	sender, err := mail.New(mail.Config{URL: srv.URL, BaseURL: testBaseURL}, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	e := mustServeEngine(t, m, append(opts, withMail(sender))...)
	return &appBrowserEnv{testEnv: e, smtp: srv, chromium: chromium}
}

// appTab is one browser (its own profile, so its own cookies) on the app.
type appTab struct {
	page
	e *appBrowserEnv
}

// browser starts a fresh browser at phone width (390 px).
func (e *appBrowserEnv) browser(t *testing.T) appTab {
	t.Helper()
	ctx, _ := newBrowser(t, e.chromium)
	return appTab{page: page{t: t, ctx: ctx}, e: e}
}

// browserAt starts a fresh browser with a width × height window.
func (e *appBrowserEnv) browserAt(t *testing.T, width, height int64) appTab {
	t.Helper()
	ctx, _ := newBrowserAt(t, e.chromium, width, height)
	return appTab{page: page{t: t, ctx: ctx}, e: e}
}

// open navigates to path on the server and waits for the page to load.
func (b appTab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.e.url+path))
	b.waitLoaded()
}

// waitLoaded waits until the current document has loaded.
func (b appTab) waitLoaded() {
	b.t.Helper()
	b.waitFor("the page to load", `document.readyState === 'complete'`)
}

// waitFor polls the JavaScript condition cond until it is true, tolerating the errors
// of a page that is navigating meanwhile (its context goes away between polls).
func (b appTab) waitFor(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(function(){try{return !!(`+cond+`)}catch(e){return false}})()`))
		if err == nil && ok {
			return
		}
		if b.ctx.Err() != nil {
			break
		}
		last = err
		b.e.lastPath = b.location()
		time.Sleep(25 * time.Millisecond)
	}
	b.t.Fatalf("waiting for %s (%s): timed out (last error %v) at %s", what, cond, last, b.e.lastPath)
}

// location returns the current path and query.
func (b appTab) location() string {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.pathname + location.search + ' ' + document.title + ' ' + (document.activeElement||{}).id + ' ' + (document.querySelector('#code')||{}).value + ' ' + (document.querySelector('.job-status')||{}).textContent`))
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	return v
}

// waitPath waits until the browser shows a loaded page whose path starts with prefix.
func (b appTab) waitPath(prefix string) {
	b.t.Helper()
	b.waitFor("a page at "+prefix, fmt.Sprintf(`location.pathname.indexOf(%q) === 0 && document.readyState === 'complete'`, prefix))
}

// fill types value into the field sel (after clearing it).
func (b appTab) fill(sel, value string) {
	b.t.Helper()
	b.do("clear "+sel, chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value = ''`, sel)))
	b.do("fill "+sel, chromedp.SendKeys(chromedp.CSS(sel), value))
}

// submit clicks the button sel and waits for the next page at path prefix next.
func (b appTab) submit(sel, next string) {
	b.t.Helper()
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
	b.waitFor("the next page", fmt.Sprintf(`!window.__stale && location.pathname.indexOf(%q) === 0 && document.readyState === 'complete'`, next))
}

// text returns the text of the first element sel.
func (b appTab) text(sel string) string {
	b.t.Helper()
	return eval[string](b.page, "read "+sel, fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.innerText:''})()`, sel))
}

// cookie returns the browser's cookie name for the server ("" when it has none); it
// reads HttpOnly cookies too, through the DevTools protocol.
func (b appTab) cookie(name string) string {
	b.t.Helper()
	value := ""
	b.do("read cookies", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{b.e.url + "/"}})
		if err != nil {
			return err
		}
		for _, c := range res.Cookies {
			if c.Name == name {
				value = c.Value
			}
		}
		return nil
	}))
	return value
}

// acceptConfirms makes the page's confirm() dialogs answer yes, recording the
// questions in window.__asked.
func (b appTab) acceptConfirms() {
	b.t.Helper()
	b.do("accept confirms", chromedp.Evaluate[chromedp.Void](`window.__asked = []; window.confirm = function (q) { window.__asked.push(q); return true; }`))
}

// signIn signs email in through the pages, reading the code from the SMTP server,
// and stops at whatever page follows the code (the workspace chooser, or the
// two-step check).
func (b appTab) signIn(email string) {
	b.t.Helper()
	b.open("/app/signin")
	b.fill("#email", email)
	b.submit("form[action='/app/signin'] button[type=submit]", "/app/signin")
	b.waitFor("the code page", `!!document.querySelector('#code')`)
	code := b.e.smtp.Next(b.t, email).Code()
	if len(code) != 6 {
		b.t.Fatalf("mail to %s carries no 6-digit code", email)
	}
	b.fill("#code", code)
	b.submit("form[action='/app/signin/code'] button[type=submit]", "/app/")
}

// chooseWorkspace picks org's live or test data on the workspace page. Sign-in takes a
// person with one workspace straight into it, past the chooser: then it opens the
// chooser.
func (b appTab) chooseWorkspace(org, env string) {
	b.t.Helper()
	b.waitFor("a page past sign-in", `location.pathname.indexOf('/app/') === 0 && location.pathname.indexOf('/app/signin') !== 0 && document.readyState === 'complete'`)
	if !eval[bool](b.page, "on the chooser", `location.pathname.indexOf('/app/workspace') === 0`) {
		b.open("/app/workspace")
	}
	label := "live data"
	if env == "test" {
		label = "test data"
	}
	b.submit(fmt.Sprintf(`button[aria-label=%q]`, org+": "+label), "/app/")
}

// signedIn opens a browser signed in as email in org's env ("live" or "test").
func (e *appBrowserEnv) signedIn(t *testing.T, email, org, env string) appTab {
	t.Helper()
	b := e.browser(t)
	b.signIn(email)
	b.chooseWorkspace(org, env)
	return b
}

// axe is the axe-core source, read once.
var axe struct {
	once sync.Once
	src  string
	err  error
}

// axeSource returns axe-core's script from .ci/node (npm ci --prefix .ci/node). Without
// it the test skips, or fails under INTERVIEWD_REQUIRE_BROWSER=1.
func axeSource(t *testing.T) string {
	t.Helper()
	axe.once.Do(func() {
		var b []byte
		b, axe.err = os.ReadFile(filepath.Join("..", ".ci", "node", "node_modules", "axe-core", "axe.min.js"))
		axe.src = string(b)
	})
	if axe.err != nil {
		msg := "no axe-core in .ci/node (run npm ci --prefix .ci/node); app browser tests skipped"
		if os.Getenv("INTERVIEWD_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg + ": " + axe.err.Error())
		}
		skipMissing(t, msg)
	}
	return axe.src
}

// axeViolation is one rule axe found broken, with where.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// checkAxe runs axe-core on the current page (WCAG 2.1 A and AA, and best practices)
// and fails the test for any serious or critical violation. The script is evaluated
// through the DevTools protocol, which the page's CSP does not govern; the page itself
// still runs under its own CSP.
func checkAxe(t *testing.T, b appTab) {
	t.Helper()
	// Usable on a phone: nothing makes the page itself scroll sideways (wide tables
	// scroll inside their own box).
	if w := eval[int](b.page, "page width", `document.documentElement.scrollWidth - document.documentElement.clientWidth`); w > 0 {
		t.Fatalf("%s is %d px wider than the window", b.location(), w)
	}
	if bad := axeSerious(t, b); len(bad) > 0 {
		t.Fatalf("accessibility: %d serious or critical violations on %s:\n%s", len(bad), b.location(), strings.Join(bad, "\n"))
	}
}

// axeSerious runs axe-core on the current page and returns its serious and critical
// violations, one line each.
func axeSerious(t *testing.T, b appTab) []string {
	t.Helper()
	src := axeSource(t)
	b.waitLoaded()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	const run = `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
		.then(function (r) {
			return r.violations.map(function (v) {
				return {id: v.id, impact: v.impact || '', help: v.help,
					targets: v.nodes.map(function (n) { return n.target.join(' '); })};
			});
		})`
	vs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]axeViolation](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var bad []string
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", ")))
		}
	}
	return bad
}

// checkAxeDark is checkAxe with the page in the dark colour scheme (contrast differs).
func checkAxeDark(t *testing.T, b appTab) {
	t.Helper()
	setScheme(t, b, "dark")
	defer setScheme(t, b, "light")
	checkAxe(t, b)
}

func setScheme(t *testing.T, b appTab, scheme string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, emulateScheme(scheme)); err != nil {
		t.Fatalf("emulate %s scheme: %v", scheme, err)
	}
}

// emulateScheme makes the page prefer the light or dark colour scheme.
func emulateScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}
