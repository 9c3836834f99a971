package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAppBrowserInvite invites a person by email, accepts through the link read from
// the real SMTP server in a second browser, then changes their role and removes them;
// the last owner cannot be removed.
func TestAppBrowserInvite(t *testing.T) {
	e := mustServeApp(t)

	owner := e.signedIn(t, "a@example.com", "Org A", "live")
	owner.open("/app/settings/members")
	checkAxe(t, owner)
	if owner.visible(`tr[data-member="a@example.com"] button.danger`) || !strings.Contains(owner.text(`tr[data-member="a@example.com"]`), "last owner") {
		t.Fatalf("the last owner's row: %q", owner.text(`tr[data-member="a@example.com"]`))
	}
	owner.fill("#invite-email", "New.Person@A.example")
	owner.do("role", chromedp.SetValue(chromedp.CSS("#invite-role"), "admin"))
	owner.submit("form[action='/app/settings/members/invitations'] button", "/app/settings/members")
	if got := owner.text(".flash"); got != "Invitation sent." {
		t.Fatalf("flash %q", got)
	}
	if !owner.visible(`[data-invitation="new.person@a.example"]`) {
		t.Fatalf("pending invitations: %q", owner.text("main"))
	}
	checkAxeDark(t, owner)

	msg := e.smtp.Next(t, "new.person@a.example")
	link := msg.Link(testBaseURL + "/app/invitations/")
	if link == "" {
		t.Fatalf("the invitation mail has no accept link:\n%s", msg.Text)
	}
	invitee := e.browser(t)
	invitee.open(strings.TrimPrefix(link, testBaseURL))
	if got := invitee.text("h1"); got != "Join Org A" {
		t.Fatalf("invitation page heading %q", got)
	}
	checkAxe(t, invitee)
	invitee.submit("form[action^='/app/invitations/'] button", "/app/settings/members")
	if got := invitee.text(".flash"); !strings.Contains(got, "joined") {
		t.Fatalf("after accepting: %q at %s", got, invitee.location())
	}
	if got := invitee.text(".workspace"); !strings.Contains(got, "Org A") {
		t.Fatalf("the new member's workspace: %q", got)
	}
	// The link is spent.
	invitee.open(strings.TrimPrefix(link, testBaseURL))
	if got := invitee.text("h1"); got != "This invitation can't be used" {
		t.Fatalf("a spent invitation: %q", got)
	}

	// The owner sees the new admin, makes them a member, then removes them.
	owner.open("/app/settings/members")
	row := `tr[data-member="new.person@a.example"]`
	if !owner.visible(row) || owner.visible(`[data-invitation="new.person@a.example"]`) {
		t.Fatalf("members after accepting: %q", owner.text("main"))
	}
	sel := eval[string](owner.page, "role select", fmt.Sprintf(`document.querySelector(%q).id`, row+" select"))
	if got := eval[string](owner.page, "current role", fmt.Sprintf(`document.getElementById(%q).value`, sel)); got != "admin" {
		t.Fatalf("the new member's role shows %q, want admin", got)
	}
	owner.do("choose member", chromedp.SetValue(chromedp.CSS("#"+sel), "member"))
	owner.clickRowButton("new.person@a.example", "form[action$='/role'] button", "/app/settings/members")
	if got := owner.text(".flash"); got != "Role changed." {
		t.Fatalf("flash %q", got)
	}
	if got := eval[string](owner.page, "role now", fmt.Sprintf(`document.getElementById(%q).value`, sel)); got != "member" {
		t.Fatalf("role after the change %q", got)
	}
	owner.acceptConfirms()
	owner.clickRowButton("new.person@a.example", "button.danger", "/app/settings/members")
	if owner.visible(row) {
		t.Fatal("the removed member is still listed")
	}

	// The removed person's session no longer reaches the organisation.
	invitee.open("/app/settings/members")
	invitee.waitPath("/app/workspace")
	if strings.Contains(invitee.text("main"), "Org A") {
		t.Fatalf("a removed member is still offered Org A: %q", invitee.text("main"))
	}
}
