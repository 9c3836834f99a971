package server

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
	preRandBytes = 16
	preMACBytes  = 16
	preTokenLen  = 43 // base64url of preRandBytes+preMACBytes, unpadded
)

// derivedKey is a key for one purpose, derived from the instance's secret, so no two
// uses of the secret can stand in for each other.
func derivedKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("interviewd derived key v1\x00" + purpose))
	return m.Sum(nil)
}

// preMAC is the MAC half of a pre-session token over its random half.
func (s *Server) preMAC(random []byte) []byte {
	m := hmac.New(sha256.New, s.app.preKey)
	m.Write(random)
	return m.Sum(nil)[:preMACBytes]
}

// newPreToken returns a fresh pre-session token.
func (s *Server) newPreToken() string {
	var b [preRandBytes + preMACBytes]byte
	_, _ = rand.Read(b[:preRandBytes])
	copy(b[preRandBytes:], s.preMAC(b[:preRandBytes]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validPre reports, in constant time over the MAC, whether tok is a pre-session token
// this server issued.
func (s *Server) validPre(tok string) bool {
	if len(tok) != preTokenLen {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(tok) // one spelling per token
	if err != nil || len(raw) != preRandBytes+preMACBytes {
		return false
	}
	return hmac.Equal(raw[preRandBytes:], s.preMAC(raw[:preRandBytes]))
}

// setPreCookie gives the browser a pre-session token (for the sign-in forms), unless
// it already holds a valid one (kept, so a code asked for with it stays usable), and
// returns it.
func (s *Server) setPreCookie(r *pipeline.Request) string {
	a := appOf(r)
	if a.pre != "" {
		return a.pre
	}
	a.pre = s.newPreToken()
	s.setAppCookie(r, appPreCookie, a.pre, 0)
	return a.pre
}
