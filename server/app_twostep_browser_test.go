package server

import (
	"interviewd/server/app"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// totpCode is the authenticator app's code for secret at t.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatalf("totp code: %v", err)
	}
	return code
}

// TestAppBrowserTwoStep turns on an authenticator app from the QR code's key, saves the
// recovery codes, then signs in with a generated code and with a recovery code.
func TestAppBrowserTwoStep(t *testing.T) {
	e := mustServeApp(t)

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.open("/app/settings/security")
	checkAxe(t, b)
	if n := eval[int](b.page, "sessions", `document.querySelectorAll('[data-session]').length`); n != 1 {
		t.Fatalf("%d sessions listed, want this one", n)
	}
	b.submit("form[action='/app/settings/security/totp'] button", "/app/settings/security")
	if src := eval[string](b.page, "qr", `document.querySelector('img.qr').getAttribute('src')`); !strings.HasPrefix(src, "data:image/png;base64,") {
		t.Fatalf("QR code src %.40q", src)
	}
	if !eval[bool](b.page, "qr loaded", `document.querySelector('img.qr').naturalWidth === 200`) {
		t.Fatal("the QR code image did not load (blocked by the CSP?)")
	}
	checkAxe(t, b)
	secret := strings.TrimSpace(b.text("#totp-secret"))

	// A wrong code keeps the same set-up on screen.
	b.fill("#totp-code", "000000")
	b.submit("form[action='/app/settings/security/totp/confirm'] button", "/app/settings/security")
	if got := strings.TrimSpace(b.text("#totp-secret")); got != secret {
		t.Fatalf("after a wrong code the key changed from %q to %q", secret, got)
	}
	if !strings.Contains(b.text("#form-errors"), "didn't match") {
		t.Fatalf("wrong code: %q", b.text("#form-errors"))
	}

	b.fill("#totp-code", totpCode(t, secret, time.Now()))
	b.submit("form[action='/app/settings/security/totp/confirm'] button", "/app/settings/security")
	codes := eval[[]string](b.page, "recovery codes", `Array.from(document.querySelectorAll('#recovery-codes li')).map(function(li){return li.textContent})`)
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(codes))
	}
	checkAxe(t, b)
	checkAxeDark(t, b)
	first := b.cookie(app.SessionCookie)
	if r := e.appDo("GET", "/app/settings/security", &appUser{token: first}, nil, false); r.status != 200 {
		t.Fatalf("the first browser's session: %d", r.status)
	}

	// Sign in again in a new browser: the two-step check, with the app's next code.
	b2 := e.browser(t)
	b2.signIn("a@example.com")
	b2.waitPath("/app/twostep")
	checkAxe(t, b2)
	b2.fill("#code", "000000")
	b2.submit("form[action='/app/twostep'] button[type=submit]", "/app/twostep")
	if !strings.Contains(b2.text("#form-errors"), "not right") {
		t.Fatalf("wrong two-step code: %q", b2.text("#form-errors"))
	}
	// The app's next code (a step already used is never accepted twice).
	b2.fill("#code", totpCode(t, secret, time.Now().Add(30*time.Second)))
	// One workspace: straight in, at the first section: Studies.
	b2.submit("form[action='/app/twostep'] button[type=submit]", "/app/studies")

	// And with a recovery code.
	b3 := e.browser(t)
	b3.signIn("a@example.com")
	b3.waitPath("/app/twostep")
	b3.submit("a[href^='/app/twostep?method=recovery']", "/app/twostep")
	checkAxe(t, b3)
	b3.fill("#code", codes[3])
	b3.submit("form[action='/app/twostep'] button[type=submit]", "/app/studies")
	b3.open("/app/settings/security")
	if got := b3.text("main"); !strings.Contains(got, "9 unused recovery codes left") {
		t.Fatalf("after using one recovery code: %q", got)
	}
	if n := eval[int](b3.page, "sessions", `document.querySelectorAll('[data-session]').length`); n != 3 {
		t.Fatalf("%d sessions listed, want 3", n)
	}

	// The same recovery code does not work twice.
	b4 := e.browser(t)
	b4.signIn("a@example.com")
	b4.open("/app/twostep?method=recovery")
	b4.fill("#code", codes[3])
	b4.submit("form[action='/app/twostep'] button[type=submit]", "/app/twostep")
	if !strings.Contains(b4.text("#form-errors"), "not right") {
		t.Fatalf("a spent recovery code: %q", b4.text("main"))
	}
	// The email fallback, once the organisation accepts codes by email.
	e.acceptEmailCodes(e.orgA.ID, "a@example.com")
	b4.open("/app/twostep?method=email")
	checkAxe(t, b4)
	b4.submit("form[action='/app/twostep/email'] button", "/app/twostep")
	b4.fill("#code", e.smtp.Next(t, "a@example.com").Code())
	checkAxe(t, b4)
	b4.submit("form[action='/app/twostep'] button[type=submit]", "/app/studies")

	// Sign out every other session from the first browser.
	b3.submit("form[action='/app/settings/security/sessions/revoke-others'] button", "/app/settings/security")
	if n := eval[int](b3.page, "sessions", `document.querySelectorAll('[data-session]').length`); n != 1 {
		t.Fatalf("%d sessions after signing out the others, want 1", n)
	}
	r := e.appDo("GET", "/app/settings/security", &appUser{token: first}, nil, false)
	if loc := r.header.Get("Location"); r.status != 303 || !strings.HasPrefix(loc, "/app/signin") {
		t.Fatalf("the first browser's session after signing out the others: %d %q", r.status, loc)
	}
}
