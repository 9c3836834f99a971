package app

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"interviewd/server/pipeline"
)

// The pre-session token is the CSRF token of the sign-in forms and names the browser a
// sign-in code belongs to. It is self-authenticating: 16 random bytes and 16 bytes of
// an HMAC over them under a key derived from the instance secret, in base64url (43
// characters, like a session's CSRF secret). A token the server did not issue — a
// cookie planted by another site or a neighbouring subdomain to sign the victim in to
// the attacker's account (login CSRF) — is treated as absent: the sign-in page issues
// a fresh one, and a form post carrying it is refused.

const (
	PreRandBytes = 16
	PreMACBytes  = 16
	PreTokenLen  = 43 // base64url of preRandBytes+preMACBytes, unpadded
)

// DerivedKey is a key for one purpose, derived from the instance's secret, so no two
// uses of the secret can stand in for each other.
func DerivedKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("interviewd derived key v1\x00" + purpose))
	return m.Sum(nil)
}

// preMAC is the MAC half of a pre-session token over its random half.
func (s *App) preMAC(random []byte) []byte {
	m := hmac.New(sha256.New, s.PreKey)
	m.Write(random)
	return m.Sum(nil)[:PreMACBytes]
}

// NewPreToken returns a fresh pre-session token.
func (s *App) NewPreToken() string {
	var b [PreRandBytes + PreMACBytes]byte
	_, _ = rand.Read(b[:PreRandBytes])
	copy(b[PreRandBytes:], s.preMAC(b[:PreRandBytes]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidPre reports, in constant time over the MAC, whether tok is a pre-session token
// this server issued.
func (s *App) ValidPre(tok string) bool {
	if len(tok) != PreTokenLen {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(tok) // one spelling per token
	if err != nil || len(raw) != PreRandBytes+PreMACBytes {
		return false
	}
	return hmac.Equal(raw[PreRandBytes:], s.preMAC(raw[:PreRandBytes]))
}

// setPreCookie gives the browser a pre-session token (for the sign-in forms), unless
// it already holds a valid one (kept, so a code asked for with it stays usable), and
// returns it.
func (s *App) setPreCookie(r *pipeline.Request) string {
	a := appOf(r)
	if a.pre != "" {
		return a.pre
	}
	a.pre = s.NewPreToken()
	s.setAppCookie(r, PreCookie, a.pre, 0)
	return a.pre
}
