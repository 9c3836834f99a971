package kv

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"time"
)

// Sign-in by emailed one-time code: no passwords to leak.
const (
	SignInCodeDigits   = 6
	SignInCodeTTL      = 10 * time.Minute
	SignInCodeAttempts = 5 // wrong tries before the code is dead and a new one is needed
)

// SignInCode is the answer to a code request. For an address no user has, Send is false
// and Code empty, and nothing else differs: the store did the same work (a code record
// is kept for the address either way, so a later wrong code fails the same way too).
// The server must answer the browser identically in both cases and send mail off the
// request path, so neither the page nor its timing tells whether the address exists.
type SignInCode struct {
	Email     string // normalised
	Code      string // the 6 digits to mail; "" when Send is false
	Send      bool
	ExpiresAt time.Time
}

// signInRecord is the stored state of the last code requested for an address.
type signInRecord struct {
	Hash      []byte    `json:"hash"` // keyed hash of the code
	UserID    ID        `json:"user_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Failures  int       `json:"failures"`
}

// Sign-in failures. One answer for a wrong, expired, used or never-sent code and for an
// unknown address.
var (
	errCodeInvalid = Errorf(EUNAUTHORIZED, "invalid_code", "That code is not right or has expired.")
	errCodeSpent   = Errorf(EUNAUTHORIZED, "code_exhausted", "Too many wrong tries: request a new code.")
)

// RequestSignInCode makes a fresh 6-digit code for the address, valid for 10 minutes
// and 5 wrong tries, that only browser can use: browser is an opaque value naming the
// browser that asked (the app's pre-session token). An earlier code the same browser
// asked for stops working; codes other browsers asked for, and their tries, are left
// alone, so a stranger asking for or guessing at codes for an address never voids the
// one its owner holds. It returns EINVALID for a malformed address and otherwise the
// same shape whether or not a user has it (see SignInCode).
func (db *DB) RequestSignInCode(ctx context.Context, email, browser string) (SignInCode, error) {
	email, ok := NormalizeEmail(email)
	if !ok {
		return SignInCode{}, Invalid(errEmail)
	}
	code := newDigits(SignInCodeDigits)
	out := SignInCode{Email: email, ExpiresAt: db.Now().Add(SignInCodeTTL)}
	err := db.update(ctx, func(tx Tx) error {
		out.Code, out.Send = "", false
		rec := signInRecord{Hash: db.peopleMAC("signin", email, code), ExpiresAt: out.ExpiresAt}
		if u, err := userByEmail(tx, email); err == nil {
			rec.UserID = u.ID
			out.Code, out.Send = code, true
		}
		return putJSON(tx.Bucket(bucketSignInCodes), db.signInKey(email, browser), rec)
	})
	if err != nil {
		return SignInCode{}, err
	}
	return out, nil
}

// SignInInput signs a person in with the code mailed to them.
type SignInInput struct {
	Email string
	Code  string
	// Browser is the value the code was requested with (see RequestSignInCode).
	Browser string
	// Previous is the session token the browser already held, if any: it is deleted
	// in the same transaction (the session is rotated at sign-in).
	Previous  string
	UserAgent string
	IP        string
	// OnlyWorkspace starts the session in the live data of the person's organisation
	// when they belong to exactly one: there is nothing to choose.
	OnlyWorkspace bool
}

// SessionStart is a new session and its token: the only time the token exists outside
// the browser's cookie.
type SessionStart struct {
	Session Session
	Token   string
	User    User
}

// SignIn checks the emailed code and, in the same transaction, spends it, marks the
// address verified, records the sign-in and starts a new session (TwoStepPassed false;
// see NeedsTwoStep), in the person's only workspace when asked (OnlyWorkspace). A wrong code counts against the code's 5 tries (that count is
// committed); the fifth kills it. It returns EUNAUTHORIZED invalid_code for a wrong,
// expired or spent code and an unknown address alike, and EUNAUTHORIZED code_exhausted
// once the tries are used up.
func (db *DB) SignIn(ctx context.Context, in SignInInput) (SessionStart, error) {
	email, _ := NormalizeEmail(in.Email)
	code, okCode := ParseSignInCode(in.Code)
	token, hash := newSessionToken()
	csrf := newCSRFSecret()
	var out SessionStart
	var fail error
	err := db.update(ctx, func(tx Tx) error {
		out, fail = SessionStart{}, nil
		b := tx.Bucket(bucketSignInCodes)
		key := db.signInKey(email, in.Browser)
		var rec signInRecord
		ok, err := getJSON(b, key, &rec)
		if err != nil {
			return err
		}
		now := db.Now()
		switch {
		case !ok || !now.Before(rec.ExpiresAt):
			fail = errCodeInvalid
			return nil
		case rec.Failures >= SignInCodeAttempts:
			fail = errCodeSpent
			return nil
		}
		if !okCode || !hmac.Equal(rec.Hash, db.peopleMAC("signin", email, code)) || rec.UserID.IsZero() {
			rec.Failures++
			fail = errCodeInvalid
			if rec.Failures >= SignInCodeAttempts {
				fail = errCodeSpent
			}
			return putJSON(b, key, rec)
		}
		if err := b.Delete(key); err != nil { // single use
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			fail = errCodeInvalid
			return nil
		}
		u.Verified = true
		u.LastSignInAt = &now
		if err := putUser(tx, u); err != nil {
			return err
		}
		if err := db.dropSessionToken(tx, in.Previous); err != nil {
			return err
		}
		s := sessionRecord{Session: Session{
			ID: NewV4(), UserID: u.ID, CreatedAt: now, LastSeenAt: now,
			UserAgent: clip(in.UserAgent, 300), IP: clip(in.IP, 64), CSRF: csrf,
		}, Hash: hash[:]}
		if in.OnlyWorkspace {
			orgs, err := userOrgs(tx, u.ID)
			if err != nil {
				return err
			}
			if len(orgs) == 1 {
				s.OrgID, s.Environment = orgs[0].Org.ID, EnvLive
			}
		}
		if err := putSession(tx, s); err != nil {
			return err
		}
		out = SessionStart{Session: s.Session, Token: token, User: u}
		return nil
	})
	if err != nil {
		return SessionStart{}, err
	}
	if fail != nil {
		return SessionStart{}, fail
	}
	return out, nil
}

// signInKey is the key of the code browser asked for for email.
func (db *DB) signInKey(email, browser string) []byte {
	return db.peopleMAC("signin-email", email, browser)
}

// ParseSignInCode accepts what a person types for a 6-digit code (spaces or one dash
// in the middle allowed, as mail clients and people split it) and returns the digits.
func ParseSignInCode(s string) (string, bool) {
	return parseDigits(s, SignInCodeDigits)
}

// parseDigits keeps the ASCII digits of s when everything else is spaces or dashes and
// there are exactly n of them.
func parseDigits(s string, n int) (string, bool) {
	if len(s) > 4*n {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			if b.Len() == n {
				return "", false
			}
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '\t':
		default:
			return "", false
		}
	}
	if b.Len() != n {
		return "", false
	}
	return b.String(), true
}

// newDigits returns n uniformly random decimal digits.
func newDigits(n int) string {
	out := make([]byte, n)
	var buf [8]byte
	for i := range out {
		for {
			_, _ = rand.Read(buf[:1])
			if buf[0] < 250 { // reject 250..255 so every digit is equally likely
				out[i] = '0' + buf[0]%10
				break
			}
		}
	}
	return string(out)
}

// peopleMAC is the keyed hash every sign-in secret is stored as: HMAC-SHA-256 under a
// key derived from the instance secret, over the parts joined unambiguously. A copy of
// the file without the secret's key cannot test guesses offline any faster than the
// server allows.
func (db *DB) peopleMAC(purpose string, parts ...string) []byte {
	k := hmac.New(sha256.New, db.secret)
	k.Write([]byte("interviewd people v1"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(purpose))
	for _, p := range parts {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
