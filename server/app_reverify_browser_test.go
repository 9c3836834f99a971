package server

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// TestAppBrowserReverify: turning require_mfa off from a session whose last sign-in is
// over 10 minutes old shows the confirmation form on the security page; an emailed
// code confirms, and the change then goes through.
func TestAppBrowserReverify(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	e := mustServeApp(t, withClock(clock))
	e.acceptEmailCodes(e.orgA.ID, "a@example.com") // the owner has no authenticator
	owner := e.signedIn(t, "a@example.com", "Org A", "live")
	policy := "form[action='/app/settings/security/require-mfa'] "
	toggle := func() {
		t.Helper()
		owner.open("/app/settings/security")
		owner.do("tick the policy", chromedp.Click(chromedp.CSS(policy+"input[type=checkbox]")))
		owner.submit(policy+"button", "/app/")
	}
	// Requiring two-step sends the owner through it (by email: no authenticator).
	toggle()
	owner.waitPath("/app/twostep")
	owner.submit("form[action='/app/twostep/email'] button", "/app/twostep")
	owner.fill("#code", e.smtp.Next(t, "a@example.com").Code())
	owner.submit("form[action='/app/twostep'] button", "/app/settings/security")
	if got := owner.text(".flash"); got != "Policy saved." {
		t.Fatalf("flash %q at %s", got, owner.location())
	}
	clock.Advance(kv.ReverifyWithin)
	toggle()
	if got := owner.text("main"); !strings.Contains(got, "Confirm it's you") {
		t.Fatalf("no confirmation asked:\n%s", got)
	}
	checkAxe(t, owner)
	owner.submit("form[action='/app/settings/security/reverify/email'] button", "/app/settings/security")
	owner.fill("#reverify-code", e.smtp.Next(t, "a@example.com").Code())
	owner.submit("form[action='/app/settings/security/reverify'] button", "/app/settings/security")
	if got := owner.text(".flash"); !strings.Contains(got, "For the next 10 minutes") {
		t.Fatalf("after confirming: %q", got)
	}
	toggle()
	if got := owner.text(".flash"); got != "Policy saved." {
		t.Fatalf("flash %q", got)
	}
	if org, _ := e.db.FindOrgByID(t.Context(), e.orgA.ID); org.RequireMFA {
		t.Fatal("require_mfa still on")
	}
}
