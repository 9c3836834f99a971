package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// reason returns the kv error's code and reason word ("" for nil).
func reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code + " " + e.Reason
	}
	if err != nil {
		return "uncoded: " + err.Error()
	}
	return ""
}

// signInAs requests a code for email and signs in with it.
func signInAs(tb testing.TB, db *DB, email string) SessionStart {
	tb.Helper()
	ctx := context.Background()
	c, err := db.RequestSignInCode(ctx, email, "")
	if err != nil || !c.Send {
		tb.Fatalf("request code for %s: %+v %v", email, c, err)
	}
	s, err := db.SignIn(ctx, SignInInput{Email: email, Code: c.Code, UserAgent: "test", IP: "127.0.0.1"})
	if err != nil {
		tb.Fatalf("sign in %s: %v", email, err)
	}
	return s
}

func wrongCode(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

func TestSignInCode(t *testing.T) {
	ctx := context.Background()
	t.Run("OK_SixDigitsSingleUseVerifies", func(t *testing.T) {
		clk := newClock(t0)
		db := mustOpenDB(t, clk.now)
		mustOrg(t, db, "acme")
		c, err := db.RequestSignInCode(ctx, "  ACME@example.com ", "")
		if err != nil {
			t.Fatal(err)
		}
		if !c.Send || len(c.Code) != SignInCodeDigits || strings.Trim(c.Code, "0123456789") != "" || c.Email != "acme@example.com" {
			t.Fatalf("code %+v", c)
		}
		if want := t0.Add(10 * time.Minute); !c.ExpiresAt.Equal(want) {
			t.Fatalf("expires %v, want %v", c.ExpiresAt, want)
		}
		s, err := db.SignIn(ctx, SignInInput{Email: "Acme@Example.com", Code: c.Code[:3] + " " + c.Code[3:], UserAgent: "ua", IP: "10.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		if !ParseSessionToken(s.Token) || !s.User.Verified || s.User.LastSignInAt == nil || s.Session.TwoStepPassed || s.Session.CSRF == "" {
			t.Fatalf("session start %+v", s)
		}
		auth, err := db.AuthenticateSession(ctx, s.Token, "", "")
		if err != nil || auth.User.ID != s.User.ID || auth.Session.IP != "10.0.0.1" {
			t.Fatalf("authenticate: %+v %v", auth, err)
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("second use: %v", err)
		}
	})
	t.Run("ErrExpiredAfterTenMinutes", func(t *testing.T) {
		clk := newClock(t0)
		db := mustOpenDB(t, clk.now)
		mustOrg(t, db, "acme")
		c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		clk.add(10*time.Minute - time.Second)
		c2, _ := db.RequestSignInCode(ctx, "acme@example.com", "") // fresh code at 9:59
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code}); err == nil && c.Code != c2.Code {
			t.Fatal("the replaced code still works")
		}
		clk.add(10*time.Minute - time.Second)
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c2.Code}); err != nil {
			t.Fatalf("at 9:59: %v", err)
		}
		c3, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		clk.add(10 * time.Minute)
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c3.Code}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("at 10:00: %v", err)
		}
	})
	t.Run("ErrFiveWrongTriesKillTheCode", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		for i := 1; i <= SignInCodeAttempts; i++ {
			_, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: wrongCode(c.Code)})
			want := "EUNAUTHORIZED invalid_code"
			if i == SignInCodeAttempts {
				want = "EUNAUTHORIZED code_exhausted"
			}
			if reason(err) != want {
				t.Fatalf("try %d: %v, want %s", i, err, want)
			}
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code}); reason(err) != "EUNAUTHORIZED code_exhausted" {
			t.Fatalf("right code after 5 wrong: %v", err)
		}
		c2, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c2.Code}); err != nil {
			t.Fatalf("a new code: %v", err)
		}
	})
	t.Run("OK_FourWrongThenRight", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		for i := 1; i < SignInCodeAttempts; i++ {
			if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: wrongCode(c.Code)}); reason(err) != "EUNAUTHORIZED invalid_code" {
				t.Fatalf("try %d: %v", i, err)
			}
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code}); err != nil {
			t.Fatalf("fifth try right: %v", err)
		}
	})
	t.Run("OK_UnknownEmailLooksTheSame", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		c, err := db.RequestSignInCode(ctx, "nobody@example.com", "")
		if err != nil || c.Send || c.Code != "" || c.Email != "nobody@example.com" || !c.ExpiresAt.Equal(t0.Add(SignInCodeTTL)) {
			t.Fatalf("unknown: %+v %v", c, err)
		}
		for i := 1; i <= SignInCodeAttempts; i++ {
			_, err := db.SignIn(ctx, SignInInput{Email: "nobody@example.com", Code: "123456"})
			want := "EUNAUTHORIZED invalid_code"
			if i == SignInCodeAttempts {
				want = "EUNAUTHORIZED code_exhausted"
			}
			if reason(err) != want {
				t.Fatalf("try %d: %v", i, err)
			}
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "never-asked@example.com", Code: "123456"}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("never requested: %v", err)
		}
		if _, err := db.RequestSignInCode(ctx, "not an email", ""); reason(err) != "EINVALID validation_error" {
			t.Fatalf("malformed: %v", err)
		}
	})
	t.Run("OK_StoresOnlyAKeyedHash", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		var rec signInRecord
		_ = db.view(ctx, func(tx Tx) error {
			_, err := getJSON(tx.Bucket(bucketSignInCodes), db.signInKey("acme@example.com", ""), &rec)
			return err
		})
		if len(rec.Hash) != 32 || string(rec.Hash) != string(db.peopleMAC("signin", "acme@example.com", c.Code)) {
			t.Fatalf("stored %x", rec.Hash)
		}
		other := mustOpenDB(t, newClock(t0).now) // another instance secret, another hash
		if string(other.peopleMAC("signin", "acme@example.com", c.Code)) == string(rec.Hash) {
			t.Fatal("the hash does not depend on the instance secret")
		}
	})
	t.Run("OK_RotatesThePreviousSession", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		first := signInAs(t, db, "acme@example.com")
		c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
		second, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code, Previous: first.Token})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AuthenticateSession(ctx, first.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
			t.Fatalf("old token: %v", err)
		}
		if second.Token == first.Token || second.Session.ID == first.Session.ID || second.Session.CSRF == first.Session.CSRF {
			t.Fatal("not a new session")
		}
	})
	t.Run("OK_CodeBelongsToItsBrowser", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		mustOrg(t, db, "acme")
		mine, _ := db.RequestSignInCode(ctx, "acme@example.com", "mine")
		// A stranger's request and wrong tries, until its code is spent.
		theirs, _ := db.RequestSignInCode(ctx, "acme@example.com", "theirs")
		for range SignInCodeAttempts {
			if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: wrongCode(theirs.Code), Browser: "theirs"}); err == nil {
				t.Fatal("a wrong code signed in")
			}
		}
		if mine.Code != theirs.Code { // one in a million they match; then this proves nothing more
			if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: mine.Code, Browser: "theirs"}); reason(err) != "EUNAUTHORIZED code_exhausted" {
				t.Fatalf("my code from their browser: %v", err)
			}
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: mine.Code, Browser: "elsewhere"}); reason(err) != "EUNAUTHORIZED invalid_code" {
			t.Fatalf("my code from a browser that asked for none: %v", err)
		}
		if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: mine.Code, Browser: "mine"}); err != nil {
			t.Fatalf("my code after a stranger's tries: %v", err)
		}
	})
}

func TestNewDigitsUniform(t *testing.T) {
	var seen [SignInCodeDigits][10]int
	for range 2000 {
		c := newDigits(SignInCodeDigits)
		if len(c) != SignInCodeDigits {
			t.Fatalf("%q", c)
		}
		for i := range c {
			if c[i] < '0' || c[i] > '9' {
				t.Fatalf("%q", c)
			}
			seen[i][c[i]-'0']++
		}
	}
	for pos, counts := range seen {
		for d, n := range counts {
			// 200 expected; below 100 would mean a skewed generator (p < 1e-12 by chance).
			if n < 100 {
				t.Fatalf("digit %d at position %d drawn %d times of 2000", d, pos, n)
			}
		}
	}
}

func TestParseSignInCode(t *testing.T) {
	for in, want := range map[string]string{"123456": "123456", " 123 456 ": "123456", "123-456": "123456", "000000": "000000"} {
		if got, ok := ParseSignInCode(in); !ok || got != want {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "12345a", "١٢٣٤٥٦", "123456\x00", strings.Repeat(" ", 30) + "123456"} {
		if got, ok := ParseSignInCode(bad); ok {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func FuzzParseSignInCode(f *testing.F) {
	for _, s := range []string{"123456", "123 456", "12-34-56", "", "abcdef", "1234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseSignInCode(s)
		if !ok {
			return
		}
		if len(got) != 6 || strings.Trim(got, "0123456789") != "" {
			t.Fatalf("%q → %q", s, got)
		}
		if strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s) != got {
			t.Fatalf("%q → %q: digits changed", s, got)
		}
		if again, ok := ParseSignInCode(got); !ok || again != got {
			t.Fatalf("not idempotent: %q", got)
		}
	})
}

func TestSweepSignInCodes(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	for _, e := range []string{"nobody@example.com", "acme@example.com"} {
		if _, err := db.RequestSignInCode(ctx, e, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.SweepPeople(ctx); err != nil || n != (PeopleSwept{}) {
		t.Fatalf("swept live codes: %+v %v", n, err)
	}
	clk.add(SignInCodeTTL)
	fresh, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
	if n, err := db.SweepPeople(ctx); err != nil || n.SignInCodes != 1 {
		t.Fatalf("sweep %+v %v", n, err)
	}
	if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: fresh.Code}); err != nil {
		t.Fatalf("the fresh code was swept: %v", err)
	}
}

// Guesses that race each other still get 5 tries in all: 4 invalid_code answers, then
// code_exhausted for every other, however the group commit interleaves them.
func TestSignInGuessesRace(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	c, _ := db.RequestSignInCode(ctx, "acme@example.com", "")
	const guesses = 40
	results := make(chan string, guesses)
	var wg sync.WaitGroup
	for i := range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			guess := fmt.Sprintf("%06d", i)
			if guess == c.Code {
				guess = "999999"
				if c.Code == guess {
					guess = "999998"
				}
			}
			_, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: guess})
			results <- reason(err)
		}()
	}
	wg.Wait()
	close(results)
	count := map[string]int{}
	for r := range results {
		count[r]++
	}
	if count["EUNAUTHORIZED invalid_code"] != SignInCodeAttempts-1 || count["EUNAUTHORIZED code_exhausted"] != guesses-SignInCodeAttempts+1 {
		t.Fatalf("answers %v", count)
	}
	if _, err := db.SignIn(ctx, SignInInput{Email: "acme@example.com", Code: c.Code}); reason(err) != "EUNAUTHORIZED code_exhausted" {
		t.Fatalf("right code after the race: %v", err)
	}
}
