package kv

import (
	"context"
	"image/png"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// otpCode is what an authenticator app shows for secret at t.
func otpCode(tb testing.TB, secret string, at time.Time) string {
	tb.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestTOTPMatchesAuthenticators(t *testing.T) {
	for i := range int64(50) {
		secret := newTOTPSecret()
		at := time.Unix(1_700_000_000+i*7919*30+i, 0)
		got, ok := totpCode(secret, at.Unix()/30)
		if !ok || got != otpCode(t, secret, at) {
			t.Fatalf("secret %s at %v: ours %q, pquerna/otp %q", secret, at, got, otpCode(t, secret, at))
		}
	}
	// RFC 6238 appendix B, SHA-1, last six digits.
	rfc := totpEncoding.EncodeToString([]byte("12345678901234567890"))
	for unix, want := range map[int64]string{59: "287082", 1111111109: "081804", 1234567890: "005924", 20000000000: "353130"} {
		if got, _ := totpCode(rfc, unix/30); got != want {
			t.Errorf("t=%d: %s, want %s", unix, got, want)
		}
	}
}

// enrol signs in as email and turns TOTP on; it returns the session, the secret and the
// recovery codes.
func enrol(tb testing.TB, db *DB, clk *clock, email string) (SessionStart, string, []string) {
	tb.Helper()
	ctx := context.Background()
	s := signInAs(tb, db, email)
	setup, err := db.BeginTOTP(ctx, s.Token)
	if err != nil {
		tb.Fatal(err)
	}
	codes, err := db.ConfirmTOTP(ctx, s.Token, otpCode(tb, setup.Secret, clk.now()))
	if err != nil {
		tb.Fatal(err)
	}
	return s, setup.Secret, codes
}

func TestTOTPSetup(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	setup, err := db.BeginTOTP(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	// The URL is what authenticator apps read; the QR image is made from it.
	key, err := otp.NewKeyFromURL(setup.URL)
	if err != nil || key.Secret() != setup.Secret || key.Issuer() != "interviewd" || key.AccountName() != "acme@example.com" {
		t.Fatalf("url %q: %v", setup.URL, err)
	}
	img, err := key.Image(200, 200)
	if err != nil || png.Encode(io.Discard, img) != nil {
		t.Fatalf("qr: %v", err)
	}
	if _, err := db.ConfirmTOTP(ctx, s.Token, wrongCode(otpCode(t, setup.Secret, clk.now()))); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("wrong confirm: %v", err)
	}
	if u, _ := db.FindUserByID(ctx, s.User.ID); u.TOTPEnabled {
		t.Fatal("enabled by a wrong code")
	}
	codes, err := db.ConfirmTOTP(ctx, s.Token, otpCode(t, setup.Secret, clk.now()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if n, ok := ParseRecoveryCode(c); !ok || len(c) != 11 || seen[n] {
			t.Fatalf("recovery code %q", c)
		}
		seen[c] = true
	}
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes", len(codes))
	}
	u, _ := db.FindUserByID(ctx, s.User.ID)
	if !u.TOTPEnabled || u.RecoveryCodesLeft != 10 || !NeedsTwoStep(u, Org{}) {
		t.Fatalf("user %+v", u)
	}
	auth, _ := db.AuthenticateSession(ctx, s.Token, "", "")
	if !auth.Session.TwoStepPassed || auth.TwoStepDue() {
		t.Fatalf("the enrolling session did not pass: %+v", auth.Session)
	}
	// An hour-old pending secret is gone.
	if _, err := db.BeginTOTP(ctx, s.Token); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Hour)
	if _, err := db.ConfirmTOTP(ctx, s.Token, "123456"); reason(err) != "ECONFLICT totp_not_started" {
		t.Fatalf("stale pending: %v", err)
	}
}

func TestPassTwoStepTOTP(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	_, secret, _ := enrol(t, db, clk, "acme@example.com")
	s := signInAs(t, db, "acme@example.com")
	auth, _ := db.AuthenticateSession(ctx, s.Token, "", "")
	if !auth.TwoStepDue() {
		t.Fatal("two-step not due after sign-in with TOTP on")
	}
	// The code that confirmed the set-up cannot be used again in the same step.
	pass := func(code string) (TwoStepPassed, error) {
		return db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodTOTP, Code: code})
	}
	if _, err := pass(otpCode(t, secret, clk.now())); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("reused step: %v", err)
	}
	clk.add(30 * time.Second)
	// Two steps back is outside the ±1 step window.
	if _, err := pass(otpCode(t, secret, clk.now().Add(-60*time.Second))); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("two steps old: %v", err)
	}
	if _, err := pass(otpCode(t, secret, clk.now().Add(60*time.Second))); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("two steps ahead: %v", err)
	}
	got, err := pass(otpCode(t, secret, clk.now().Add(30*time.Second))) // one step ahead: skew
	if err != nil {
		t.Fatalf("one step ahead: %v", err)
	}
	if got.Token == s.Token || !got.Session.TwoStepPassed || got.Session.ID == s.Session.ID || got.Session.CSRF == s.Session.CSRF {
		t.Fatalf("not rotated: %+v", got)
	}
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("old token after two-step: %v", err)
	}
	auth, err = db.AuthenticateSession(ctx, got.Token, "", "")
	if err != nil || auth.TwoStepDue() {
		t.Fatalf("new session %+v %v", auth, err)
	}
	// The step just used (and the ones before it) are spent, on every session.
	s2 := signInAs(t, db, "acme@example.com")
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s2.Token, Method: MethodTOTP, Code: otpCode(t, secret, clk.now())}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("earlier step after a later one: %v", err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s2.Token, Method: "voice", Code: "1"}); reason(err) != "EINVALID validation_error" {
		t.Fatalf("unknown method: %v", err)
	}
}

func TestPassTwoStepFiveFailuresEndSession(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	enrol(t, db, clk, "acme@example.com")
	s := signInAs(t, db, "acme@example.com")
	for i := 1; i <= TwoStepAttempts; i++ {
		_, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodRecovery, Code: "00000-00000"})
		want := "EUNAUTHORIZED invalid_code"
		if i == TwoStepAttempts {
			want = "EUNAUTHORIZED two_step_exhausted"
		}
		if reason(err) != want {
			t.Fatalf("try %d: %v", i, err)
		}
	}
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("session after 5 failures: %v", err)
	}
}

func TestRecoveryCodes(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	_, _, codes := enrol(t, db, clk, "acme@example.com")
	s := signInAs(t, db, "acme@example.com")
	typed := strings.ToUpper(strings.ReplaceAll(codes[3], "-", " "))
	got, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodRecovery, Code: typed})
	if err != nil {
		t.Fatalf("recovery code: %v", err)
	}
	if got.User.RecoveryCodesLeft != 9 || got.Method != MethodRecovery {
		t.Fatalf("left %d", got.User.RecoveryCodesLeft)
	}
	s2 := signInAs(t, db, "acme@example.com")
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s2.Token, Method: MethodRecovery, Code: codes[3]}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("used code again: %v", err)
	}
	// Regenerating needs a passed session and voids every old code.
	if _, err := db.RegenerateRecoveryCodes(ctx, s2.Token); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("regenerate unpassed: %v", err)
	}
	fresh, err := db.RegenerateRecoveryCodes(ctx, got.Token)
	if err != nil || len(fresh) != 10 {
		t.Fatalf("regenerate: %d %v", len(fresh), err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s2.Token, Method: MethodRecovery, Code: codes[0]}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("old code after regenerate: %v", err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s2.Token, Method: MethodRecovery, Code: fresh[9]}); err != nil {
		t.Fatalf("new code: %v", err)
	}
	// Disabling needs a passed session and clears everything.
	if _, err := db.DisableTOTP(ctx, got.Token); err != nil {
		t.Fatal(err)
	}
	u, _ := db.FindUserByID(ctx, s.User.ID)
	if u.TOTPEnabled || u.RecoveryCodesLeft != 0 || NeedsTwoStep(u, Org{}) {
		t.Fatalf("after disable %+v", u)
	}
	s3 := signInAs(t, db, "acme@example.com")
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s3.Token, Method: MethodRecovery, Code: fresh[0]}); reason(err) != "ECONFLICT totp_not_enabled" {
		t.Fatalf("recovery with TOTP off: %v", err)
	}
}

func TestTwoStepByEmail(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org, owner, _, member := team(t, db)
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	acceptEmailCodes(t, db, org, owner.ID)
	// A member without an authenticator, in an organisation that requires two-step.
	s := signInAs(t, db, "member@acme.test")
	auth, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: org.ID, Environment: EnvLive})
	if err != nil || !auth.TwoStepDue() || !NeedsTwoStep(auth.User, auth.Org) {
		t.Fatalf("require_mfa: due=%v %v", auth.TwoStepDue(), err)
	}
	first, err := db.RequestTwoStepEmailCode(ctx, s.Token)
	if err != nil || first.Email != "member@acme.test" || len(first.Code) != 6 {
		t.Fatalf("email code %+v %v", first, err)
	}
	code, _ := db.RequestTwoStepEmailCode(ctx, s.Token) // replaces the first
	if first.Code != code.Code {
		if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodEmail, Code: first.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("replaced code: %v", err)
		}
	}
	clk.add(SignInCodeTTL)
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodEmail, Code: code.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("expired email code: %v", err)
	}
	code, _ = db.RequestTwoStepEmailCode(ctx, s.Token)
	got, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodEmail, Code: code.Code})
	if err != nil {
		t.Fatal(err)
	}
	auth, err = db.AuthenticateSession(ctx, got.Token, "", "")
	if err != nil || auth.TwoStepDue() || auth.Org.ID != org.ID {
		t.Fatalf("after email two-step: %+v %v", auth, err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, got.Token); reason(err) != "ECONFLICT two_step_passed" {
		t.Fatalf("code for a passed session: %v", err)
	}
	// A key in a require_mfa organisation needs exactly this.
	if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "k", Environment: EnvLive, Scopes: []string{ScopeStudiesRead}, TwoStepPassed: auth.Session.TwoStepPassed}); err != nil {
		t.Fatal(err)
	}
	// A user with an authenticator who turned the email fallback off gets no email code.
	clk.add(time.Minute)
	owned, _, _ := enrol(t, db, clk, "owner@acme.test")
	if _, err := db.SetEmailFallback(ctx, owned.Token, false); err != nil {
		t.Fatal(err)
	}
	s2 := signInAs(t, db, "owner@acme.test")
	if _, err := db.RequestTwoStepEmailCode(ctx, s2.Token); reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("fallback off: %v", err)
	}
	if _, err := db.SetEmailFallback(ctx, s2.Token, true); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("turn fallback on without two-step: %v", err)
	}
}

func TestParseRecoveryCode(t *testing.T) {
	for in, want := range map[string]string{"abcde-fghjk": "abcdefghjk", "ABCDE FGHJK": "abcdefghjk", "oil00-11111": "01100111111"[:10]} {
		if got, ok := ParseRecoveryCode(in); !ok || got != want {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "abcde", "abcde-fghjk-m", "abcde-fghju", "abcde_fghjk", "ábcde-fghjk"} {
		if got, ok := ParseRecoveryCode(bad); ok {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func FuzzParseRecoveryCode(f *testing.F) {
	for _, c := range newRecoveryCodes() {
		f.Add(c)
	}
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseRecoveryCode(s)
		if !ok {
			return
		}
		if len(got) != recoveryCodeLen {
			t.Fatalf("%q → %q", s, got)
		}
		for i := range got {
			if !strings.ContainsRune(recoveryAlphabet, rune(got[i])) {
				t.Fatalf("%q → %q", s, got)
			}
		}
		if again, ok := ParseRecoveryCode(got); !ok || again != got {
			t.Fatalf("not idempotent: %q", got)
		}
	})
}

// Replacing an authenticator needs a session that passed two-step with the old one.
func TestReplaceTOTPNeedsTwoStep(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	passed, _, _ := enrol(t, db, clk, "acme@example.com")
	fresh := signInAs(t, db, "acme@example.com")
	if _, err := db.BeginTOTP(ctx, fresh.Token); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("begin from an unpassed session: %v", err)
	}
	setup, err := db.BeginTOTP(ctx, passed.Token)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(30 * time.Second)
	if _, err := db.ConfirmTOTP(ctx, fresh.Token, otpCode(t, setup.Secret, clk.now())); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("confirm from an unpassed session: %v", err)
	}
	if _, err := db.DisableTOTP(ctx, fresh.Token); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("disable from an unpassed session: %v", err)
	}
	codes, err := db.ConfirmTOTP(ctx, passed.Token, otpCode(t, setup.Secret, clk.now()))
	if err != nil || len(codes) != RecoveryCodeCount {
		t.Fatalf("replace: %d %v", len(codes), err)
	}
}

// One TOTP code sent from several sessions at once passes at most one of them.
func TestTOTPCodeUsedOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	_, secret, _ := enrol(t, db, clk, "acme@example.com")
	clk.add(30 * time.Second)
	var sessions []SessionStart
	for range 6 {
		sessions = append(sessions, signInAs(t, db, "acme@example.com"))
	}
	code := otpCode(t, secret, clk.now())
	passed := make(chan bool, len(sessions))
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodTOTP, Code: code})
			passed <- err == nil
		}()
	}
	wg.Wait()
	close(passed)
	n := 0
	for ok := range passed {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("one code passed %d sessions", n)
	}
}
