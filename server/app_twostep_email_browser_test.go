package server

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// TestAppBrowserTwoStepEmailPolicy: an owner requires two-step in an organisation that
// accepts no code by email, so is asked to set up an authenticator at the check, does,
// and goes on; then accepts codes by email on Settings → Security, after which a member
// with no authenticator passes the check with one. Every page passes axe.
func TestAppBrowserTwoStepEmailPolicy(t *testing.T) {
	e := mustServeApp(t)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	owner := e.signedIn(t, "a@example.com", "Org A", "live")
	owner.open("/app/settings/security")
	if eval[bool](owner.page, "email codes ticked", `document.querySelector('input[name=email_codes]').checked`) {
		t.Fatal("codes by email are accepted by default")
	}
	checkAxe(t, owner)

	owner.do("require two-step", chromedp.Click(chromedp.CSS("form[action='/app/settings/security/require-mfa'] input[type=checkbox]")))
	owner.submit("form[action='/app/settings/security/require-mfa'] button", "/app/twostep")
	if got := owner.text("main"); !strings.Contains(got, "Set up an authenticator app to continue") || strings.Contains(got, "Email me a code") {
		t.Fatalf("the check with no second step accepted: %q", got)
	}
	checkAxe(t, owner)
	owner.submit("form[action='/app/twostep/totp'] button", "/app/twostep")
	if !eval[bool](owner.page, "qr loaded", `document.querySelector('img.qr').naturalWidth === 200`) {
		t.Fatal("the QR code image did not load (blocked by the CSP?)")
	}
	checkAxe(t, owner)
	secret := strings.TrimSpace(owner.text("#totp-secret"))
	owner.fill("#totp-code", "000000")
	owner.submit("form[action='/app/twostep/totp/confirm'] button", "/app/twostep")
	if !strings.Contains(owner.text("#form-errors"), "didn't match") || strings.TrimSpace(owner.text("#totp-secret")) != secret {
		t.Fatalf("a wrong first code: %q", owner.text("main"))
	}
	checkAxe(t, owner)
	owner.fill("#totp-code", totpCode(t, secret, time.Now()))
	owner.submit("form[action='/app/twostep/totp/confirm'] button", "/app/twostep")
	if n := eval[int](owner.page, "recovery codes", `document.querySelectorAll('#recovery-codes li').length`); n != kv.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown", n)
	}
	checkAxe(t, owner)
	checkAxeDark(t, owner)
	owner.submit("a.button.primary", "/app/settings/security")
	if got := owner.text(".flash"); got != "Policy saved." {
		t.Fatalf("after the set-up: flash %q at %s", got, owner.location())
	}

	// Accepting codes by email (the authenticator was just confirmed: no code asked).
	owner.do("accept email codes", chromedp.Click(chromedp.CSS("form[action='/app/settings/security/email-codes'] input[type=checkbox]")))
	owner.submit("form[action='/app/settings/security/email-codes'] button", "/app/settings/security")
	if got := owner.text(".flash"); !strings.Contains(got, "Codes by email now count") {
		t.Fatalf("flash %q", got)
	}
	if !eval[bool](owner.page, "email codes ticked", `document.querySelector('input[name=email_codes]').checked`) {
		t.Fatal("the setting is not shown as on")
	}
	checkAxe(t, owner)
	checkAxeDark(t, owner)
	if org, _ := e.db.FindOrgByID(t.Context(), e.orgA.ID); !org.TwoStepEmail || !org.RequireMFA {
		t.Fatalf("stored policy %+v", org)
	}

	member := e.browser(t)
	member.signIn("member@a.example")
	member.waitPath("/app/twostep")
	checkAxe(t, member)
	member.submit("form[action='/app/twostep/email'] button", "/app/twostep")
	member.fill("#code", e.smtp.Next(t, "member@a.example").Code())
	member.submit("form[action='/app/twostep'] button[type=submit]", "/app/studies")
}

// mustServeAppOutbox is mustServeApp for a server with no mail server: its mail is
// kept in the outbox of its data file.
func mustServeAppOutbox(t *testing.T) *appBrowserEnv {
	t.Helper()
	chromium := chromiumPath(t)
	axeSource(t)
	return &appBrowserEnv{testEnv: mustServe(t, withOutboxMail()), chromium: chromium}
}

// TestAppBrowserNoMailServer: with no mail server the sign-in pages say so and where
// the code is, which signs in; an invitation says it is in the outbox and its link
// copies with the button (the app's script, under the strict CSP). Axe passes.
func TestAppBrowserNoMailServer(t *testing.T) {
	e := mustServeAppOutbox(t)
	b := e.browser(t)
	b.open("/app/signin")
	if got := b.text(".mail-notice"); !strings.Contains(got, "No mail server is configured") || !strings.Contains(got, "interviewd mail outbox") {
		t.Fatalf("the sign-in page's notice: %q", got)
	}
	checkAxe(t, b)
	checkAxeDark(t, b)
	b.fill("#email", "a@example.com")
	b.submit("form[action='/app/signin'] button[type=submit]", "/app/signin")
	b.waitFor("the code page", `!!document.querySelector('#code')`)
	if got := b.text(".mail-notice"); !strings.Contains(got, "interviewd mail outbox") {
		t.Fatalf("the code page's notice: %q", got)
	}
	checkAxe(t, b)
	m := codeInSubject.FindStringSubmatch(outboxMail(t, e.testEnv, "a@example.com").Subject)
	if m == nil {
		t.Fatal("no code in the outbox")
	}
	b.fill("#code", m[1])
	b.submit("form[action='/app/signin/code'] button[type=submit]", "/app/studies")

	b.open("/app/settings/members")
	b.fill("#invite-email", "new@a.example")
	b.submit("form[action='/app/settings/members/invitations'] button", "/app/settings/members")
	if got := b.text(".flash"); !strings.HasPrefix(got, "No mail server is configured: the invitation is in the outbox") {
		t.Fatalf("flash %q", got)
	}
	link := eval[string](b.page, "the link", `document.querySelector('#invitation-link').value`)
	if !eval[bool](b.page, "read-only", `document.querySelector('#invitation-link').readOnly`) || !strings.HasPrefix(link, testBaseURL+"/app/invitations/") {
		t.Fatalf("the invitation link field: %q", link)
	}
	checkAxe(t, b)
	checkAxeDark(t, b)
	b.allowClipboard()
	b.do("copy", chromedp.Click(chromedp.CSS(`button[data-copy="#invitation-link"]`)))
	b.waitFor("the copy to be confirmed", `document.getElementById('invitation-copy-status').textContent === 'Copied to the clipboard.'`)
	copied, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil || copied != link {
		t.Fatalf("clipboard holds %q, want the link: %v", copied, err)
	}
	if !strings.Contains(outboxMail(t, e.testEnv, "new@a.example").Text, link) {
		t.Fatal("the page's link is not the outbox message's")
	}
}
