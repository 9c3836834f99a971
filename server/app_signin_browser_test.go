package server

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"interviewd/kv"
)

// TestAppBrowserSignIn signs in with the code read from the real SMTP server, chooses a
// workspace and lands in the app; every page on the way passes axe in both colour
// schemes, and signing out ends the session.
func TestAppBrowserSignIn(t *testing.T) {
	e := mustServeApp(t)
	b := e.browser(t)

	// GET / sends a signed-out browser to sign in.
	b.open("/")
	b.waitPath("/app/signin")
	checkAxe(t, b)
	checkAxeDark(t, b)

	b.fill("#email", "a@example.com")
	b.submit("form[action='/app/signin'] button[type=submit]", "/app/signin")
	b.waitFor("the code page", `!!document.querySelector('#code')`)
	if got := b.text("h1"); got != "Check your email" {
		t.Fatalf("code page heading %q", got)
	}
	checkAxe(t, b)

	// A wrong code first: the page says so and keeps the person on the code page.
	b.fill("#code", "000000")
	b.submit("form[action='/app/signin/code'] button[type=submit]", "/app/signin/code")
	if msg := b.text("#form-errors"); !strings.Contains(msg, "not right or has expired") {
		t.Fatalf("wrong code: errors %q", msg)
	}
	if focused := eval[string](b.page, "focus", `document.activeElement && document.activeElement.id`); focused != "form-errors" {
		t.Fatalf("after a wrong code focus is on %q, want the error summary", focused)
	}
	checkAxe(t, b)

	code := e.smtp.Next(t, "a@example.com").Code()
	b.fill("#code", code)
	// One workspace: straight into its live data, at the first section: Studies.
	b.submit("form[action='/app/signin/code'] button[type=submit]", "/app/studies")
	if env := b.text(".workspace .env"); env != "Live data" {
		t.Fatalf("header environment %q, want Live data", env)
	}
	b.open("/app/workspace")
	checkAxe(t, b)
	checkAxeDark(t, b)
	if !strings.Contains(b.text("main"), "Org A") || strings.Contains(b.text("main"), "Org B") {
		t.Fatalf("workspace choices: %q", b.text("main"))
	}

	b.chooseWorkspace("Org A", "test")
	b.waitPath("/app/studies") // the app starts at the first section: Studies
	if env := b.text(".workspace .env"); env != "Test data" {
		t.Fatalf("header environment %q, want Test data", env)
	}
	if b.visible("#credits") {
		t.Fatal("credits shown in the test environment")
	}
	checkAxe(t, b)

	// Switch to live: credits appear in the header.
	b.open("/app/workspace")
	b.chooseWorkspace("Org A", "live")
	if got := b.text("#credits"); got != "10 credits" {
		t.Fatalf("credits %q, want 10 credits", got)
	}
	checkAxeDark(t, b)

	// Unknown pages answer in the app's layout.
	b.open("/app/settings/nope")
	if got := b.text("h1"); got != "Not found" {
		t.Fatalf("unknown page heading %q", got)
	}
	checkAxe(t, b)

	// GET / now leads into the app.
	b.open("/")
	b.waitPath("/app/studies") // the app starts at the first section: Studies

	b.submit("form[action='/app/signout'] button", "/app/signin")
	b.open("/app/settings/security")
	b.waitPath("/app/signin")
	if loc := b.location(); !strings.Contains(loc, "next=%2Fapp%2Fsettings%2Fsecurity") {
		t.Fatalf("signed out, a page sends to %s: no way back", loc)
	}
}

// TestAppBrowserAxeFindsViolations proves the accessibility check can fail: a page
// given an unlabelled field and low-contrast text has serious violations.
func TestAppBrowserAxeFindsViolations(t *testing.T) {
	e := mustServeApp(t)
	b := e.browser(t)
	b.open("/app/signin")
	if bad := axeSerious(t, b); len(bad) != 0 {
		t.Fatalf("the sign-in page already fails: %v", bad)
	}
	b.do("break the page", chromedp.Evaluate[chromedp.Void](`(function(){
		var f = document.createElement('input'); f.type = 'text'; document.querySelector('main').appendChild(f);
		var p = document.createElement('p'); p.textContent = 'faint'; p.className = 'faint-test';
		document.querySelector('main').appendChild(p);
		document.querySelector('#email').removeAttribute('id');
	})()`))
	bad := axeSerious(t, b)
	if len(bad) == 0 {
		t.Fatal("axe found nothing wrong with an unlabelled field")
	}
	if !strings.Contains(strings.Join(bad, "\n"), "label") {
		t.Fatalf("violations name no label rule: %v", bad)
	}
}

// tabUntil presses Tab until the JavaScript condition on the focused element (el)
// holds, at most max times.
func (b appTab) tabUntil(what, cond string, max int) {
	b.t.Helper()
	for i := 0; i < max; i++ {
		if eval[bool](b.page, "read the focus", `(function(el){return !!el && !!(`+cond+`)})(document.activeElement)`) {
			return
		}
		b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	}
	b.t.Fatalf("Tab never reached %s", what)
}

// checkFocusRing asserts the focused element shows a solid ring of at least 2 px with
// a contrast of at least 3:1 against what is behind it.
func (b appTab) checkFocusRing(what string) {
	b.t.Helper()
	r := eval[ring](b.page, "measure the focus ring", ringJS)
	if r.Style == "none" || r.Width < 2 || r.Ratio < 3 {
		b.t.Fatalf("%s focus ring %s %.1fpx %s on %s: contrast %.2f:1, want a visible ring ≥ 3:1", what, r.Style, r.Width, r.Color, r.Backdrop, r.Ratio)
	}
}

// TestAppBrowserKeyboard signs in and creates a key with the keyboard alone, and every
// control it reaches shows a visible focus ring.
func TestAppBrowserKeyboard(t *testing.T) {
	e := mustServeApp(t)
	// Two workspaces, so sign-in leads to the chooser, which is walked too.
	e.mustMember(e.orgB.ID, "a@example.com", kv.RoleMember)
	b := e.browserAt(t, 1280, 800)
	// A headless window never has the system's focus; emulate it, or no element would
	// match :focus.
	b.do("emulate focus", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	}))
	b.open("/app/signin")
	b.waitFor("the email field to have the focus", `document.activeElement && document.activeElement.id === 'email'`)
	b.checkFocusRing("#email")
	b.do("type the email", chromedp.KeyEvent("a@example.com"))
	b.do("mark", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the code field to have the focus", `!window.__stale && document.activeElement && document.activeElement.id === 'code'`)
	b.do("type the code", chromedp.KeyEvent(e.smtp.Next(t, "a@example.com").Code()))
	b.do("mark", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the workspace page", `!window.__stale && location.pathname === '/app/workspace' && document.readyState === 'complete'`)

	b.tabUntil("Org A's live data", `el.getAttribute('aria-label') === 'Org A: live data'`, 10)
	b.checkFocusRing("the live data button")
	b.do("mark", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the app", `!window.__stale && location.pathname === '/app/studies' && document.readyState === 'complete'`)
	b.open("/app/settings/developer") // the app starts at Studies; the keys are the rest of this walk

	// The first Tab reaches the skip link, which is shown and moves the focus to main.
	b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	if !eval[bool](b.page, "skip link", `document.activeElement.classList.contains('skip') && document.activeElement.getBoundingClientRect().top >= 0`) {
		t.Fatal("the first Tab does not reach a visible skip link")
	}
	b.checkFocusRing("the skip link")
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("main to have the focus", `document.activeElement && document.activeElement.id === 'main'`)

	b.tabUntil("the key name", `el.id === 'key-name'`, 20)
	b.checkFocusRing("#key-name")
	b.do("type the name", chromedp.KeyEvent("Keyboard key"))
	b.tabUntil("the studies:read scope", `el.name === 'scopes' && el.value === 'studies:read'`, 10)
	b.checkFocusRing("the scope checkbox")
	b.do("tick", chromedp.KeyEvent(" "))
	b.tabUntil("Create key", `el.textContent === 'Create key'`, 15)
	b.checkFocusRing("the Create key button")
	b.do("mark", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the new key", `!window.__stale && !!document.querySelector('#new-secret')`)
	if got := b.text("#secret-h"); got != "Key “Keyboard key” created" {
		t.Fatalf("after creating by keyboard: %q", got)
	}
}
