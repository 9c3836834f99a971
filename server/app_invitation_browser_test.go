package server

import (
	"interviewd/server/app"
	"strings"
	"testing"
)

// TestAppBrowserInvitationOtherAccount: a browser signed in as b@ opens an invitation
// for someone else; the page says so plainly, "Sign out and continue" signs it out and
// brings it to sign-in with the invited address filled in, and from there the
// invitation (signed out now) is accepted as the invited address.
func TestAppBrowserInvitationOtherAccount(t *testing.T) {
	e := mustServeApp(t)
	owner := e.signedIn(t, "a@example.com", "Org A", "live")
	owner.open("/app/settings/members")
	owner.fill("#invite-email", "new@a.example")
	owner.submit("form[action='/app/settings/members/invitations'] button", "/app/settings/members")
	path := strings.TrimPrefix(e.smtp.Next(t, "new@a.example").Link(testBaseURL+"/app/invitations/"), testBaseURL)

	b := e.signedIn(t, "b@example.com", "Org B", "live")
	b.open(path)
	if got := b.text("main"); !strings.Contains(got, "This invitation is for new@a.example; you're signed in as b@example.com.") ||
		strings.Contains(got, "Accept and join") {
		t.Fatalf("the invitation page signed in as someone else:\n%s", got)
	}
	checkAxe(t, b)
	b.submit("form[action$='/switch'] button", "/app/signin")
	if got := eval[string](b.page, "the email field", `document.querySelector('#email').value`); got != "new@a.example" {
		t.Fatalf("the sign-in page's address: %q", got)
	}
	if b.cookie(app.SessionCookie) != "" {
		t.Fatal("still signed in after Sign out and continue")
	}
	checkAxe(t, b)
	b.submit("a[href^='/app/invitations/']", "/app/invitations/")
	if got := b.text("h1"); got != "Join Org A" || strings.Contains(b.text("main"), "signed in as") {
		t.Fatalf("the invitation after signing out: %q", b.text("main"))
	}
	b.submit("form[action^='/app/invitations/'] button", "/app/settings/members")
	if got := b.text(".flash"); !strings.Contains(got, "joined") {
		t.Fatalf("after accepting: %q at %s", got, b.location())
	}
}
