package kv

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNormalizePhone(t *testing.T) {
	for in, want := range map[string]string{
		"+44 7700 900123":     "+447700900123",
		"+1 (555) 123-4567":   "+15551234567",
		"0044 7700.900.123":   "+447700900123",
		"+290 1234":           "+2901234",
		"+123456789012345":    "+123456789012345",
		"\t+49 151 2345 6789": "+4915123456789",
		"07700 900123":        "",
		"7700900123":          "",
		"+0 7700 900123":      "",
		"+123456":             "",
		"+1234567890123456":   "",
		"+44 7700 9001x3":     "",
		"+44+7700900123":      "",
		"":                    "",
		"+":                   "",
		"+٤٤٧٧٠٠٩٠٠١٢٣":       "",
		strings.Repeat(" ", 40) + "+447700900123": "",
	} {
		got, ok := NormalizePhone(in)
		if got != want || ok != (want != "") {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// FuzzNormalizePhone: whatever is typed, a number is only ever stored as E.164.
func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{"+44 7700 900123", "0044", "(+1) 555", "+", "00", "+0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := NormalizePhone(s)
		if !ok {
			return
		}
		if len(p) < 8 || len(p) > 16 || p[0] != '+' || p[1] < '1' || p[1] > '9' || strings.Trim(p[1:], "0123456789") != "" {
			t.Fatalf("NormalizePhone(%q) = %q", s, p)
		}
		if again, ok := NormalizePhone(p); !ok || again != p {
			t.Fatalf("not idempotent: %q → %q → %q", s, p, again)
		}
	})
}

// mustPhone adds phone for the session through the whole enrolment and returns the user.
func mustPhone(tb testing.TB, db *DB, token, phone string) User {
	tb.Helper()
	ctx := context.Background()
	c, err := db.BeginPhone(ctx, token, phone)
	if err != nil {
		tb.Fatal(err)
	}
	u, err := db.ConfirmPhone(ctx, token, c.Code)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// TestPhoneEnrolment: the code texted to a new number sets it only when read back;
// wrong codes, an expired code and another session's code do not.
func TestPhoneEnrolment(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")

	if _, err := db.BeginPhone(ctx, s.Token, "07700 900123"); reason(err) != "EINVALID validation_error" || !strings.Contains(err.Error(), "phone: Phone must be") {
		t.Fatalf("a national number: %v", err)
	}
	if _, err := db.ConfirmPhone(ctx, s.Token, "123456"); reason(err) != "ECONFLICT phone_not_started" {
		t.Fatalf("confirm before begin: %v", err)
	}
	c, err := db.BeginPhone(ctx, s.Token, "+44 7700 900123")
	if err != nil || c.Phone != "+447700900123" || len(c.Code) != 6 || !c.ExpiresAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("begin: %+v %v", c, err)
	}
	// Another session of the same user cannot finish this session's enrolment.
	other := signInAs(t, db, "acme@example.com")
	if _, err := db.ConfirmPhone(ctx, other.Token, c.Code); reason(err) != "ECONFLICT phone_not_started" {
		t.Fatalf("another session's code: %v", err)
	}
	// Beginning again voids the first code.
	c2, err := db.BeginPhone(ctx, s.Token, "+447700900123")
	if err != nil {
		t.Fatal(err)
	}
	if c2.Code != c.Code {
		if _, err := db.ConfirmPhone(ctx, s.Token, c.Code); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("replaced code: %v", err)
		}
	}
	// Expired after 10 minutes.
	clk.add(PhoneCodeTTL)
	if _, err := db.ConfirmPhone(ctx, s.Token, c2.Code); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("expired code: %v", err)
	}
	if u, _ := db.FindUserByID(ctx, s.User.ID); u.Phone != "" || NeedsTwoStep(u, Org{}) {
		t.Fatalf("a phone was set without its code: %+v", u)
	}
	c3, err := db.BeginPhone(ctx, s.Token, "+447700900123")
	if err != nil {
		t.Fatal(err)
	}
	clk.add(PhoneCodeTTL - time.Second)
	u, err := db.ConfirmPhone(ctx, s.Token, c3.Code[:3]+" "+c3.Code[3:])
	if err != nil || u.Phone != "+447700900123" {
		t.Fatalf("confirm: %+v %v", u, err)
	}
	// The phone turns two-step on; the session that proved it has passed.
	auth, err := db.AuthenticateSession(ctx, s.Token, "", "")
	if err != nil || !NeedsTwoStep(auth.User, auth.Org) || auth.TwoStepDue() {
		t.Fatalf("after confirm: needs=%v due=%v %v", NeedsTwoStep(auth.User, auth.Org), auth.TwoStepDue(), err)
	}
	if auth, _ := db.AuthenticateSession(ctx, other.Token, "", ""); !auth.TwoStepDue() {
		t.Fatal("another session of the user has not passed two-step but is not asked for it")
	}
	// The code is spent.
	if _, err := db.ConfirmPhone(ctx, s.Token, c3.Code); reason(err) != "ECONFLICT phone_not_started" {
		t.Fatalf("the code again: %v", err)
	}
	// Changing or removing the number needs a session that passed two-step.
	if _, err := db.BeginPhone(ctx, other.Token, "+15551234567"); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("change the number unverified: %v", err)
	}
	if _, err := db.RemovePhone(ctx, other.Token); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("remove the number unverified: %v", err)
	}
	if _, err := db.BeginTOTP(ctx, other.Token); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("an authenticator from a session that has not passed the phone's check: %v", err)
	}
	u, err = db.RemovePhone(ctx, s.Token)
	if err != nil || u.Phone != "" || NeedsTwoStep(u, Org{}) {
		t.Fatalf("remove: %+v %v", u, err)
	}
	if _, err := db.RemovePhone(ctx, s.Token); reason(err) != "ECONFLICT phone_not_set" {
		t.Fatalf("remove twice: %v", err)
	}
}

// TestPhoneEnrolmentFiveTries: the fifth wrong code voids the enrolment, even for the
// right code after it; the session lives on.
func TestPhoneEnrolmentFiveTries(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	c, err := db.BeginPhone(ctx, s.Token, "+447700900123")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= PhoneCodeAttempts; i++ {
		want := "EUNAUTHORIZED invalid_code"
		if i == PhoneCodeAttempts {
			want = "EUNAUTHORIZED code_exhausted"
		}
		if _, err := db.ConfirmPhone(ctx, s.Token, wrongCode(c.Code)); reason(err) != want {
			t.Fatalf("try %d: %v, want %s", i, err, want)
		}
	}
	if _, err := db.ConfirmPhone(ctx, s.Token, c.Code); reason(err) != "ECONFLICT phone_not_started" {
		t.Fatalf("the right code after five wrong ones: %v", err)
	}
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); err != nil {
		t.Fatalf("the session after five wrong enrolment codes: %v", err)
	}
	if u, _ := db.FindUserByID(ctx, s.User.ID); u.Phone != "" {
		t.Fatalf("phone set: %q", u.Phone)
	}
	// Four wrong codes then the right one still works.
	c, _ = db.BeginPhone(ctx, s.Token, "+447700900123")
	for range PhoneCodeAttempts - 1 {
		_, _ = db.ConfirmPhone(ctx, s.Token, wrongCode(c.Code))
	}
	if _, err := db.ConfirmPhone(ctx, s.Token, c.Code); err != nil {
		t.Fatalf("the right code on the fifth try: %v", err)
	}
}

// TestTwoStepBySMS: a session due a two-step check passes it with the texted code,
// once; codes expire, are bound to the session and to the phone the user still has.
func TestTwoStepBySMS(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	first := signInAs(t, db, "acme@example.com")
	if _, err := db.RequestTwoStepSMSCode(ctx, first.Token); reason(err) != "ECONFLICT phone_not_set" {
		t.Fatalf("SMS code without a phone: %v", err)
	}
	mustPhone(t, db, first.Token, "+447700900123")
	if _, err := db.RequestTwoStepSMSCode(ctx, first.Token); reason(err) != "ECONFLICT two_step_passed" {
		t.Fatalf("SMS code for a passed session: %v", err)
	}

	s := signInAs(t, db, "acme@example.com")
	if auth, _ := db.AuthenticateSession(ctx, s.Token, "", ""); !auth.TwoStepDue() {
		t.Fatal("a user with a phone is not asked for two-step at sign-in")
	}
	c, err := db.RequestTwoStepSMSCode(ctx, s.Token)
	if err != nil || c.Phone != "+447700900123" || len(c.Code) != 6 || !c.ExpiresAt.Equal(clk.now().Add(10*time.Minute)) {
		t.Fatalf("SMS code: %+v %v", c, err)
	}
	// Another session cannot use it; an expired one fails.
	other := signInAs(t, db, "acme@example.com")
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: other.Token, Method: MethodSMS, Code: c.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("another session's SMS code: %v", err)
	}
	clk.add(PhoneCodeTTL)
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("expired SMS code: %v", err)
	}
	c, _ = db.RequestTwoStepSMSCode(ctx, s.Token)
	passed, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code})
	if err != nil || passed.Method != MethodSMS || passed.Token == s.Token {
		t.Fatalf("pass by SMS: %+v %v", passed, err)
	}
	auth, err := db.AuthenticateSession(ctx, passed.Token, "", "")
	if err != nil || auth.TwoStepDue() {
		t.Fatalf("after passing by SMS: due=%v %v", auth.TwoStepDue(), err)
	}
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("the old token after passing: %v", err)
	}
	// TOTP and recovery codes are not methods of a phone-only user.
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: other.Token, Method: MethodTOTP, Code: "123456"}); reason(err) != "ECONFLICT totp_not_enabled" {
		t.Fatalf("TOTP without an authenticator: %v", err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: other.Token, Method: "text", Code: "123456"}); reason(err) != "EINVALID validation_error" || !strings.Contains(err.Error(), "totp, recovery, email or sms") {
		t.Fatalf("an unknown method: %v", err)
	}
}

// TestTwoStepBySMSRecheck: a code texted before the phone was removed or replaced does
// not pass the check afterwards.
func TestTwoStepBySMSRecheck(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	admin := signInAs(t, db, "acme@example.com")
	u := mustPhone(t, db, admin.Token, "+447700900123")

	// Replaced by another number meanwhile.
	s := signInAs(t, db, "acme@example.com")
	c, err := db.RequestTwoStepSMSCode(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetUserPhone(ctx, u.ID, "+15551234567"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
		t.Fatalf("a code sent to the old number: %v", err)
	}
	// Removed meanwhile: the method is gone, and the attempt does not count as a wrong code.
	c, _ = db.RequestTwoStepSMSCode(ctx, s.Token)
	if c.Phone != "+15551234567" {
		t.Fatalf("code sent to %q", c.Phone)
	}
	if _, err := db.RemovePhone(ctx, admin.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code}); reason(err) != "ECONFLICT phone_not_set" {
		t.Fatalf("a code after the phone was removed: %v", err)
	}
	if _, err := db.RequestTwoStepSMSCode(ctx, s.Token); reason(err) != "ECONFLICT phone_not_set" {
		t.Fatalf("a new code after the phone was removed: %v", err)
	}
}

// TestTwoStepBySMSFiveTries: wrong texted codes count against the session's 5
// two-step tries like any other method; the fifth ends it.
func TestTwoStepBySMSFiveTries(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	mustPhone(t, db, signInAs(t, db, "acme@example.com").Token, "+447700900123")
	s := signInAs(t, db, "acme@example.com")
	c, err := db.RequestTwoStepSMSCode(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= TwoStepAttempts; i++ {
		want := "EUNAUTHORIZED invalid_code"
		if i == TwoStepAttempts {
			want = "EUNAUTHORIZED two_step_exhausted"
		}
		if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: wrongCode(c.Code)}); reason(err) != want {
			t.Fatalf("try %d: %v, want %s", i, err, want)
		}
	}
	if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code}); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("the right code after the session ended: %v", err)
	}
}

// TestTwoStepBySMSUsedOnceUnderRace: of many concurrent tries with the right code,
// exactly one passes (the session is replaced in the same transaction).
func TestTwoStepBySMSUsedOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	mustPhone(t, db, signInAs(t, db, "acme@example.com").Token, "+447700900123")
	s := signInAs(t, db, "acme@example.com")
	c, err := db.RequestTwoStepSMSCode(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.PassTwoStep(ctx, PassTwoStepInput{Token: s.Token, Method: MethodSMS, Code: c.Code}); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d passes with one code, want 1", ok)
	}
}

func TestSetUserPhone(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	u, err := db.FindUserByEmail(ctx, "acme@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u, err = db.SetUserPhone(ctx, u.ID, "+1 555 123 4567"); err != nil || u.Phone != "+15551234567" {
		t.Fatalf("set: %+v %v", u, err)
	}
	if got, _ := db.FindUserByID(ctx, u.ID); got.Phone != "+15551234567" || !NeedsTwoStep(got, Org{}) {
		t.Fatalf("stored: %+v", got)
	}
	if _, err := db.SetUserPhone(ctx, u.ID, "555 1234"); reason(err) != "EINVALID validation_error" {
		t.Fatalf("a bad number: %v", err)
	}
	if _, err := db.SetUserPhone(ctx, NewV4(), "+15551234567"); reason(err) != "ENOTFOUND not_found" && ErrorCode(err) != ENOTFOUND {
		t.Fatalf("an unknown user: %v", err)
	}
	if u, err = db.SetUserPhone(ctx, u.ID, ""); err != nil || u.Phone != "" {
		t.Fatalf("clear: %+v %v", u, err)
	}
}

// TestPhoneEmailFallback: a person whose two-step is a phone may refuse codes by email,
// as a person with an authenticator may; the setting needs a session that passed.
func TestPhoneEmailFallback(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org := mustOrg(t, db, "acme")
	first := signInAs(t, db, "acme@example.com")
	acceptEmailCodes(t, db, org, first.User.ID)
	mustPhone(t, db, first.Token, "+447700900123")
	s := signInAs(t, db, "acme@example.com")
	if _, err := db.RequestTwoStepEmailCode(ctx, s.Token); err != nil {
		t.Fatalf("an email code with the fallback on: %v", err)
	}
	if _, err := db.SetEmailFallback(ctx, s.Token, false); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("turning the fallback off before two-step: %v", err)
	}
	if _, err := db.SetEmailFallback(ctx, first.Token, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RequestTwoStepEmailCode(ctx, s.Token); reason(err) != "EFORBIDDEN email_fallback_off" {
		t.Fatalf("an email code with the fallback off: %v", err)
	}
	if _, err := db.RequestTwoStepSMSCode(ctx, s.Token); err != nil {
		t.Fatalf("a texted code with the fallback off: %v", err)
	}
}
