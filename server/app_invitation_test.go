package server

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
)

var (
	sessionCookieIn = regexp.MustCompile(app.SessionCookie + `=(ivs_[A-Za-z0-9]+)`)
	csrfIn          = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// TestAppInvitationOtherAccount: an invitation opened in a browser signed in as another
// address says so and offers to sign out; accepting from there is refused (no joining
// under the wrong address, no switching accounts on the link alone). "Sign out and
// continue" leads to sign-in as the invited address, back to the invitation.
func TestAppInvitationOtherAccount(t *testing.T) {
	e, smtp := mustServeMail(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	invite := func(email string) string {
		t.Helper()
		wantRedirect(t, owner.post(t, "/app/settings/members/invitations", url.Values{"email": {email}, "role": {"member"}}), "/app/settings/members?done=invited")
		link := smtp.Next(t, email).Link(testBaseURL + "/app/invitations/")
		if link == "" {
			t.Fatalf("no invitation link mailed to %s", email)
		}
		return strings.TrimPrefix(link, testBaseURL)
	}
	b := e.mustAppSession("b@example.com", e.orgB.ID, kv.EnvLive)
	ctx := context.Background()

	t.Run("ErrNewAddress", func(t *testing.T) {
		path := invite("new@example.com")
		page := e.appDo("GET", path, &b, nil, false)
		wantPage(t, page, 200, "This invitation is for <strong>new@example.com</strong>; you're signed in as <strong>b@example.com</strong>",
			`action="`+path+`/switch"`, "Sign out and continue")
		if bytes.Contains(page.body, []byte("Accept and join")) {
			t.Fatal("the page offers to accept as another address")
		}
		r := e.appDo("POST", path, &b, nil, true)
		wantPage(t, r, 403, "This invitation is for <strong>new@example.com</strong>")
		if ck := r.header.Get("Set-Cookie"); strings.Contains(ck, app.SessionCookie) {
			t.Fatalf("a refused accept set a session cookie: %q", ck)
		}
		if _, err := e.db.FindUserByEmail(ctx, "new@example.com"); kv.ErrorCode(err) != kv.ENOTFOUND {
			t.Fatalf("the invited address got a user: %v", err)
		}
		if orgs, _ := e.db.FindUserOrgs(ctx, b.user); len(orgs) != 1 {
			t.Fatalf("b joined under another address: %+v", orgs)
		}
		if r := e.appDo("GET", "/app/settings/security", &b, nil, false); r.status != 200 {
			t.Fatalf("b's own session after the refusal: %d", r.status)
		}
		// Sign out and continue: signed out, to sign-in with the address and the way back.
		r = e.appDo("POST", path+"/switch", &b, nil, true)
		loc := wantRedirect(t, r, "/app/signin?")
		if want := "/app/signin?email=new%40example.com&next=" + url.QueryEscape(path); loc != want {
			t.Fatalf("switch leads to %q, want %q", loc, want)
		}
		if !strings.Contains(r.header.Get("Set-Cookie"), app.SessionCookie+"=;") {
			t.Fatalf("switch did not clear the session cookie: %q", r.header.Get("Set-Cookie"))
		}
		if r := e.appDo("GET", "/app/settings/security", &b, nil, false); r.status != 303 {
			t.Fatalf("b's session after switching: %d, want signed out", r.status)
		}
		signin := e.appDo("GET", loc, nil, nil, false)
		wantPage(t, signin, 200, `value="new@example.com"`, `href="`+path+`"`)
		// Signed out, the link itself is the proof, as always.
		r = newSignedOut(e).post(path, url.Values{})
		wantRedirect(t, r, "/app/settings/members?done=joined")
		b = e.mustAppSession("b@example.com", e.orgB.ID, kv.EnvLive)
	})

	t.Run("OK_ExistingAddressSignsInWithItsCode", func(t *testing.T) {
		c := e.mustMember(e.orgB.ID, "c@example.com", kv.RoleMember)
		path := invite("c@example.com")
		loc := wantRedirect(t, e.appDo("POST", path+"/switch", &b, nil, true), "/app/signin?email=c%40example.com")
		next, _ := url.Parse(loc)
		browser := newSignedOut(e)
		wantPage(t, browser.post("/app/signin", url.Values{"email": {"c@example.com"}, "next": {next.Query().Get("next")}}), 200, "Check your email")
		code := smtp.Next(t, "c@example.com").Code()
		r := browser.post("/app/signin/code", url.Values{"email": {"c@example.com"}, "code": {code}, "next": {next.Query().Get("next")}})
		if r.status != 303 || r.header.Get("Location") != path {
			t.Fatalf("sign-in as the invited address: %d %q, want back to %s", r.status, r.header.Get("Location"), path)
		}
		as := appUser{email: "c@example.com", token: sessionCookieIn.FindStringSubmatch(r.header.Get("Set-Cookie"))[1], user: c.ID}
		page := wantPage(t, e.appDo("GET", path, &as, nil, false), 200, "Accept and join")
		if strings.Contains(page, "signed in as") {
			t.Fatal("the invited address is told it is someone else")
		}
		as.csrf = csrfIn.FindStringSubmatch(page)[1]
		wantRedirect(t, e.appDo("POST", path, &as, nil, true), "/app/settings/members?done=joined")
		if m, err := e.db.FindMembers(ctx, e.orgA.ID); err != nil || !strings.Contains(memberEmails(m), "c@example.com") {
			t.Fatalf("c is not a member of A: %v", err)
		}
	})
}

func memberEmails(ms []kv.Member) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.User.Email)
	}
	return strings.Join(out, " ")
}

// TestAppOwnerInvitation: an admin sees no Cancel on an owner's invitation, and cannot
// cancel or replace it by posting anyway; an owner can.
func TestAppOwnerInvitation(t *testing.T) {
	e, smtp := mustServeMail(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	admin := e.mustAppClient(t, "admin@a.example", e.orgA.ID, kv.EnvLive, kv.RoleAdmin)
	wantRedirect(t, owner.post(t, "/app/settings/members/invitations", url.Values{"email": {"boss@example.com"}, "role": {"owner"}}), "/app/settings/members?done=invited")
	smtp.Next(t, "boss@example.com")
	invs, err := e.db.FindInvitations(context.Background(), e.orgA.ID)
	if err != nil || len(invs) != 1 {
		t.Fatalf("invitations %+v %v", invs, err)
	}
	revoke := "/app/settings/members/invitations/" + invs[0].ID.String() + "/revoke"
	if page := wantPage(t, admin.get(t, "/app/settings/members"), 200, `data-invitation="boss@example.com"`); strings.Contains(page, revoke) {
		t.Fatal("an admin is offered to cancel an owner's invitation")
	}
	wantPage(t, admin.post(t, revoke, nil), 403, "Only an owner can cancel or replace an invitation to be an owner.")
	wantPage(t, admin.post(t, "/app/settings/members/invitations", url.Values{"email": {"boss@example.com"}, "role": {"member"}}), 403,
		"Only an owner can cancel or replace an invitation to be an owner.")
	if invs, _ := e.db.FindInvitations(context.Background(), e.orgA.ID); len(invs) != 1 || invs[0].Role != kv.RoleOwner {
		t.Fatalf("the owner's invitation after the admin's tries: %+v", invs)
	}
	wantPage(t, owner.get(t, "/app/settings/members"), 200, revoke)
	wantRedirect(t, owner.post(t, revoke, nil), "/app/settings/members?done=invitation_revoked")
}
