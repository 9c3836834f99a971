package kv

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Two-step checks: an authenticator app (TOTP, RFC 6238: SHA-1, 6 digits, 30-second
// steps, ±1 step of clock skew, each step usable once), 10 single-use recovery codes,
// and a code by email as the fallback method. TOTP is the standard's few lines here
// rather than a dependency, so kv keeps to bbolt and go-json; the tests check it
// against github.com/pquerna/otp.
const (
	TOTPIssuer        = "interviewd"
	RecoveryCodeCount = 10
	TwoStepAttempts   = 5 // wrong two-step codes before the session is ended
	// TOTPSetupAttempts is how many wrong codes a pending authenticator set-up takes
	// before it is discarded (and must be begun again). Mistyping while setting up is
	// ordinary, so it has its own count and never ends the session.
	TOTPSetupAttempts  = 5
	totpPeriod         = 30
	totpDigits         = 6
	recoveryCodeLen    = 10
	recoveryAlphabet   = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford's base32, lower-case
	totpPendingTTL     = time.Hour
	totpSecretRawBytes = 20
)

// TwoStepMethod names how a two-step check is passed.
type TwoStepMethod string

const (
	MethodTOTP     TwoStepMethod = "totp"
	MethodRecovery TwoStepMethod = "recovery"
	MethodEmail    TwoStepMethod = "email"
	MethodSMS      TwoStepMethod = "sms" // a code texted to User.Phone (user_phone.go)
)

// twoStepRecord holds a user's two-step secrets; it never leaves kv.
type twoStepRecord struct {
	TOTPSecret    string    `json:"totp_secret,omitempty"` // base32, confirmed
	LastStep      int64     `json:"last_step,omitempty"`   // the last TOTP step accepted
	PendingSecret string    `json:"pending_secret,omitempty"`
	PendingAt     time.Time `json:"pending_at"`
	PendingFails  int       `json:"pending_fails,omitempty"` // wrong codes for the pending secret
	Recovery      [][]byte  `json:"recovery,omitempty"`      // keyed hashes of unused codes
}

// TOTPSetup is a new authenticator secret waiting for its first code (ConfirmTOTP).
// URL is the otpauth:// URL for the QR code; Secret is for typing in by hand.
type TOTPSetup struct {
	Secret string
	URL    string
}

// Two-step errors.
var (
	errTwoStepCode   = Errorf(EUNAUTHORIZED, "invalid_code", "That code is not right or has expired.")
	errTwoStepSpent  = Errorf(EUNAUTHORIZED, "two_step_exhausted", "Too many wrong codes: sign in again.")
	errTwoStepFirst  = Errorf(EFORBIDDEN, "two_step_required", "Pass a two-step check first.")
	errNoTOTP        = Errorf(ECONFLICT, "totp_not_enabled", "Two-step with an authenticator app is not turned on.")
	errNoPendingTOTP = Errorf(ECONFLICT, "totp_not_started", "Start setting up the authenticator app again.")
	errSetupSpent    = Errorf(ECONFLICT, "totp_setup_exhausted", "Too many wrong codes for this set-up, so it was cancelled. Start setting up the authenticator app again: you'll get a new QR code.")
	errEmailFallback = Errorf(EFORBIDDEN, "email_fallback_off", "Codes by email are turned off for this account.")
	errMethod        = Invalid(FieldError{Loc: []any{"method"}, Msg: "Method must be totp, recovery, email or sms.", Type: "enum"})
	errAlreadyPassed = Errorf(ECONFLICT, "two_step_passed", "This session has already passed two-step verification.")
)

// PassTwoStepInput passes the session's two-step check with one method's code.
type PassTwoStepInput struct {
	Token     string
	Method    TwoStepMethod
	Code      string
	UserAgent string
	IP        string
}

// TwoStepPassed is the rotated session after a passed check (User.RecoveryCodesLeft is
// worth showing after a recovery code was used).
type TwoStepPassed struct {
	SessionStart
	Method TwoStepMethod
}

// PassTwoStep checks a TOTP code, a recovery code (spent on success) or the emailed code
// and, in the same transaction, replaces the session with a new one (new token, the old
// one deleted) that has passed two-step. Every wrong code counts (committed); the
// fifth ends the session. EUNAUTHORIZED session_invalid for a bad token, invalid_code
// for a wrong code, two_step_exhausted when the session was ended; EINVALID for an
// unknown method; ECONFLICT totp_not_enabled for TOTP or recovery without an
// authenticator set up, phone_not_set for a texted code (MethodSMS) without a phone;
// EFORBIDDEN email_fallback_off or email_codes_off for an emailed code when the user
// or the organisation does not accept them (EmailSecondStep, checked now, not only
// when the code was sent). A check passed by email is marked so (TwoStepByEmail).
func (db *DB) PassTwoStep(ctx context.Context, in PassTwoStepInput) (TwoStepPassed, error) {
	switch in.Method {
	case MethodTOTP, MethodRecovery, MethodEmail, MethodSMS:
	default:
		return TwoStepPassed{}, errMethod
	}
	if !ParseSessionToken(in.Token) {
		return TwoStepPassed{}, errSession
	}
	hash := sha256.Sum256([]byte(in.Token))
	token, newHash := newSessionToken()
	var out TwoStepPassed
	var fail error
	err := db.update(ctx, func(tx Tx) error {
		out, fail = TwoStepPassed{}, nil
		now := db.Now()
		rec, err := liveSession(tx, hash[:], now)
		if err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		ts, err := twoStepOf(tx, u.ID)
		if err != nil {
			return err
		}
		ok := false
		switch in.Method {
		case MethodTOTP:
			if ok, err = acceptTOTP(&ts, in.Code, now); err != nil {
				return err
			}
		case MethodRecovery:
			if ts.TOTPSecret == "" {
				return errNoTOTP
			}
			if c, valid := ParseRecoveryCode(in.Code); valid {
				mac := db.peopleMAC("recovery", u.ID.String(), c)
				for i, h := range ts.Recovery {
					if hmac.Equal(h, mac) {
						ts.Recovery = append(ts.Recovery[:i:i], ts.Recovery[i+1:]...)
						ok = true
						break
					}
				}
			}
		case MethodEmail:
			refusal, err := emailSecondStep(tx, u, rec.OrgID)
			if err != nil {
				return err
			}
			if refusal != nil {
				// Turned off since the code was sent (or never on): the code is void,
				// and the answer is the one a request for it would now get.
				rec.EmailCodeHash, rec.EmailCodeExpires = nil, nil
				fail = refusal
				return putSession(tx, rec)
			}
			c, valid := ParseSignInCode(in.Code)
			ok = valid && rec.EmailCodeHash != nil && rec.EmailCodeExpires != nil && now.Before(*rec.EmailCodeExpires) &&
				hmac.Equal(rec.EmailCodeHash, db.peopleMAC("two-step-email", rec.ID.String(), c))
		case MethodSMS:
			if ok, err = db.checkSMSCode(rec, u, in.Code, now); err != nil {
				return err
			}
		}
		if !ok {
			rec.TwoStepFailures++
			if rec.TwoStepFailures >= TwoStepAttempts {
				fail = errTwoStepSpent
				return deleteSession(tx, rec)
			}
			fail = errTwoStepCode
			return putSession(tx, rec)
		}
		if err := putTwoStep(tx, u.ID, ts); err != nil {
			return err
		}
		u.RecoveryCodesLeft = len(ts.Recovery)
		if err := putUser(tx, u); err != nil {
			return err
		}
		if err := deleteSession(tx, rec); err != nil {
			return err
		}
		next := sessionRecord{Session: rec.Session, Hash: newHash[:]}
		next.ID = NewV4()
		next.TwoStepPassed = true
		next.TwoStepByEmail = in.Method == MethodEmail
		next.CreatedAt, next.LastSeenAt = now, now
		next.CSRF = newCSRFSecret()
		if in.UserAgent != "" {
			next.UserAgent = clip(in.UserAgent, 300)
		}
		if in.IP != "" {
			next.IP = clip(in.IP, 64)
		}
		if err := putSession(tx, next); err != nil {
			return err
		}
		out = TwoStepPassed{SessionStart: SessionStart{Session: next.Session, Token: token, User: u}, Method: in.Method}
		return nil
	})
	if err != nil {
		return TwoStepPassed{}, err
	}
	if fail != nil {
		return TwoStepPassed{}, fail
	}
	return out, nil
}

// TwoStepEmailCode is a two-step code to mail to Email.
type TwoStepEmailCode struct {
	Email     string
	Code      string
	ExpiresAt time.Time
}

// RequestTwoStepEmailCode makes a 6-digit two-step code for the session, valid 10
// minutes, replacing any earlier one. Where the organisation accepts codes by email, it
// is the fallback for users with an authenticator or a phone (unless they turned it
// off) and the method for users without either whose organisation requires two-step.
// EUNAUTHORIZED for a bad token; EFORBIDDEN email_fallback_off or email_codes_off
// (EmailSecondStep); ECONFLICT two_step_passed when there is nothing to check.
func (db *DB) RequestTwoStepEmailCode(ctx context.Context, token string) (TwoStepEmailCode, error) {
	if !ParseSessionToken(token) {
		return TwoStepEmailCode{}, errSession
	}
	hash := sha256.Sum256([]byte(token))
	code := newDigits(SignInCodeDigits)
	var out TwoStepEmailCode
	err := db.update(ctx, func(tx Tx) error {
		now := db.Now()
		rec, err := liveSession(tx, hash[:], now)
		if err != nil {
			return err
		}
		if err := checkNotPassed(tx, rec); err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		refusal, err := emailSecondStep(tx, u, rec.OrgID)
		if err != nil {
			return err
		}
		if refusal != nil {
			return refusal
		}
		exp := now.Add(SignInCodeTTL)
		rec.EmailCodeHash = db.peopleMAC("two-step-email", rec.ID.String(), code)
		rec.EmailCodeExpires = &exp
		out = TwoStepEmailCode{Email: u.Email, Code: code, ExpiresAt: exp}
		return putSession(tx, rec)
	})
	return out, err
}

// BeginTOTP makes a new authenticator secret for the session's user, kept pending for
// an hour until ConfirmTOTP. Replacing an authenticator already on needs a session that
// passed two-step (EFORBIDDEN two_step_required) recently (EFORBIDDEN
// reverify_required): whoever holds the authenticator holds the account. EUNAUTHORIZED
// for a bad token.
func (db *DB) BeginTOTP(ctx context.Context, token string) (TOTPSetup, error) {
	if !ParseSessionToken(token) {
		return TOTPSetup{}, errSession
	}
	hash := sha256.Sum256([]byte(token))
	secret := newTOTPSecret()
	var out TOTPSetup
	err := db.update(ctx, func(tx Tx) error {
		rec, err := liveSession(tx, hash[:], db.Now())
		if err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		if u.twoStepOn() && !rec.TwoStepPassed {
			return errTwoStepFirst
		}
		if u.TOTPEnabled && !rec.VerifiedRecently(db.Now()) {
			return ErrReverifyRequired
		}
		ts, err := twoStepOf(tx, u.ID)
		if err != nil {
			return err
		}
		ts.PendingSecret, ts.PendingAt, ts.PendingFails = secret, db.Now(), 0
		out = TOTPSetup{Secret: secret, URL: totpURL(u.Email, secret)}
		return putTwoStep(tx, u.ID, ts)
	})
	return out, err
}

// ConfirmTOTP checks a code from the authenticator set up by BeginTOTP, turns two-step
// on for the user, issues 10 new recovery codes (returned only now; earlier ones stop
// working) and marks the session as having passed two-step, just now. EUNAUTHORIZED
// invalid_code for a wrong code, which counts against the set-up's own 5 tries (never
// the session's): the fifth discards the pending secret, ECONFLICT
// totp_setup_exhausted. ECONFLICT totp_not_started without a pending secret (or one
// older than an hour); EFORBIDDEN two_step_required when replacing an authenticator
// from a session that has not passed two-step.
func (db *DB) ConfirmTOTP(ctx context.Context, token, code string) ([]string, error) {
	if !ParseSessionToken(token) {
		return nil, errSession
	}
	hash := sha256.Sum256([]byte(token))
	codes := newRecoveryCodes()
	var fail error
	err := db.update(ctx, func(tx Tx) error {
		fail = nil
		now := db.Now()
		rec, err := liveSession(tx, hash[:], now)
		if err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		if u.twoStepOn() && !rec.TwoStepPassed {
			return errTwoStepFirst
		}
		ts, err := twoStepOf(tx, u.ID)
		if err != nil {
			return err
		}
		if ts.PendingSecret == "" || !now.Before(ts.PendingAt.Add(totpPendingTTL)) {
			return errNoPendingTOTP
		}
		step, ok := verifyTOTP(ts.PendingSecret, code, now, 0)
		if !ok {
			ts.PendingFails++
			fail = errTwoStepCode
			if ts.PendingFails >= TOTPSetupAttempts {
				ts.PendingSecret, ts.PendingAt, ts.PendingFails = "", time.Time{}, 0
				fail = errSetupSpent
			}
			return putTwoStep(tx, u.ID, ts)
		}
		ts.TOTPSecret, ts.LastStep = ts.PendingSecret, step
		ts.PendingSecret, ts.PendingAt, ts.PendingFails = "", time.Time{}, 0
		ts.Recovery = db.recoveryHashes(u.ID, codes)
		if err := putTwoStep(tx, u.ID, ts); err != nil {
			return err
		}
		u.TOTPEnabled, u.RecoveryCodesLeft = true, len(codes)
		if err := putUser(tx, u); err != nil {
			return err
		}
		rec.TwoStepPassed, rec.TwoStepByEmail, rec.TwoStepFailures = true, false, 0
		rec.VerifiedAt = &now
		return putSession(tx, rec)
	})
	if err != nil {
		return nil, err
	}
	if fail != nil {
		return nil, fail
	}
	return codes, nil
}

// RegenerateRecoveryCodes issues 10 new recovery codes (returned only now) and voids the
// old ones. It needs an authenticator turned on (ECONFLICT totp_not_enabled), a session
// that passed two-step (EFORBIDDEN two_step_required) and did so recently (EFORBIDDEN
// reverify_required, see Session.VerifiedRecently).
func (db *DB) RegenerateRecoveryCodes(ctx context.Context, token string) ([]string, error) {
	codes := newRecoveryCodes()
	err := db.withPassedUser(ctx, token, func(tx Tx, s Session, u *User, ts *twoStepRecord) error {
		if ts.TOTPSecret == "" {
			return errNoTOTP
		}
		if !s.VerifiedRecently(db.Now()) {
			return ErrReverifyRequired
		}
		ts.Recovery = db.recoveryHashes(u.ID, codes)
		u.RecoveryCodesLeft = len(codes)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTOTP turns the authenticator off and voids the recovery codes. It needs a
// session that passed two-step (EFORBIDDEN two_step_required) recently (EFORBIDDEN
// reverify_required); ECONFLICT totp_not_enabled when it is already off. An
// organisation that requires two-step then checks this user by email.
func (db *DB) DisableTOTP(ctx context.Context, token string) (User, error) {
	var out User
	err := db.withPassedUser(ctx, token, func(tx Tx, s Session, u *User, ts *twoStepRecord) error {
		if ts.TOTPSecret == "" {
			return errNoTOTP
		}
		if !s.VerifiedRecently(db.Now()) {
			return ErrReverifyRequired
		}
		*ts = twoStepRecord{}
		u.TOTPEnabled, u.RecoveryCodesLeft = false, 0
		out = *u
		return nil
	})
	return out, err
}

// SetEmailFallback turns the email fallback for two-step on or off for the session's
// user. It needs a session that passed two-step when an authenticator is on, and
// turning the fallback on (a weaker second step) needs one that did so recently
// (EFORBIDDEN reverify_required).
func (db *DB) SetEmailFallback(ctx context.Context, token string, on bool) (User, error) {
	var out User
	err := db.withPassedUser(ctx, token, func(tx Tx, s Session, u *User, ts *twoStepRecord) error {
		if on && !u.EmailFallback && u.TOTPEnabled && !s.VerifiedRecently(db.Now()) {
			return ErrReverifyRequired
		}
		u.EmailFallback = on
		out = *u
		return nil
	})
	return out, err
}

// withPassedUser runs fn on the session's user and two-step record in one transaction
// and writes both back; the session must have passed two-step when the user has an
// authenticator on.
func (db *DB) withPassedUser(ctx context.Context, token string, fn func(tx Tx, s Session, u *User, ts *twoStepRecord) error) error {
	if !ParseSessionToken(token) {
		return errSession
	}
	hash := sha256.Sum256([]byte(token))
	return db.update(ctx, func(tx Tx) error {
		rec, err := liveSession(tx, hash[:], db.Now())
		if err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		if u.twoStepOn() && !rec.TwoStepPassed {
			return errTwoStepFirst
		}
		ts, err := twoStepOf(tx, u.ID)
		if err != nil {
			return err
		}
		if err := fn(tx, rec.Session, &u, &ts); err != nil {
			return err
		}
		if err := putTwoStep(tx, u.ID, ts); err != nil {
			return err
		}
		return putUser(tx, u)
	})
}

// emailCodesAllowed reports whether the user accepts a code by email as their second
// step: always without another second step (authenticator or phone), and with one only
// while the fallback is on. Whether it counts also depends on the organisation
// (emailSecondStep), except on the account access API (AccessMethods).
func emailCodesAllowed(u User) bool { return !u.twoStepOn() || u.EmailFallback }

func twoStepOf(tx Tx, user ID) (twoStepRecord, error) {
	var ts twoStepRecord
	_, err := getJSON(tx.Bucket(bucketTwoStep), user[:], &ts)
	return ts, err
}

func putTwoStep(tx Tx, user ID, ts twoStepRecord) error {
	return putJSON(tx.Bucket(bucketTwoStep), user[:], ts)
}

var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func newTOTPSecret() string {
	raw := make([]byte, totpSecretRawBytes)
	_, _ = rand.Read(raw)
	return totpEncoding.EncodeToString(raw)
}

// totpURL is the otpauth:// URL authenticator apps read from the QR code.
func totpURL(email, secret string) string {
	v := url.Values{}
	v.Set("secret", secret)
	v.Set("issuer", TOTPIssuer)
	v.Set("algorithm", "SHA1")
	v.Set("digits", "6")
	v.Set("period", "30")
	return "otpauth://totp/" + url.PathEscape(TOTPIssuer+":"+email) + "?" + v.Encode()
}

// totpCode is RFC 6238's code for step.
func totpCode(secret string, step int64) (string, bool) {
	key, err := totpEncoding.DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", false
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	n := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", n%1_000_000), true
}

// acceptTOTP checks code against the user's authenticator in ts and, when it is right,
// advances ts.LastStep (the caller writes ts back in its transaction), so the code is
// never accepted twice. ECONFLICT totp_not_enabled without an authenticator.
func acceptTOTP(ts *twoStepRecord, code string, now time.Time) (bool, error) {
	if ts.TOTPSecret == "" {
		return false, errNoTOTP
	}
	step, ok := verifyTOTP(ts.TOTPSecret, code, now, ts.LastStep)
	if ok {
		ts.LastStep = step
	}
	return ok, nil
}

// verifyTOTP accepts a code of the step at now or one either side, if that step is
// later than last (so a code is never accepted twice), and returns the step.
func verifyTOTP(secret, code string, now time.Time, last int64) (int64, bool) {
	c, ok := parseDigits(code, totpDigits)
	if !ok {
		return 0, false
	}
	cur := now.Unix() / totpPeriod
	for _, step := range []int64{cur - 1, cur, cur + 1} {
		want, ok := totpCode(secret, step)
		if ok && hmac.Equal([]byte(want), []byte(c)) && step > last {
			return step, true
		}
	}
	return 0, false
}

// newRecoveryCodes returns 10 codes shaped xxxxx-xxxxx (50 random bits each).
func newRecoveryCodes() []string {
	codes := make([]string, RecoveryCodeCount)
	raw := make([]byte, recoveryCodeLen)
	for i := range codes {
		_, _ = rand.Read(raw)
		b := make([]byte, 0, recoveryCodeLen+1)
		for j, r := range raw {
			if j == recoveryCodeLen/2 {
				b = append(b, '-')
			}
			b = append(b, recoveryAlphabet[r&31])
		}
		codes[i] = string(b)
	}
	return codes
}

func (db *DB) recoveryHashes(user ID, codes []string) [][]byte {
	out := make([][]byte, len(codes))
	for i, c := range codes {
		n, _ := ParseRecoveryCode(c)
		out[i] = db.peopleMAC("recovery", user.String(), n)
	}
	return out
}

// ParseRecoveryCode normalises a typed recovery code: case, spaces and dashes do not
// matter, and o, i and l read as 0, 1 and 1 (Crockford's base32). It returns the 10
// characters, or false for anything else.
func ParseRecoveryCode(s string) (string, bool) {
	if len(s) > 4*recoveryCodeLen {
		return "", false
	}
	b := make([]byte, 0, recoveryCodeLen)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		switch c {
		case ' ', '-', '\t':
			continue
		case 'o':
			c = '0'
		case 'i', 'l':
			c = '1'
		}
		if strings.IndexByte(recoveryAlphabet, c) < 0 || len(b) == recoveryCodeLen {
			return "", false
		}
		b = append(b, c)
	}
	if len(b) != recoveryCodeLen {
		return "", false
	}
	return string(b), true
}
