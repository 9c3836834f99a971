package server

import (
	"bytes"
	"context"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/mail"
)

// withOutboxMail makes the server keep its mail in its own data file's outbox, as it
// does with no --smtp-url.
func withOutboxMail() serveOption {
	return func(c *Config, _ *kv.Options) {
		sender, err := mail.New(mail.Config{BaseURL: testBaseURL}, lateOutbox{c}, zerolog.Nop())
		if err != nil {
			panic(err)
		}
		c.Mail = sender
	}
}

// lateOutbox is the outbox of the store the test server opens after its options ran.
type lateOutbox struct{ c *Config }

func (o lateOutbox) AddOutboxMail(ctx context.Context, m kv.OutboxMail) (kv.OutboxMail, error) {
	return o.c.DB.AddOutboxMail(ctx, m)
}

// outboxMail waits (30 s at most) for the outbox to hold a message to to and returns
// the newest: mail is handed on off the request path.
func outboxMail(t *testing.T, e *testEnv, to string) kv.OutboxMail {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		box, err := e.db.FindOutboxMail(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range box {
			if m.To == to {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message to %s in the outbox (%d messages)", to, len(box))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var codeInSubject = regexp.MustCompile(`\b(\d{6})$`)

// TestAppSignInNamesTheOutbox: with no mail server the sign-in pages say so plainly
// and say where the code is; with one they do not.
func TestAppSignInNamesTheOutbox(t *testing.T) {
	e := mustServe(t, withOutboxMail())
	const plain = "No mail server is configured"
	mustContain(t, "the sign-in page", e.appDo("GET", "/app/signin", nil, nil, false), 200, plain, "interviewd mail outbox")
	b := newSignedOut(e)
	mustContain(t, "the code page", b.post("/app/signin", url.Values{"email": {"a@example.com"}}), 200,
		plain, "interviewd mail outbox", "in the server's log")
	// And the code is where the page says.
	m := codeInSubject.FindStringSubmatch(outboxMail(t, e, "a@example.com").Subject)
	if m == nil {
		t.Fatal("the outbox message carries no code")
	}
	wantRedirect(t, b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {m[1]}}), "/app")

	withMail, _ := mustServeMail(t)
	if r := withMail.appDo("GET", "/app/signin", nil, nil, false); r.status != 200 || bytes.Contains(r.body, []byte(plain)) {
		t.Fatalf("the sign-in page of a server with a mail server: %d, says %q: %v", r.status, plain, bytes.Contains(r.body, []byte(plain)))
	}
}

var invitationLinkIn = regexp.MustCompile(`<input id="invitation-link" class="mono" type="text" readonly value="([^"]+)"`)

// TestAppInviteIntoTheOutbox: with no mail server an invitation is not "sent": the page
// says it is in the outbox and offers its link, read-only, with a copy button; the link
// is the outbox's and opens the invitation. With a mail server, nothing changes.
func TestAppInviteIntoTheOutbox(t *testing.T) {
	e := mustServe(t, withOutboxMail())
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	page := wantPage(t, owner.post(t, "/app/settings/members/invitations", url.Values{"email": {"New@A.example"}, "role": {"member"}}), 200,
		"No mail server is configured: the invitation is in the outbox", `data-copy="#invitation-link"`, `data-invitation="new@a.example"`)
	if strings.Contains(page, "Invitation sent.") {
		t.Fatal("the page says the invitation was sent")
	}
	m := invitationLinkIn.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no read-only invitation link on the page:\n%s", page)
	}
	link := html.UnescapeString(m[1])
	if !strings.HasPrefix(link, testBaseURL+"/app/invitations/") || !strings.Contains(outboxMail(t, e, "new@a.example").Text, link) {
		t.Fatalf("the page's link %q is not the outbox message's", link)
	}
	if r := e.appDo("GET", strings.TrimPrefix(link, testBaseURL), nil, nil, false); r.status != 200 || !bytes.Contains(r.body, []byte("Join Org A")) {
		t.Fatalf("the page's link opens %d", r.status)
	}
	// The link is shown once, right after inviting: never in a list or an address.
	if r := owner.get(t, "/app/settings/members"); bytes.Contains(r.body, []byte(strings.TrimPrefix(link, testBaseURL))) {
		t.Fatal("the members page shows the invitation's link again")
	}

	mailed, _ := mustServeMail(t)
	owner = mailed.mustAppClient(t, "a@example.com", mailed.orgA.ID, kv.EnvLive, "")
	wantRedirect(t, owner.post(t, "/app/settings/members/invitations", url.Values{"email": {"new@a.example"}, "role": {"member"}}),
		"/app/settings/members?done=invited")
}

// TestAppSignInOneWorkspace: a person with one workspace goes straight in (its live
// data) after the code, to where they were going; with two they choose.
func TestAppSignInOneWorkspace(t *testing.T) {
	e, smtp := mustServeMail(t)
	signIn := func(email, next string) response {
		t.Helper()
		b := newSignedOut(e)
		b.post("/app/signin", url.Values{"email": {email}})
		return b.post("/app/signin/code", url.Values{"email": {email}, "code": {smtp.Next(t, email).Code()}, "next": {next}})
	}
	r := signIn("a@example.com", "/app/settings/members")
	if loc := r.header.Get("Location"); r.status != 303 || loc != "/app/settings/members" {
		t.Fatalf("one workspace: %d to %q, want straight to /app/settings/members", r.status, loc)
	}
	in := appUser{token: newSessionToken(t, r)}
	mustContain(t, "the members page", e.appDo("GET", "/app/settings/members", &in, nil, false), 200, "Members of Org A")
	auth, err := e.db.AuthenticateSession(t.Context(), in.token, "", "")
	if err != nil || auth.Org.ID != e.orgA.ID || auth.Session.Environment != kv.EnvLive {
		t.Fatalf("the session's workspace: %s %q %v", auth.Org.Name, auth.Session.Environment, err)
	}
	if r := signIn("a@example.com", ""); r.status != 303 || r.header.Get("Location") != "/app" {
		t.Fatalf("one workspace, nowhere to return to: %d to %q", r.status, r.header.Get("Location"))
	}

	e.mustMember(e.orgB.ID, "a@example.com", kv.RoleMember)
	if r := signIn("a@example.com", "/app/settings/members"); r.status != 303 || r.header.Get("Location") != "/app/workspace?next=%2Fapp%2Fsettings%2Fmembers" {
		t.Fatalf("two workspaces: %d to %q, want the chooser", r.status, r.header.Get("Location"))
	}
}

// newSessionToken returns the session token a response sets.
func newSessionToken(t *testing.T, r response) string {
	t.Helper()
	m := sessionCookieIn.FindStringSubmatch(r.header.Get("Set-Cookie"))
	if m == nil {
		t.Fatalf("no session cookie in %q", r.header.Get("Set-Cookie"))
	}
	return m[1]
}
