package kv

import (
	"context"
	"testing"
	"time"
)

// acceptEmailCodes makes org (its owner acting) accept codes by email as a second step.
func acceptEmailCodes(tb testing.TB, db *DB, org Org, owner ID) {
	tb.Helper()
	if o, err := db.SetTwoStepEmail(context.Background(), TwoStepEmailInput{OrgID: org.ID, Actor: owner, On: true}); err != nil || !o.TwoStepEmail {
		tb.Fatalf("accept codes by email in %s: %+v %v", org.Name, o, err)
	}
}

// emailTwoStep passes the session's two-step check with a code by email.
func emailTwoStep(tb testing.TB, db *DB, token string) TwoStepPassed {
	tb.Helper()
	ctx := context.Background()
	code, err := db.RequestTwoStepEmailCode(ctx, token)
	if err != nil {
		tb.Fatalf("email code: %v", err)
	}
	passed, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: token, Method: MethodEmail, Code: code.Code})
	if err != nil {
		tb.Fatalf("pass by email: %v", err)
	}
	return passed
}

// TestTwoStepEmailIsOptIn: an organisation accepts codes by email as a second step only
// once an owner or admin says so; a check passed by email counts only while it does.
func TestTwoStepEmailIsOptIn(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org, owner, admin, member := team(t, db)
	if org.TwoStepEmail {
		t.Fatal("a new organisation accepts codes by email")
	}
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: org.ID, Actor: member.ID, On: true}); reason(err) != "EFORBIDDEN role_forbidden" {
		t.Fatalf("a member sets the policy: %v", err)
	}
	outsider := mustOrg(t, db, "elsewhere")
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: outsider.ID, Actor: admin.ID, On: true}); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("another organisation's admin sets the policy: %v", err)
	}
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}

	// Off: a member with no other second step gets no code by email, and none passes.
	s := signInAs(t, db, "member@acme.test")
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: org.ID, Environment: EnvLive}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, s.Token); reason(err) != "EFORBIDDEN email_codes_off" {
		t.Fatalf("an email code by default: %v", err)
	}
	if err := db.EmailSecondStep(ctx, s.Token); reason(err) != "EFORBIDDEN email_codes_off" || err.Error() != "Acme does not accept codes by email as a second step." {
		t.Fatalf("EmailSecondStep by default: %v", err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodEmail, Code: "123456"}); reason(err) != "EFORBIDDEN email_codes_off" {
		t.Fatalf("passing by email by default: %v", err)
	}

	// On: it passes, and the session remembers how.
	acceptEmailCodes(t, db, org, admin.ID)
	if got, _ := db.FindOrgByID(ctx, org.ID); !got.TwoStepEmail {
		t.Fatal("the setting was not stored")
	}
	if err := db.EmailSecondStep(ctx, s.Token); err != nil {
		t.Fatal(err)
	}
	passed := emailTwoStep(t, db, s.Token)
	auth, err := db.AuthenticateSession(ctx, passed.Token, "", "")
	if err != nil || auth.TwoStepDue() || !auth.Session.TwoStepByEmail {
		t.Fatalf("after passing by email: due=%v by email=%v %v", auth.TwoStepDue(), auth.Session.TwoStepByEmail, err)
	}
	grant := ApproveInput{UserID: member.ID, TwoStepPassed: true, TwoStepByEmail: true, OrgID: org.ID, Environment: EnvLive,
		Client: OAuthClient{ID: "svcc_test", Name: "Test"}, Scopes: []string{ScopeStudiesRead}, Resource: "https://mcp.test"}
	if _, _, err := db.Approve(ctx, grant); err != nil {
		t.Fatalf("an OAuth approval after passing by email where it counts: %v", err)
	}

	// Off again: that check no longer counts, and a code by email cannot redo it.
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: org.ID, Actor: owner.ID, On: false}); err != nil {
		t.Fatal(err)
	}
	if auth, err = db.AuthenticateSession(ctx, passed.Token, "", ""); err != nil || !auth.TwoStepDue() {
		t.Fatalf("a check passed by email once the organisation stopped accepting them: due=%v %v", auth.TwoStepDue(), err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, passed.Token); reason(err) != "EFORBIDDEN email_codes_off" {
		t.Fatalf("an email code after the organisation stopped accepting them: %v", err)
	}
	if _, _, err := db.Approve(ctx, grant); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("an OAuth approval after passing by email where it does not count: %v", err)
	}
	grant.TwoStepByEmail = false
	if _, _, err := db.Approve(ctx, grant); err != nil {
		t.Fatalf("an OAuth approval after passing another way: %v", err)
	}
}

// TestTwoStepEmailBeforeAWorkspace: before a workspace is chosen, the email fallback
// stands in when any of the person's organisations accepts codes by email; choosing one
// that does not asks for the second step again, which the authenticator then passes.
func TestTwoStepEmailBeforeAWorkspace(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	acme := mustOrg(t, db, "acme") // owned by acme@example.com
	other, _, err := db.CreateOrg(ctx, OrgInput{Name: "Other", Email: "other@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, _ := enrol(t, db, clk, "acme@example.com")
	owner, _ := db.FindUserByEmail(ctx, "acme@example.com")
	if _, err := db.AddMember(ctx, other.ID, "acme@example.com", RoleMember); err != nil {
		t.Fatal(err)
	}

	s := signInAs(t, db, "acme@example.com")
	if err := db.EmailSecondStep(ctx, s.Token); reason(err) != "EFORBIDDEN email_codes_off" || err.Error() != "None of your organisations accepts codes by email as a second step." {
		t.Fatalf("no organisation accepts codes by email: %v", err)
	}
	acceptEmailCodes(t, db, acme, owner.ID)
	passed := emailTwoStep(t, db, s.Token)
	auth, err := db.AuthenticateSession(ctx, passed.Token, "", "")
	if err != nil || auth.TwoStepDue() {
		t.Fatalf("before a workspace, passed by email: due=%v %v", auth.TwoStepDue(), err)
	}
	if auth, err = db.ChooseWorkspace(ctx, WorkspaceInput{Token: passed.Token, OrgID: other.ID, Environment: EnvLive}); err != nil || !auth.TwoStepDue() {
		t.Fatalf("in an organisation that does not accept codes by email: due=%v %v", auth.TwoStepDue(), err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, passed.Token); reason(err) != "EFORBIDDEN email_codes_off" {
		t.Fatalf("an email code there: %v", err)
	}
	clk.add(time.Minute)
	again, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: passed.Token, Method: MethodTOTP, Code: otpCode(t, secret, clk.now())})
	if err != nil || again.Session.TwoStepByEmail {
		t.Fatalf("the authenticator there: %+v %v", again.Session, err)
	}
	if auth, err = db.AuthenticateSession(ctx, again.Token, "", ""); err != nil || auth.TwoStepDue() || auth.Org.ID != other.ID {
		t.Fatalf("after the authenticator: due=%v org=%s %v", auth.TwoStepDue(), auth.Org.Name, err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, again.Token); reason(err) != "ECONFLICT two_step_passed" {
		t.Fatalf("an email code once passed: %v", err)
	}
}

// TestReverifyByEmailNeedsTheOrganisation: a code by email re-proves the second step of
// a person with an authenticator only where the organisation accepts codes by email;
// for a person with no other second step it always does (it proves what signing in
// again would).
func TestReverifyByEmailNeedsTheOrganisation(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org, owner, _, _ := team(t, db)
	s, _, _ := enrol(t, db, clk, "owner@acme.test")
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: org.ID, Environment: EnvLive}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RequestReverifyEmailCode(ctx, s.Token); reason(err) != "EFORBIDDEN email_codes_off" {
		t.Fatalf("re-verifying by email where codes by email are not accepted: %v", err)
	}
	acceptEmailCodes(t, db, org, owner.ID)
	if _, err := db.RequestReverifyEmailCode(ctx, s.Token); err != nil {
		t.Fatalf("re-verifying by email where they are: %v", err)
	}
	m := signInAs(t, db, "member@acme.test")
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: m.Token, OrgID: org.ID, Environment: EnvLive}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: org.ID, Actor: owner.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RequestReverifyEmailCode(ctx, m.Token); err != nil {
		t.Fatalf("a person with no other second step: %v", err)
	}
}

// TestSignInOnlyWorkspace: asked to, sign-in starts a person with one organisation in
// its live data; with two, or not asked, no workspace is chosen.
func TestSignInOnlyWorkspace(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	acme := mustOrg(t, db, "acme")
	other := mustOrg(t, db, "other")
	signIn := func(email string, only bool) Session {
		t.Helper()
		c, err := db.RequestSignInCode(ctx, email, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := db.SignIn(ctx, SignInInput{Email: email, Code: c.Code, OnlyWorkspace: only})
		if err != nil {
			t.Fatal(err)
		}
		auth, err := db.AuthenticateSession(ctx, s.Token, "", "")
		if err != nil || auth.Session.OrgID != s.Session.OrgID || auth.Session.Environment != s.Session.Environment || auth.Org.ID != s.Session.OrgID {
			t.Fatalf("the stored session %+v differs from the one returned %+v: %v", auth.Session, s.Session, err)
		}
		return s.Session
	}
	if s := signIn("acme@example.com", true); s.OrgID != acme.ID || s.Environment != EnvLive {
		t.Fatalf("one workspace: %v %q", s.OrgID, s.Environment)
	}
	if s := signIn("acme@example.com", false); !s.OrgID.IsZero() || s.Environment != "" {
		t.Fatalf("one workspace, not asked: %v %q", s.OrgID, s.Environment)
	}
	if _, err := db.AddMember(ctx, other.ID, "acme@example.com", RoleMember); err != nil {
		t.Fatal(err)
	}
	if s := signIn("acme@example.com", true); !s.OrgID.IsZero() || s.Environment != "" {
		t.Fatalf("two workspaces: %v %q", s.OrgID, s.Environment)
	}
}
