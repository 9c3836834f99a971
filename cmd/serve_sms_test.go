package cmd

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"interviewd/mail/smtptest"
	"interviewd/sms/smstest"
)

func TestServeRejectsBadSMSURL(t *testing.T) {
	const token = "tok-not-for-errors"
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"Flag", []string{"--sms-url", "http://AC1:" + token + "@sms.example/Messages.json?From=%2B15005550006"}, nil,
			"--sms-url: sms: INTERVIEWD_SMS_URL must use https://"},
		{"Env", nil, map[string]string{"INTERVIEWD_SMS_URL": "https://sms.example/Messages.json?From=%2B15005550006"},
			"--sms-url: sms: INTERVIEWD_SMS_URL needs the account's credentials"},
		{"NoSender", []string{"--sms-url", "https://AC1:" + token + "@sms.example/Messages.json"}, nil,
			"--sms-url: sms: INTERVIEWD_SMS_URL needs exactly one sender"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			err := Run(context.Background(), append([]string{"serve", "--data", t.TempDir()}, c.args...), io.Discard, io.Discard, env)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), token) {
				t.Fatalf("got %v, want %q (and no token)", err, c.want)
			}
		})
	}
}

var csrfIn = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// getCSRF opens path and returns the form token its page carries.
func getCSRF(t *testing.T, c *http.Client, base, path string) string {
	t.Helper()
	resp, err := c.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := csrfIn.FindSubmatch(body)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET %s: %d, no form token", path, resp.StatusCode)
	}
	return string(m[1])
}

// The real program texts through --sms-url: the owner adds a phone in Settings →
// Security, and the next sign-in passes two-step with the texted code. The start-up
// line names the provider without its token.
func TestServeTwoStepBySMS(t *testing.T) {
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Acme", "--email", "owner@acme.test")
	smtp, texts := smtptest.Start(t), smstest.Start(t)
	srv := mustBoot(t, "--data", dir, "--smtp-url", smtp.URL, "--sms-url", texts.URL)
	if logs := srv.Logs.String(); !strings.Contains(logs, `"sms":"http://`+smstest.AccountSID+`:xxxxx@127.0.0.1:`) || strings.Contains(logs, smstest.AuthToken) {
		t.Fatalf("start-up line and the SMS provider:\n%s", logs)
	}
	c := appClient(t)
	requestCode(t, c, srv.URL, "owner@acme.test")
	enterCode(t, c, srv.URL, "owner@acme.test", smtp.Next(t, "owner@acme.test").Code())
	csrf := getCSRF(t, c, srv.URL, "/app/workspace")
	if r := postForm(t, c, srv.URL+"/app/workspace", url.Values{"org": {org.OrgID}, "env": {"live"}, "csrf": {csrf}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("choose workspace: %d", r.StatusCode)
	}
	csrf = getCSRF(t, c, srv.URL, "/app/settings/security")
	if r := postForm(t, c, srv.URL+"/app/settings/security/phone", url.Values{"phone": {"+44 7700 900123"}, "csrf": {csrf}}); r.StatusCode != 200 {
		t.Fatalf("add a phone: %d", r.StatusCode)
	}
	code := texts.Next(t, "+447700900123").Code()
	r := postForm(t, c, srv.URL+"/app/settings/security/phone/confirm", url.Values{"code": {code}, "csrf": {csrf}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/app/settings/security?done=phone_added" {
		t.Fatalf("confirm the phone: %d %q", r.StatusCode, r.Header.Get("Location"))
	}

	// A second browser signs in and is asked for the texted code.
	b := appClient(t)
	requestCode(t, b, srv.URL, "owner@acme.test")
	csrf = cookie(b, srv.URL, "interviewd_pre")
	r = postForm(t, b, srv.URL+"/app/signin/code", url.Values{"email": {"owner@acme.test"}, "code": {smtp.Next(t, "owner@acme.test").Code()}, "csrf": {csrf}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in with a phone: %d", r.StatusCode)
	}
	resp, err := b.Get(srv.URL + r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/app/twostep") {
		t.Fatalf("after sign-in with a phone: %d %q, want the two-step check", resp.StatusCode, resp.Header.Get("Location"))
	}
	csrf = getCSRF(t, b, srv.URL, "/app/twostep")
	if r := postForm(t, b, srv.URL+"/app/twostep/sms", url.Values{"csrf": {csrf}}); r.StatusCode != 200 {
		t.Fatalf("text me a code: %d", r.StatusCode)
	}
	r = postForm(t, b, srv.URL+"/app/twostep", url.Values{"method": {"sms"}, "code": {texts.Next(t, "+447700900123").Code()}, "csrf": {csrf}})
	// The owner's one workspace was opened at sign-in: straight in.
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/app" {
		t.Fatalf("two-step by text: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
}
