package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/mail/smtptest"
)

// appClient is a browser-like HTTP client: cookies kept, redirects not followed.
func appClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func cookie(c *http.Client, base, name string) string {
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// requestCode opens the sign-in page and asks for a code for email.
func requestCode(t *testing.T, c *http.Client, base, email string) {
	t.Helper()
	resp, err := c.Get(base + "/app/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csrf := cookie(c, base, "interviewd_pre")
	if resp.StatusCode != 200 || csrf == "" {
		t.Fatalf("sign-in page: %d, pre-session cookie %q", resp.StatusCode, csrf)
	}
	if r := postForm(t, c, base+"/app/signin", url.Values{"email": {email}, "csrf": {csrf}}); r.StatusCode != 200 {
		t.Fatalf("request code for %s: %d", email, r.StatusCode)
	}
}

// enterCode signs in with the code and checks the session works.
func enterCode(t *testing.T, c *http.Client, base, email, code string) {
	t.Helper()
	csrf := cookie(c, base, "interviewd_pre")
	r := postForm(t, c, base+"/app/signin/code", url.Values{"email": {email}, "code": {code}, "csrf": {csrf}})
	if r.StatusCode != http.StatusSeeOther || cookie(c, base, "interviewd_session") == "" {
		t.Fatalf("enter code: %d, session cookie %q", r.StatusCode, cookie(c, base, "interviewd_session"))
	}
	resp, err := c.Get(base + "/app/workspace")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("workspace after sign-in: %d", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "/signin") {
		t.Fatalf("signed out after entering the code: %s", loc)
	}
}

// The owner `interviewd setup` made signs in to a fresh server with a code the real
// program mails through --smtp-url; an unknown address gets the same page and no mail.
func TestServeSignInCodeBySMTP(t *testing.T) {
	dir := t.TempDir()
	var org struct{ OrgID, UserID, Email string }
	admin(t, &org, "setup", "--data", dir, "--org", "Acme", "--email", "Owner@Acme.test", "--name", "Olive Owner")
	if org.Email != "owner@acme.test" {
		t.Fatalf("setup printed %+v", org)
	}
	smtp := smtptest.Start(t)
	srv := mustBoot(t, "--data", dir, "--smtp-url", smtp.URL, "--mail-from", "Acme Research <research@acme.test>")
	if !strings.Contains(srv.Logs.String(), `"mail":"smtp://127.0.0.1:`) {
		t.Fatalf("start-up line does not name the mail server:\n%s", srv.Logs.String())
	}
	c := appClient(t)
	requestCode(t, c, srv.URL, "nobody@acme.test")
	requestCode(t, c, srv.URL, "owner@acme.test")
	m := smtp.Next(t, "owner@acme.test")
	if m.From != "research@acme.test" || m.Code() == "" {
		t.Fatalf("mail from %q code %q: %s", m.From, m.Code(), m.Text)
	}
	enterCode(t, c, srv.URL, "owner@acme.test", m.Code())
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d messages sent; the unknown address got mail", n)
	}
}

// Without --smtp-url the code is in the log and in `interviewd mail outbox`, which
// reaches the running server through its admin socket.
func TestServeSignInCodeOffline(t *testing.T) {
	dir := t.TempDir()
	var org struct{ OrgID string }
	admin(t, &org, "setup", "--data", dir, "--org", "Acme", "--email", "owner@acme.test")
	srv := mustBoot(t, "--data", dir)
	c := appClient(t)
	requestCode(t, c, srv.URL, "owner@acme.test")
	codeRe := regexp.MustCompile(`Your interviewd sign-in code: ([0-9]{6})`)
	var code string
	deadline := time.Now().Add(60 * time.Second)
	for code == "" {
		if m := codeRe.FindStringSubmatch(srv.Logs.String()); m != nil {
			code = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no code in the log:\n%s", srv.Logs.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	var box []kv.OutboxMail
	admin(t, &box, "mail", "outbox", "--data", dir, "--limit", "5")
	if len(box) != 1 || box[0].To != "owner@acme.test" || !strings.Contains(box[0].Subject, code) || !strings.Contains(box[0].Text, code) {
		t.Fatalf("outbox %+v, code %s", box, code)
	}
	enterCode(t, c, srv.URL, "owner@acme.test", code)
	var out bytes.Buffer
	err := Run(context.Background(), []string{"mail", "outbox", "--data", dir, "--limit", "0"}, &out, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "--limit: want 1 to 200") {
		t.Fatalf("--limit 0: %v", err)
	}
}

func TestServeRejectsBadSMTPURL(t *testing.T) {
	err := Run(context.Background(), []string{"serve", "--data", t.TempDir(), "--smtp-url", "http://mail.test"}, io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "--smtp-url: mail: INTERVIEWD_SMTP_URL must start with smtp:// or smtps://") {
		t.Fatalf("got %v", err)
	}
}
