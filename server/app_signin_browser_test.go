package server

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	b.submit("form[action='/app/signin/code'] button[type=submit]", "/app/workspace")
	checkAxe(t, b)
	checkAxeDark(t, b)
	if !strings.Contains(b.text("main"), "Org A") || strings.Contains(b.text("main"), "Org B") {
		t.Fatalf("workspace choices: %q", b.text("main"))
	}

	b.chooseWorkspace("Org A", "test")
	b.waitPath("/app/settings/developer")
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
	b.waitPath("/app/settings/developer")

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
