package server

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/sms"
	"interviewd/sms/smstest"
)

// withSMS makes the server text through sender.
func withSMS(sender sms.Sender) serveOption {
	return func(c *Config, _ *kv.Options) { c.SMS = sender }
}

// mustServeSMS is mustServe with texts going to a local Twilio-speaking server.
func mustServeSMS(t *testing.T, opts ...serveOption) (*testEnv, *smstest.Server) {
	t.Helper()
	texts := smstest.Start(t)
	sender, err := sms.New(texts.URL)
	if err != nil {
		t.Fatal(err)
	}
	return mustServe(t, append(opts, withSMS(sender))...), texts
}

func mustContain(t *testing.T, what string, r response, status int, wants ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: %d, want %d: %s", what, r.status, status, regexp.MustCompile(`(?s)<main.*</main>`).Find(r.body))
	}
	for _, w := range wants {
		if !bytes.Contains(r.body, []byte(w)) {
			t.Fatalf("%s: the page lacks %q: %s", what, w, regexp.MustCompile(`(?s)<main.*</main>`).Find(r.body))
		}
	}
}

// TestAppPhoneEnrolAndTwoStep: a number added in Settings → Security is texted a code
// and confirmed with it; from then on each sign-in is checked with a texted code; once
// removed, it is not.
func TestAppPhoneEnrolAndTwoStep(t *testing.T) {
	e, texts := mustServeSMS(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	r := e.appDo("GET", "/app/settings/security", &owner, nil, false)
	mustContain(t, "security page", r, 200, `<h2 id="phone-h">Text message</h2>`, `action="/app/settings/security/phone"`, `type="tel"`)

	r = e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"07700 900123"}}, true)
	mustContain(t, "a national number", r, 422, "international form", `value="07700 900123"`, `aria-invalid="true"`)
	if n := len(texts.Messages()); n != 0 {
		t.Fatalf("%d texts sent for a refused number", n)
	}

	r = e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+44 7700 900123"}}, true)
	mustContain(t, "add a number", r, 200, `action="/app/settings/security/phone/confirm"`, "&#43;447700900123", `autocomplete="one-time-code"`)
	msg := texts.Next(t, "+447700900123")
	code := msg.Code()
	if len(code) != 6 || !strings.HasSuffix(msg.Body, "@interviewd.test #"+code) || msg.From != smstest.From {
		t.Fatalf("text %+v", msg)
	}
	wrong := code[:5] + string('0'+(code[5]-'0'+1)%10)
	r = e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {wrong}, "phone": {"+447700900123"}}, true)
	mustContain(t, "a wrong code", r, 422, "not right", `action="/app/settings/security/phone/confirm"`, `name="phone" value="&#43;447700900123"`)
	r = e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {code}, "phone": {"+447700900123"}}, true)
	if r.status != 303 || r.header.Get("Location") != "/app/settings/security?done=phone_added" {
		t.Fatalf("confirm: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("GET", "/app/settings/security?done=phone_added", &owner, nil, false)
	mustContain(t, "after confirming", r, 200, "Text messages are on", `id="phone-number">&#43;447700900123<`, `action="/app/settings/security/phone/remove"`,
		`action="/app/settings/security/email-fallback"`, "have my phone")
	// The confirming session stays usable: it has just proved the phone.
	if r := e.appDo("GET", "/app/settings/developer", &owner, nil, false); r.status != 200 {
		t.Fatalf("the confirming session afterwards: %d", r.status)
	}

	// A new sign-in is asked for a texted code.
	due := e.mustAppSessionDue("a@example.com")
	r = e.appDo("GET", "/app/workspace", &due, nil, false)
	if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), "/app/twostep") {
		t.Fatalf("a new sign-in with a phone: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("GET", "/app/twostep", &due, nil, false)
	mustContain(t, "two-step page", r, 200, `action="/app/twostep/sms"`, "ending 0123", "Text me a code")
	r = e.appDo("POST", "/app/twostep/sms", &due, nil, true)
	mustContain(t, "text me a code", r, 200, `name="method" value="sms"`, "Code from the text message")
	code = texts.Next(t, "+447700900123").Code()
	r = e.appDo("POST", "/app/twostep", &due, url.Values{"method": {"sms"}, "code": {code[:5] + string('0'+(code[5]-'0'+1)%10)}}, true)
	mustContain(t, "a wrong texted code", r, 401, "not right", `name="method" value="sms"`)
	r = e.appDo("POST", "/app/twostep", &due, url.Values{"method": {"sms"}, "code": {code}}, true)
	m := sessionCookieIn.FindStringSubmatch(r.header.Get("Set-Cookie"))
	if r.status != 303 || r.header.Get("Location") != "/app/workspace" || m == nil || m[1] == due.token {
		t.Fatalf("passing by text: %d %q %q", r.status, r.header.Get("Location"), r.header.Get("Set-Cookie"))
	}

	// Removed: sign-ins are no longer checked.
	r = e.appDo("POST", "/app/settings/security/phone/remove", &owner, nil, true)
	if r.status != 303 || r.header.Get("Location") != "/app/settings/security?done=phone_removed" {
		t.Fatalf("remove: %d %q", r.status, r.header.Get("Location"))
	}
	mustContain(t, "after removing", e.appDo("GET", "/app/settings/security?done=phone_removed", &owner, nil, false), 200,
		"Phone number removed", `action="/app/settings/security/phone"`)
	later := e.mustAppSessionDue("a@example.com")
	if r := e.appDo("GET", "/app/workspace", &later, nil, false); r.status != 200 {
		t.Fatalf("a sign-in after removing the phone: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("POST", "/app/settings/security/phone/remove", &owner, nil, true)
	mustContain(t, "remove twice", r, 409, "No phone number")
}

// TestAppPhoneConfirmFiveTries: the fifth wrong code voids the enrolment; the number is
// asked for again.
func TestAppPhoneConfirmFiveTries(t *testing.T) {
	e, texts := mustServeSMS(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+15551234567"}}, true)
	code := texts.Next(t, "+15551234567").Code()
	wrong := code[:5] + string('0'+(code[5]-'0'+1)%10)
	for i := 1; i < kv.PhoneCodeAttempts; i++ {
		r := e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {wrong}, "phone": {"+15551234567"}}, true)
		mustContain(t, "wrong code", r, 422, "not right")
	}
	r := e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {wrong}, "phone": {"+15551234567"}}, true)
	mustContain(t, "fifth wrong code", r, 422, "Too many wrong tries", `action="/app/settings/security/phone"`)
	if bytes.Contains(r.body, []byte(`action="/app/settings/security/phone/confirm"`)) {
		t.Fatal("the confirm form is still offered after five wrong codes")
	}
	r = e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {code}, "phone": {"+15551234567"}}, true)
	mustContain(t, "the right code after five wrong ones", r, 409, "add the number again")
}

// TestAppSMSWithoutProvider: without an SMS provider, text messages are offered
// nowhere, and asking for them is refused with the methods that remain.
func TestAppSMSWithoutProvider(t *testing.T) {
	e, smtp := mustServeMail(t)
	e.acceptEmailCodes(e.orgA.ID, "a@example.com")
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	r := e.appDo("GET", "/app/settings/security", &owner, nil, false)
	if r.status != 200 || bytes.Contains(r.body, []byte("Text message")) || bytes.Contains(r.body, []byte("/phone")) {
		t.Fatalf("security page without a provider offers texts: %d", r.status)
	}
	r = e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+447700900123"}}, true)
	mustContain(t, "adding a number", r, 422, "no SMS provider")

	// A user who has a number (set while a provider was configured).
	if _, err := e.db.SetUserPhone(context.Background(), owner.user, "+447700900123"); err != nil {
		t.Fatal(err)
	}
	due := e.mustAppSessionDue("a@example.com")
	r = e.appDo("GET", "/app/twostep?method=sms", &due, nil, false)
	mustContain(t, "two-step page", r, 200, `action="/app/twostep/email"`)
	if bytes.Contains(r.body, []byte("/app/twostep/sms")) || bytes.Contains(r.body, []byte("method=sms")) || bytes.Contains(r.body, []byte("Text me")) {
		t.Fatal("the two-step page offers texts without a provider")
	}
	r = e.appDo("POST", "/app/twostep/sms", &due, nil, true)
	mustContain(t, "asking for a text", r, 422, "not available on this server. Verify with a code by email.")
	r = e.appDo("POST", "/app/twostep", &due, url.Values{"method": {"sms"}, "code": {"123456"}}, true)
	mustContain(t, "posting method=sms", r, 422, "not available on this server. Verify with a code by email.")
	// Those refusals were not wrong codes: the session still passes by email.
	e.appDo("POST", "/app/twostep/email", &due, nil, true)
	r = e.appDo("POST", "/app/twostep", &due, url.Values{"method": {"email"}, "code": {smtp.Next(t, "a@example.com").Code()}}, true)
	m := sessionCookieIn.FindStringSubmatch(r.header.Get("Set-Cookie"))
	if r.status != 303 || m == nil {
		t.Fatalf("passing by email: %d", r.status)
	}
	// The number can still be removed.
	passed := e.mustPassedSession(m[1], e.orgA.ID)
	mustContain(t, "security page with a number", e.appDo("GET", "/app/settings/security", &passed, nil, false), 200,
		"send texts at the moment", `action="/app/settings/security/phone/remove"`)
	if r := e.appDo("POST", "/app/settings/security/phone/remove", &passed, nil, true); r.status != 303 {
		t.Fatalf("removing the number: %d", r.status)
	}
}

// TestAppSMSProviderRefuses: a number the provider will not text, or a provider that
// fails, is told to the person; nothing is enrolled.
func TestAppSMSProviderRefuses(t *testing.T) {
	e, texts := mustServeSMS(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	texts.Fail(&smstest.Failure{HTTPStatus: 400, Code: 21614, Message: "'To' number is not a valid mobile number"})
	r := e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+447700900123"}}, true)
	mustContain(t, "a landline", r, 422, "receive our texts", `value="&#43;447700900123"`)
	texts.Fail(&smstest.Failure{HTTPStatus: 500, Code: 20500, Message: "Internal Server Error"})
	r = e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+447700900123"}}, true)
	mustContain(t, "a failing provider", r, 502, "could not be sent just now")
	if u, _ := e.db.FindUserByID(context.Background(), owner.user); u.Phone != "" {
		t.Fatalf("phone set: %q", u.Phone)
	}
	texts.Fail(nil)
	if _, err := e.db.SetUserPhone(context.Background(), owner.user, "+447700900123"); err != nil {
		t.Fatal(err)
	}
	due := e.mustAppSessionDue("a@example.com")
	texts.Fail(&smstest.Failure{HTTPStatus: 500, Code: 20500, Message: "Internal Server Error"})
	r = e.appDo("POST", "/app/twostep/sms", &due, nil, true)
	mustContain(t, "a failing provider at two-step", r, 502, "could not be sent", "verify another way")
}

// TestAppSMSRateLimit: texts are admitted by the sign-in limits, keyed by the
// person's email: enrolment texts and two-step texts draw on one allowance.
func TestAppSMSRateLimit(t *testing.T) {
	e, texts := mustServeSMS(t, withRateLimits(pipeline.DefaultRateLimits()))
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	for i := range pipeline.SignInRequestsPerClient - 1 {
		r := e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+447700900123"}}, true)
		mustContain(t, "add a number", r, 200, `action="/app/settings/security/phone/confirm"`)
		if i == 0 {
			code := texts.Next(t, "+447700900123").Code()
			// Confirm on a later round: each new text voids the earlier code, so enrol
			// straight away and keep asking for texts at two-step below.
			if r := e.appDo("POST", "/app/settings/security/phone/confirm", &owner, url.Values{"code": {code}}, true); r.status != 303 {
				t.Fatalf("confirm: %d", r.status)
			}
		}
	}
	due := e.mustAppSessionDue("a@example.com")
	if r := e.appDo("POST", "/app/twostep/sms", &due, nil, true); r.status != 200 {
		t.Fatalf("text %d: %d", pipeline.SignInRequestsPerClient, r.status)
	}
	r := e.appDo("POST", "/app/twostep/sms", &due, nil, true)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("text %d: %d, want 429", pipeline.SignInRequestsPerClient+1, r.status)
	}
	r = e.appDo("POST", "/app/settings/security/phone", &owner, url.Values{"phone": {"+447700900123"}}, true)
	if r.status != 429 {
		t.Fatalf("an enrolment text over the limit: %d, want 429", r.status)
	}
	if n := len(texts.Messages()); n != pipeline.SignInRequestsPerClient {
		t.Fatalf("%d texts sent, want %d (refused requests send nothing)", n, pipeline.SignInRequestsPerClient)
	}
}

// mustPassedSession is the app user holding token (a session that passed two-step),
// with org's live data chosen.
func (e *testEnv) mustPassedSession(token string, org kv.ID) appUser {
	e.t.Helper()
	auth, err := e.db.ChooseWorkspace(context.Background(), kv.WorkspaceInput{Token: token, OrgID: org, Environment: kv.EnvLive})
	if err != nil {
		e.t.Fatal(err)
	}
	return appUser{email: auth.User.Email, token: token, csrf: auth.Session.CSRF, user: auth.User.ID}
}
