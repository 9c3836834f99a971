package server

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
)

// TestAppTwoStepByEmailIsOptIn: a code by email is no second step (the sign-in code came
// from the same mailbox) until an owner or admin of the organisation accepts codes by
// email. Until then, a member of an organisation that requires two-step and has no
// authenticator is asked to set one up; once accepted, the email code passes; once no
// longer accepted, a session that passed by email must pass again.
func TestAppTwoStepByEmailIsOptIn(t *testing.T) {
	e, smtp := mustServeMail(t)
	// The owner has an authenticator, so keeps passing two-step whatever the policy.
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	secret, setup := beginTOTP(t, owner)
	wantPage(t, owner.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {mustTOTP(t, secret, time.Now())}, "setup": {setup}}), 200)
	wantRedirect(t, owner.post(t, "/app/settings/security/require-mfa", url.Values{"require_mfa": {"on"}}), "/app/settings/security?done=policy_saved")
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	member := e.mustAppSession("member@a.example", e.orgA.ID, "live")

	// Off for a new organisation: no email code is offered or sent; an authenticator is.
	r := e.appDo("GET", "/app/twostep", &member, nil, false)
	mustContain(t, "the two-step page", r, 200, `action="/app/twostep/totp"`, "Set up an authenticator app")
	if bytes.Contains(r.body, []byte(`action="/app/twostep/email"`)) {
		t.Fatal("the two-step page offers a code by email the organisation has not accepted")
	}
	r = e.appDo("POST", "/app/twostep/email", &member, nil, true)
	mustContain(t, "asking for an email code", r, 403, "Org A does not accept codes by email")
	r = e.appDo("POST", "/app/twostep", &member, url.Values{"method": {"email"}, "code": {"123456"}}, true)
	mustContain(t, "passing with an email code", r, 403, "Org A does not accept codes by email")

	// The policy is the owner's and admins' to set, and shown to them only.
	page := wantPage(t, owner.get(t, "/app/settings/security"), 200, `name="email_codes" value="on"`)
	if strings.Contains(page, `name="email_codes" value="on" checked`) {
		t.Fatal("codes by email are shown as accepted by default")
	}
	wantRedirect(t, owner.post(t, "/app/settings/security/email-codes", url.Values{"email_codes": {"on"}}), "/app/settings/security?done=email_codes_on")
	wantPage(t, owner.get(t, "/app/settings/security"), 200, `name="email_codes" value="on" checked`)

	// Accepted: the member passes with a code by email.
	r = e.appDo("GET", "/app/twostep", &member, nil, false)
	mustContain(t, "the two-step page", r, 200, `action="/app/twostep/email"`, "we&#39;ll email you a code")
	mustContain(t, "asking for an email code", e.appDo("POST", "/app/twostep/email", &member, nil, true), 200, "We sent a six-digit code")
	code := smtp.Next(t, "member@a.example").Code()
	r = e.appDo("POST", "/app/twostep", &member, url.Values{"method": {"email"}, "code": {code}}, true)
	wantRedirect(t, r, "/app")
	passed := member
	passed.token = newSessionToken(t, r)
	if r := e.appDo("GET", "/app/studies", &passed, nil, false); r.status != 200 {
		t.Fatalf("after passing by email: %d %q", r.status, r.header.Get("Location"))
	}
	if r := e.appDo("GET", "/app/settings/security", &passed, nil, false); bytes.Contains(r.body, []byte(`name="email_codes"`)) {
		t.Fatal("a member is shown the organisation's policy form")
	}

	// No longer accepted: the check passed by email no longer counts in Org A.
	wantRedirect(t, owner.post(t, "/app/settings/security/email-codes", url.Values{}), "/app/settings/security?done=email_codes_off")
	r = e.appDo("GET", "/app/studies", &passed, nil, false)
	if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), "/app/twostep") {
		t.Fatalf("a session that passed by email after the organisation stopped accepting it: %d %q", r.status, r.header.Get("Location"))
	}
}

// TestAppEmailFallbackNeedsTheOrganisation: a person with an authenticator keeps the
// email fallback switched on by default, but it stands in only where the organisation
// accepts codes by email.
func TestAppEmailFallbackNeedsTheOrganisation(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	secret, setup := beginTOTP(t, owner)
	wantPage(t, owner.post(t, "/app/settings/security/totp/confirm", url.Values{"code": {mustTOTP(t, secret, time.Now())}, "setup": {setup}}), 200,
		"Two-step verification is on.", `name="email_fallback" value="on" checked`, "Org A doesn't accept codes by email")

	due := e.mustAppSessionDue("a@example.com")
	r := e.appDo("GET", "/app/twostep?method=email", &due, nil, false)
	mustContain(t, "the two-step page", r, 200, `name="method" value="totp"`)
	if bytes.Contains(r.body, []byte(`action="/app/twostep/email"`)) || bytes.Contains(r.body, []byte("Email me a code")) {
		t.Fatal("the email fallback is offered though no organisation of the person accepts codes by email")
	}
	mustContain(t, "asking for an email code", e.appDo("POST", "/app/twostep/email", &due, nil, true), 403, "does not accept codes by email")

	if _, err := e.db.SetTwoStepEmail(t.Context(), kv.TwoStepEmailInput{OrgID: e.orgA.ID, Actor: due.user, On: true}); err != nil {
		t.Fatal(err)
	}
	r = e.appDo("GET", "/app/twostep?method=email", &due, nil, false)
	mustContain(t, "the two-step page", r, 200, `action="/app/twostep/email"`)
}

// acceptEmailCodes makes org accept codes by email as a second step, its owner (the
// user with ownerEmail) acting.
func (e *testEnv) acceptEmailCodes(org kv.ID, ownerEmail string) {
	e.t.Helper()
	owner, err := e.db.FindUserByEmail(context.Background(), ownerEmail)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.SetTwoStepEmail(context.Background(), kv.TwoStepEmailInput{OrgID: org, Actor: owner.ID, On: true}); err != nil {
		e.t.Fatal(err)
	}
}
