package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"interviewd/server/app"
	"net/url"
	"testing"
)

// TestAppPreSessionPlanted: a pre-session cookie the server never issued (planted by
// another site to sign the victim in to the attacker's account) counts for nothing: the
// sign-in page replaces it, and a form carrying it is refused as CSRF. One the server
// issued is kept as it is, so a code asked for with it stays usable; a tampered one, or
// one another instance issued, is refused too.
func TestAppPreSessionPlanted(t *testing.T) {
	e, smtp := mustServeMail(t)
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	planted := base64.RawURLEncoding.EncodeToString(raw[:]) // the cookie's length and alphabet
	page := e.do("GET", "/app/signin", "", "", "Cookie", app.PreCookie+"="+planted)
	m := preCookie.FindStringSubmatch(page.header.Get("Set-Cookie"))
	if page.status != 200 || m == nil || m[1] == planted || !bytes.Contains(page.body, []byte(`name="csrf" value="`+m[1]+`"`)) {
		t.Fatalf("sign-in page with a planted cookie: %d, Set-Cookie %q", page.status, page.header.Get("Set-Cookie"))
	}
	if bytes.Contains(page.body, []byte(planted)) {
		t.Fatal("the sign-in form carries the planted token")
	}
	for name, tok := range map[string]string{
		"planted":  planted,
		"tampered": flipFirst(m[1]),
		"foreign":  newSignedOut(mustServe(t)).pre,
	} {
		b := &appBrowserless{e: e, pre: tok}
		if r := b.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 403 || !bytes.Contains(r.body, []byte("did not come from this app")) {
			t.Fatalf("a sign-in form with a %s token: %d", name, r.status)
		}
		if r := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {"123456"}}); r.status != 403 {
			t.Fatalf("a code form with a %s token: %d", name, r.status)
		}
	}
	if n := len(smtp.Messages()); n != 0 {
		t.Fatalf("%d codes mailed for refused forms", n)
	}
	// The issued token is stable: the page keeps it, and the code it asked for signs in.
	b := &appBrowserless{e: e, pre: m[1]}
	if again := e.do("GET", "/app/signin", "", "", "Cookie", app.PreCookie+"="+b.pre); again.header.Get("Set-Cookie") != "" ||
		!bytes.Contains(again.body, []byte(`name="csrf" value="`+b.pre+`"`)) {
		t.Fatalf("an issued token was replaced: %q", again.header.Get("Set-Cookie"))
	}
	if r := b.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 200 {
		t.Fatalf("code request with the issued token: %d", r.status)
	}
	code := smtp.Next(t, "a@example.com").Code()
	if r := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code}}); r.status != 303 {
		t.Fatalf("sign-in with the issued token: %d", r.status)
	}
}

func TestValidPre(t *testing.T) {
	e := mustServe(t)
	s := e.srv.app
	tok := s.NewPreToken()
	if len(tok) != app.PreTokenLen || !s.ValidPre(tok) {
		t.Fatalf("a fresh token %q is not valid", tok)
	}
	for _, bad := range []string{"", tok[:42], tok + "A", "!" + tok[1:], "interviewd_pre=" + tok} {
		if s.ValidPre(bad) {
			t.Errorf("%q passes", bad)
		}
	}
}

// flipFirst changes a token's first character to another of the alphabet.
func flipFirst(tok string) string {
	if tok[0] == 'A' {
		return "B" + tok[1:]
	}
	return "A" + tok[1:]
}

// FuzzValidPre: only a string carrying the MAC of its random half passes, and it is the
// one spelling of its bytes (no look-alike variants of a token).
func FuzzValidPre(f *testing.F) {
	s := &app.App{PreKey: app.DerivedKey([]byte("instance secret"), "app pre-session")}
	tok := s.NewPreToken()
	f.Add(tok)
	f.Add(flipFirst(tok))
	f.Add(tok[:42] + "B")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		if !s.ValidPre(in) {
			return
		}
		raw, err := base64.RawURLEncoding.DecodeString(in)
		if err != nil || base64.RawURLEncoding.EncodeToString(raw) != in {
			t.Fatalf("%q passes but is not its bytes' one spelling", in)
		}
		m := hmac.New(sha256.New, s.PreKey)
		m.Write(raw[:app.PreRandBytes])
		if !bytes.Equal(m.Sum(nil)[:app.PreMACBytes], raw[app.PreRandBytes:]) {
			t.Fatalf("%q passes without the MAC of its random half", in)
		}
	})
}
