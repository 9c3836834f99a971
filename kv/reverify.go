package kv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"time"
)

// Re-verification: changes that weaken a person's protection (turning two-step off,
// accepting codes by email again, new recovery codes, an organisation no longer
// requiring two-step) need a session that proved its second step within the last
// ReverifyWithin. A session that signed in or passed two-step that recently qualifies;
// an older one proves it again with a current code (Reverify), without signing in anew.
// So a browser left signed in, or a stolen session cookie, cannot quietly strip the
// account's two-step.

// ReverifyWithin is how long a proved second step lets a session weaken security.
const ReverifyWithin = 10 * time.Minute

// ErrReverifyRequired refuses a weakening change from a session whose second step is
// older than ReverifyWithin.
var ErrReverifyRequired = Errorf(EFORBIDDEN, "reverify_required", "Confirm it's you first: enter a current code, then make the change again.")

// VerifiedRecently reports whether the session signed in, passed two-step or proved its
// second step again within ReverifyWithin of now.
func (s Session) VerifiedRecently(now time.Time) bool {
	at := s.CreatedAt
	if s.VerifiedAt != nil && s.VerifiedAt.After(at) {
		at = *s.VerifiedAt
	}
	return now.Before(at.Add(ReverifyWithin))
}

// ReverifyInput proves a signed-in session's second step again.
type ReverifyInput struct {
	Token  string
	Method TwoStepMethod
	Code   string
}

// Reverify checks a current code (TOTP, a recovery code, spent on success, or the code
// RequestReverifyEmailCode made) and stamps the session as verified now. Wrong codes
// count against the session's TwoStepAttempts like two-step codes, and the fifth ends
// the session: this check guards a session that may not be its owner's. EUNAUTHORIZED
// session_invalid for a bad token, invalid_code for a wrong code, two_step_exhausted
// when the session was ended; EINVALID for an unknown method; ECONFLICT totp_not_enabled
// for TOTP or recovery without an authenticator; EFORBIDDEN email_fallback_off or
// email_codes_off for an emailed code the user or the organisation does not accept
// (EmailReverifies).
func (db *DB) Reverify(ctx context.Context, in ReverifyInput) (Session, error) {
	switch in.Method {
	case MethodTOTP, MethodRecovery, MethodEmail:
	default:
		return Session{}, errMethod
	}
	if !ParseSessionToken(in.Token) {
		return Session{}, errSession
	}
	hash := sha256.Sum256([]byte(in.Token))
	var out Session
	var fail error
	err := db.update(ctx, func(tx Tx) error {
		out, fail = Session{}, nil
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
		if (in.Method == MethodTOTP || in.Method == MethodRecovery) && ts.TOTPSecret == "" {
			return errNoTOTP
		}
		if in.Method == MethodEmail {
			if err := reverifyByEmail(tx, rec, u); err != nil {
				return err
			}
		}
		ok := false
		switch in.Method {
		case MethodTOTP:
			var step int64
			if step, ok = verifyTOTP(ts.TOTPSecret, in.Code, now, ts.LastStep); ok {
				ts.LastStep = step
			}
		case MethodRecovery:
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
			c, valid := ParseSignInCode(in.Code)
			ok = valid && rec.EmailCodeHash != nil && rec.EmailCodeExpires != nil && now.Before(*rec.EmailCodeExpires) &&
				hmac.Equal(rec.EmailCodeHash, db.peopleMAC("reverify-email", rec.ID.String(), c))
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
		rec.TwoStepFailures = 0
		rec.EmailCodeHash, rec.EmailCodeExpires = nil, nil
		rec.VerifiedAt = &now
		out = rec.Session
		return putSession(tx, rec)
	})
	if err != nil {
		return Session{}, err
	}
	if fail != nil {
		return Session{}, fail
	}
	return out, nil
}

// RequestReverifyEmailCode makes a 6-digit code, valid 10 minutes, with which the
// session can Reverify by email; it replaces any earlier one. EUNAUTHORIZED for a bad
// token; EFORBIDDEN email_fallback_off or email_codes_off as Reverify.
func (db *DB) RequestReverifyEmailCode(ctx context.Context, token string) (TwoStepEmailCode, error) {
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
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		if err := reverifyByEmail(tx, rec, u); err != nil {
			return err
		}
		exp := now.Add(SignInCodeTTL)
		// Its own purpose: a re-verification code can never pass a sign-in's two-step
		// check, nor the reverse.
		rec.EmailCodeHash = db.peopleMAC("reverify-email", rec.ID.String(), code)
		rec.EmailCodeExpires = &exp
		out = TwoStepEmailCode{Email: u.Email, Code: code, ExpiresAt: exp}
		return putSession(tx, rec)
	})
	return out, err
}

// reverifyByEmail refuses a re-verification by email the session's person or chosen
// organisation does not accept (EmailReverifies).
func reverifyByEmail(tx Tx, rec sessionRecord, u User) error {
	org, _, err := sessionOrg(tx, u.ID, rec.OrgID)
	if err != nil {
		return err
	}
	switch {
	case EmailReverifies(u, org):
		return nil
	case !emailCodesAllowed(u):
		return errEmailFallback
	}
	return errEmailCodesOff(org)
}
