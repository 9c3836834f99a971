package server

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"interviewd/kv"
)

var totpSecretIn = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// beginTOTP starts an authenticator set-up over HTTP and returns the form's fields.
func beginTOTP(t *testing.T, u *appClient) (secret, setup string) {
	t.Helper()
	page := wantPage(t, u.post(t, "/app/settings/security/totp", nil), 200, "Scan this code")
	m := totpSecretIn.FindStringSubmatch(page)
	s := regexp.MustCompile(`name="setup" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil || s == nil {
		t.Fatalf("no set-up on the page:\n%s", page)
	}
	return m[1], strings.ReplaceAll(s[1], "&amp;", "&")
}

func mustTOTP(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAppTOTPSetupWrongCodes: mistyped set-up codes never sign the person out; the
// fifth cancels that set-up with a clear message, and a new one works.
func TestAppTOTPSetupWrongCodes(t *testing.T) {
	e := mustServe(t)
	u := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	secret, setup := beginTOTP(t, u)
	wrong := "000000"
	if mustTOTP(t, secret, time.Now()) == wrong {
		wrong = "000001"
	}
	for i := 1; i < kv.TOTPSetupAttempts; i++ {
		wantPage(t, u.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {wrong}, "setup": {setup}}), 422,
			"That code didn&#39;t match", `id="totp-secret">`+secret+`<`)
	}
	page := wantPage(t, u.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {wrong}, "setup": {setup}}), 409,
		"Too many wrong codes for this set-up, so it was cancelled", "Set up an authenticator app")
	if strings.Contains(page, secret) {
		t.Fatal("the cancelled set-up is still shown")
	}
	// Still signed in, more wrong codes or not.
	wantPage(t, u.get(t, "/app/settings/security"), 200, "Set up an authenticator app")
	wantPage(t, u.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {mustTOTP(t, secret, time.Now())}, "setup": {setup}}), 409,
		"Start setting up the authenticator app again")
	secret, setup = beginTOTP(t, u)
	wantPage(t, u.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {mustTOTP(t, secret, time.Now())}, "setup": {setup}}), 200,
		"Two-step verification is on.")
}

// TestAppTwoStepEmailAfterFallbackOff: a two-step code emailed while the fallback was on
// is refused once the person turned it off, on the two-step page, which then offers no
// email code; the session waiting for its check lives on.
func TestAppTwoStepEmailAfterFallbackOff(t *testing.T) {
	e, smtp := mustServeMail(t)
	e.acceptEmailCodes(e.orgA.ID, "a@example.com")
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")
	ctx := context.Background()
	setup, err := e.db.BeginTOTP(ctx, owner.token)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := url.Parse(setup.URL)
	if _, err := e.db.ConfirmTOTP(ctx, owner.token, mustTOTP(t, secret.Query().Get("secret"), time.Now())); err != nil {
		t.Fatal(err)
	}
	pending := e.mustAppSessionDue("a@example.com")
	if r := e.appDo("POST", "/app/twostep/email", &pending, nil, true); r.status != 200 {
		t.Fatalf("email code request: %d", r.status)
	}
	code := smtp.Next(t, "a@example.com").Code()
	if r := e.appDo("POST", "/app/settings/security/email-fallback", &owner, url.Values{}, true); r.status != 303 {
		t.Fatalf("turning the fallback off: %d", r.status)
	}
	r := e.appDo("POST", "/app/twostep", &pending, url.Values{"method": {"email"}, "code": {code}}, true)
	page := wantPage(t, r, 403, "Codes by email are turned off for this account.", `name="method" value="totp"`)
	if strings.Contains(page, "method=email") || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("the refusal offers email codes or changes the session: %q", r.header.Get("Set-Cookie"))
	}
	wantPage(t, e.appDo("GET", "/app/twostep", &pending, nil, false), 200, "Code from your authenticator app")
}

// TestAppReverify: turning two-step off, replacing the authenticator, accepting email
// codes again, new recovery codes, turning require_mfa off and accepting codes by email
// in the organisation need a second step proved in the last 10 minutes; the
// page asks for a current code (authenticator, recovery or emailed), then the change
// goes through.
func TestAppReverify(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	e, smtp := mustServeMail(t, withClock(clock))
	u := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	secret, setup := beginTOTP(t, u)
	page := wantPage(t, u.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {mustTOTP(t, secret, clock.Now())}, "setup": {setup}}), 200,
		"Two-step verification is on.")
	codes := regexp.MustCompile(`<li>([0-9a-z]{5}-[0-9a-z]{5})</li>`).FindAllStringSubmatch(page, -1)
	if len(codes) != kv.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown", len(codes))
	}
	// Stronger settings need nothing.
	wantRedirect(t, u.post(t, "/app/settings/security/email-fallback", url.Values{}), "/app/settings/security?done=fallback_off")
	wantRedirect(t, u.post(t, "/app/settings/security/require-mfa", url.Values{"require_mfa": {"on"}}), "/app/settings/security?done=policy_saved")
	wantRedirect(t, u.post(t, "/app/settings/security/email-codes", url.Values{}), "/app/settings/security?done=email_codes_off")

	clock.Advance(kv.ReverifyWithin)
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/app/settings/security/totp/disable", nil},
		{"/app/settings/security/totp", nil}, // a new authenticator in place of the one on
		{"/app/settings/security/recovery-codes", nil},
		{"/app/settings/security/email-fallback", url.Values{"email_fallback": {"on"}}},
		{"/app/settings/security/require-mfa", url.Values{}},
		{"/app/settings/security/email-codes", url.Values{"email_codes": {"on"}}},
	} {
		page := wantPage(t, u.post(t, c.path, c.form), 403, "Confirm it&#39;s you", `action="/app/settings/security/reverify"`,
			`<option value="recovery">`)
		if strings.Contains(page, `action="/app/settings/security/reverify/email"`) {
			t.Fatalf("%s: an email code is offered with the fallback off", c.path)
		}
	}
	if user, _ := e.db.FindUserByEmail(context.Background(), "a@example.com"); !user.TOTPEnabled || user.EmailFallback || user.RecoveryCodesLeft != kv.RecoveryCodeCount {
		t.Fatalf("a refused change went through: %+v", user)
	}
	if org, _ := e.db.FindOrgByID(context.Background(), e.orgA.ID); !org.RequireMFA || org.TwoStepEmail {
		t.Fatalf("require_mfa was turned off, or codes by email accepted: %+v", org)
	}
	// A wrong code is shown on the page; the session lives on.
	wantPage(t, u.post(t, "/app/settings/security/reverify", url.Values{"method": {"totp"}, "code": {"12345"}}), 422,
		"That code is not right", `action="/app/settings/security/reverify"`)
	wantRedirect(t, u.post(t, "/app/settings/security/reverify", url.Values{"method": {"recovery"}, "code": {codes[0][1]}}),
		"/app/settings/security?done=reverified")
	wantPage(t, u.get(t, "/app/settings/security?done=reverified"), 200, "For the next 10 minutes")
	wantRedirect(t, u.post(t, "/app/settings/security/require-mfa", url.Values{}), "/app/settings/security?done=policy_saved")
	wantPage(t, u.post(t, "/app/settings/security/recovery-codes", nil), 200, "New recovery codes made.")
	wantRedirect(t, u.post(t, "/app/settings/security/email-fallback", url.Values{"email_fallback": {"on"}}), "/app/settings/security?done=fallback_on")
	wantRedirect(t, u.post(t, "/app/settings/security/email-codes", url.Values{"email_codes": {"on"}}), "/app/settings/security?done=email_codes_on")

	// Ten minutes on, an authenticator code confirms again.
	clock.Advance(kv.ReverifyWithin)
	wantPage(t, u.post(t, "/app/settings/security/totp/disable", nil), 403, "Confirm it&#39;s you", `action="/app/settings/security/reverify/email"`)
	wantRedirect(t, u.post(t, "/app/settings/security/reverify", url.Values{"method": {"totp"}, "code": {mustTOTP(t, secret, clock.Now())}}),
		"/app/settings/security?done=reverified")
	wantRedirect(t, u.post(t, "/app/settings/security/totp/disable", nil), "/app/settings/security?done=totp_off")

	// Without an authenticator, by a code sent by email.
	wantRedirect(t, u.post(t, "/app/settings/security/require-mfa", url.Values{"require_mfa": {"on"}}), "/app/settings/security?done=policy_saved")
	clock.Advance(kv.ReverifyWithin)
	page = wantPage(t, u.post(t, "/app/settings/security/require-mfa", url.Values{}), 403, `action="/app/settings/security/reverify/email"`)
	if strings.Contains(page, `<option value="recovery">`) {
		t.Fatal("an authenticator is offered without one")
	}
	wantPage(t, u.post(t, "/app/settings/security/reverify/email", nil), 200, "Code from your email", `name="method" value="email"`)
	code := smtp.Next(t, "a@example.com").Code()
	wantRedirect(t, u.post(t, "/app/settings/security/reverify", url.Values{"method": {"email"}, "code": {code}}), "/app/settings/security?done=reverified")
	wantRedirect(t, u.post(t, "/app/settings/security/require-mfa", url.Values{}), "/app/settings/security?done=policy_saved")
	if org, _ := e.db.FindOrgByID(context.Background(), e.orgA.ID); org.RequireMFA {
		t.Fatal("require_mfa still on")
	}
}
