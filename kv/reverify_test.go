package kv

import (
	"context"
	"testing"
	"time"
)

// TestTOTPSetupAttempts: wrong set-up codes never end the session; the fifth discards the
// pending secret, which must be begun again, and a new set-up starts a fresh count.
func TestTOTPSetupAttempts(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	setup, err := db.BeginTOTP(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	wrong := wrongCode(otpCode(t, setup.Secret, clk.now()))
	for i := 1; i < TOTPSetupAttempts; i++ {
		if _, err := db.ConfirmTOTP(ctx, s.Token, wrong); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("wrong set-up code %d: %v", i, err)
		}
	}
	if _, err := db.ConfirmTOTP(ctx, s.Token, wrong); reason(err) != "ECONFLICT totp_setup_exhausted" {
		t.Fatalf("wrong set-up code %d: %v", TOTPSetupAttempts, err)
	}
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); err != nil {
		t.Fatalf("the session ended over set-up codes: %v", err)
	}
	// The discarded secret's right code no longer turns anything on.
	if _, err := db.ConfirmTOTP(ctx, s.Token, otpCode(t, setup.Secret, clk.now())); reason(err) != "ECONFLICT totp_not_started" {
		t.Fatalf("the discarded set-up's code: %v", err)
	}
	// A new set-up has its own tries, and the session's two-step count was never touched.
	setup, err = db.BeginTOTP(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < TOTPSetupAttempts; i++ {
		if _, err := db.ConfirmTOTP(ctx, s.Token, wrongCode(otpCode(t, setup.Secret, clk.now()))); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("new set-up, wrong code %d: %v", i, err)
		}
	}
	if _, err := db.ConfirmTOTP(ctx, s.Token, otpCode(t, setup.Secret, clk.now())); err != nil {
		t.Fatalf("the new set-up's right code: %v", err)
	}
	if u, _ := db.FindUserByID(ctx, s.User.ID); !u.TOTPEnabled {
		t.Fatal("two-step not on")
	}
}

// TestEmailCodeVoidAfterFallbackOff: an emailed two-step code sent while the fallback
// was on is refused once it is off, as a request for one would be.
func TestEmailCodeVoidAfterFallbackOff(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org := mustOrg(t, db, "acme")
	owned, _, _ := enrol(t, db, clk, "acme@example.com")
	acceptEmailCodes(t, db, org, owned.User.ID)
	pending := signInAs(t, db, "acme@example.com")
	code, err := db.RequestTwoStepEmailCode(ctx, pending.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetEmailFallback(ctx, owned.Token, false); err != nil {
		t.Fatal(err)
	}
	_, err = db.PassTwoStep(ctx, PassTwoStepInput{Token: pending.Token, Method: MethodEmail, Code: code.Code})
	if reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("the emailed code after the fallback was turned off: %v", err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, pending.Token); reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("a new request: %v", err)
	}
	clk.add(time.Minute)
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: owned.Token, Method: MethodEmail, Code: "000000"}); reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("owner's session, email method: %v", err)
	}
	// The code stays void when the fallback comes back on.
	if _, err := db.SetEmailFallback(ctx, owned.Token, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: pending.Token, Method: MethodEmail, Code: code.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("the voided code after the fallback is back on: %v", err)
	}
}

// TestReverify: weakening two-step needs a second step proved in the last 10 minutes;
// a current code (authenticator, recovery or emailed) proves it again.
func TestReverify(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s, secret, _ := enrol(t, db, clk, "acme@example.com")
	// Just enrolled: recent.
	recovery, err := db.RegenerateRecoveryCodes(ctx, s.Token)
	if err != nil {
		t.Fatalf("new codes right after enrolling: %v", err)
	}
	clk.add(ReverifyWithin - time.Second)
	if _, err := db.SetEmailFallback(ctx, s.Token, false); err != nil {
		t.Fatalf("fallback off (stronger) needs nothing: %v", err)
	}
	clk.add(time.Second)
	for name, call := range map[string]func() error{
		"BeginTOTP":               func() error { _, err := db.BeginTOTP(ctx, s.Token); return err },
		"DisableTOTP":             func() error { _, err := db.DisableTOTP(ctx, s.Token); return err },
		"RegenerateRecoveryCodes": func() error { _, err := db.RegenerateRecoveryCodes(ctx, s.Token); return err },
		"SetEmailFallbackOn":      func() error { _, err := db.SetEmailFallback(ctx, s.Token, true); return err },
	} {
		if err := call(); reason(err) != "EFORBIDDEN reverify_required" {
			t.Fatalf("%s %v after proving: %v", name, ReverifyWithin, err)
		}
	}
	if _, err := db.SetEmailFallback(ctx, s.Token, false); err != nil {
		t.Fatalf("fallback off, stale: %v", err)
	}
	// Wrong codes count, as at sign-in, but four leave the session alive.
	for i := 1; i < TwoStepAttempts; i++ {
		if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodTOTP, Code: wrongCode(otpCode(t, secret, clk.now()))}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodEmail, Code: "123456"}); reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("email with the fallback off: %v", err)
	}
	got, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodRecovery, Code: recovery[0]})
	if err != nil || !got.VerifiedRecently(clk.now()) {
		t.Fatalf("a recovery code: %+v %v", got, err)
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodRecovery, Code: recovery[0]}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("a spent recovery code: %v", err)
	}
	if _, err := db.DisableTOTP(ctx, s.Token); err != nil {
		t.Fatalf("turn off after re-verifying: %v", err)
	}
	// Five wrong codes end the session.
	other, _, _ := enrol(t, db, clk, "acme@example.com")
	clk.add(ReverifyWithin)
	for i := 1; i <= TwoStepAttempts; i++ {
		_, err := db.Reverify(ctx, ReverifyInput{Token: other.Token, Method: MethodRecovery, Code: "aaaaa-aaaaa"})
		if want := "EUNAUTHORIZED invalid_code"; i == TwoStepAttempts && reason(err) != "EUNAUTHORIZED two_step_exhausted" || i < TwoStepAttempts && reason(err) != want {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	if _, err := db.AuthenticateSession(ctx, other.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("after five wrong codes: %v", err)
	}
}

// TestReverifyByEmail: without an authenticator, a code by email re-verifies; a two-step
// email code and a re-verification code are not interchangeable.
func TestReverifyByEmail(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	clk.add(ReverifyWithin)
	auth, _ := db.AuthenticateSession(ctx, s.Token, "", "")
	if auth.Session.VerifiedRecently(clk.now()) {
		t.Fatal("a sign-in 10 minutes ago counts as recent")
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodTOTP, Code: "123456"}); reason(err) != "ECONFLICT totp_not_enabled" {
		t.Fatalf("TOTP without an authenticator: %v", err)
	}
	code, err := db.RequestReverifyEmailCode(ctx, s.Token)
	if err != nil || code.Email != "acme@example.com" {
		t.Fatalf("email code: %+v %v", code, err)
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodEmail, Code: code.Code}); err != nil {
		t.Fatalf("the emailed code: %v", err)
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: MethodEmail, Code: code.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("the emailed code twice: %v", err)
	}
	auth, _ = db.AuthenticateSession(ctx, s.Token, "", "")
	if !auth.Session.VerifiedRecently(clk.now()) {
		t.Fatalf("not recent after re-verifying: %+v", auth.Session)
	}
	if _, err := db.Reverify(ctx, ReverifyInput{Token: s.Token, Method: "sms", Code: "1"}); reason(err) != "EINVALID validation_error" {
		t.Fatalf("unknown method: %v", err)
	}
}
