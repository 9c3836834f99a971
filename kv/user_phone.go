package kv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"time"
)

// Two-step by text message. A person adds a phone number in one flow: BeginPhone makes
// a code to text to it, ConfirmPhone reads it back and only then sets User.Phone (a
// number is never kept unproven). From then on the number is a two-step method like an
// authenticator app, and having one turns two-step on at every sign-in (NeedsTwoStep):
// someone who added a phone for two-step expects to be asked for it. RemovePhone turns
// it off again. The code state lives on the session that asked for it, so only the
// browser that began an enrolment (or a check) can finish it.
const (
	PhoneCodeTTL      = 10 * time.Minute
	PhoneCodeAttempts = 5 // wrong tries before an enrolment's code is dead
)

// phoneCode is a code texted to Phone, kept on the session that asked for it.
type phoneCode struct {
	Phone    string    `json:"phone"`
	Hash     []byte    `json:"hash"` // keyed hash of the code (peopleMAC)
	Expires  time.Time `json:"expires"`
	Failures int       `json:"failures,omitempty"`
}

// PhoneCode is a code to text to Phone (E.164).
type PhoneCode struct {
	Phone     string
	Code      string
	ExpiresAt time.Time
}

var (
	errPhone = FieldError{Loc: []any{"phone"}, Msg: "Phone must be a mobile number in international form, starting with + and the country code, like +44 7700 900123.", Type: "phone"}

	errNoPendingPhone = Errorf(ECONFLICT, "phone_not_started", "No code is waiting for a number: add the number again.")
	errPhoneCode      = Errorf(EUNAUTHORIZED, "invalid_code", "That code is not right or has expired.")
	errPhoneSpent     = Errorf(EUNAUTHORIZED, "code_exhausted", "Too many wrong tries: add the number again for a new code.")
	errNoPhone        = Errorf(ECONFLICT, "phone_not_set", "No phone number is set up for text messages.")
)

// twoStepOn reports whether the user turned on a two-step method of their own (an
// authenticator app or a phone), so changing their two-step settings needs a session
// that passed the check.
func (u User) twoStepOn() bool { return u.TOTPEnabled || u.Phone != "" }

// NormalizePhone returns the E.164 form of a typed phone number and whether it is one:
// spaces, dots, dashes and brackets are dropped, a leading 00 reads as +, and what is
// left must be + and 7 to 15 digits, the first not 0. A number without its country code
// (07700 900123) is refused: a server cannot guess the country.
func NormalizePhone(s string) (string, bool) {
	if len(s) > 40 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '+' && b.Len() == 0:
			b.WriteByte(c)
		case c == ' ' || c == '.' || c == '-' || c == '(' || c == ')' || c == '\t':
		default:
			return "", false
		}
	}
	p := b.String()
	if strings.HasPrefix(p, "00") {
		p = "+" + p[2:]
	}
	if len(p) < 8 || len(p) > 16 || p[0] != '+' || p[1] == '0' {
		return "", false
	}
	return p, true
}

// BeginPhone makes a 6-digit code to text to phone, valid 10 minutes and 5 wrong tries,
// kept for this session (an earlier enrolment's code stops working). Changing the
// number of a user who already has a two-step method needs a session that passed
// two-step (EFORBIDDEN two_step_required). EINVALID for a number that is not E.164
// (NormalizePhone); EUNAUTHORIZED for a bad token.
func (db *DB) BeginPhone(ctx context.Context, token, phone string) (PhoneCode, error) {
	number, ok := NormalizePhone(phone)
	if !ok {
		return PhoneCode{}, Invalid(errPhone)
	}
	code := newDigits(SignInCodeDigits)
	var out PhoneCode
	err := db.withPhoneSession(ctx, token, func(tx Tx, rec *sessionRecord, u *User) error {
		exp := db.Now().Add(PhoneCodeTTL)
		rec.PhoneEnrolment = &phoneCode{Phone: number, Hash: db.peopleMAC("phone-enrol", rec.ID.String(), number, code), Expires: exp}
		out = PhoneCode{Phone: number, Code: code, ExpiresAt: exp}
		return putSession(tx, *rec)
	})
	return out, err
}

// ConfirmPhone checks the code BeginPhone made and, in the same transaction, sets the
// number as the user's phone and marks the session as having passed two-step (it just
// proved the phone, and two-step is on from now on). A wrong code counts against the
// code's 5 tries (committed); the fifth voids it. EUNAUTHORIZED invalid_code for a
// wrong or expired code, code_exhausted on the fifth wrong one; ECONFLICT
// phone_not_started when no enrolment is waiting; EFORBIDDEN two_step_required as for
// BeginPhone.
func (db *DB) ConfirmPhone(ctx context.Context, token, code string) (User, error) {
	c, valid := ParseSignInCode(code)
	var out User
	var fail error
	err := db.withPhoneSession(ctx, token, func(tx Tx, rec *sessionRecord, u *User) error {
		fail = nil
		p := rec.PhoneEnrolment
		if p == nil || p.Failures >= PhoneCodeAttempts {
			return errNoPendingPhone
		}
		if !db.Now().Before(p.Expires) {
			fail = errPhoneCode
			return nil
		}
		if !valid || !hmac.Equal(p.Hash, db.peopleMAC("phone-enrol", rec.ID.String(), p.Phone, c)) {
			p.Failures++
			fail = errPhoneCode
			if p.Failures >= PhoneCodeAttempts {
				rec.PhoneEnrolment, fail = nil, errPhoneSpent
			}
			return putSession(tx, *rec)
		}
		u.Phone = p.Phone
		if err := putUser(tx, *u); err != nil {
			return err
		}
		rec.PhoneEnrolment, rec.SMSCode = nil, nil
		rec.TwoStepPassed, rec.TwoStepByEmail, rec.TwoStepFailures = true, false, 0
		out = *u
		return putSession(tx, *rec)
	})
	if err != nil {
		return User{}, err
	}
	if fail != nil {
		return User{}, fail
	}
	return out, nil
}

// RemovePhone forgets the user's phone: codes are no longer texted, and two-step stays
// on only if an authenticator is on or an organisation requires it. It needs a session
// that passed two-step (EFORBIDDEN two_step_required); ECONFLICT phone_not_set when
// there is no phone.
func (db *DB) RemovePhone(ctx context.Context, token string) (User, error) {
	var out User
	err := db.withPhoneSession(ctx, token, func(tx Tx, rec *sessionRecord, u *User) error {
		if u.Phone == "" {
			return errNoPhone
		}
		u.Phone = ""
		rec.PhoneEnrolment, rec.SMSCode = nil, nil
		if err := putSession(tx, *rec); err != nil {
			return err
		}
		out = *u
		return putUser(tx, *u)
	})
	return out, err
}

// SetUserPhone sets (or with "" clears) a user's verified phone without a code: for
// administration and tests, where the number is known to be theirs. EINVALID for a
// number that is not E.164, ENOTFOUND for an unknown user.
func (db *DB) SetUserPhone(ctx context.Context, userID ID, phone string) (User, error) {
	number := ""
	if strings.TrimSpace(phone) != "" {
		var ok bool
		if number, ok = NormalizePhone(phone); !ok {
			return User{}, Invalid(errPhone)
		}
	}
	var u User
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if u, err = userByID(tx, userID); err != nil {
			return err
		}
		u.Phone = number
		return putUser(tx, u)
	})
	return u, err
}

// RequestTwoStepSMSCode makes a 6-digit two-step code for the session to text to the
// user's phone, valid 10 minutes, replacing any earlier one; PassTwoStep with
// MethodSMS checks it. EUNAUTHORIZED for a bad token; ECONFLICT two_step_passed when
// there is nothing to check, phone_not_set when the user has no phone.
func (db *DB) RequestTwoStepSMSCode(ctx context.Context, token string) (PhoneCode, error) {
	if !ParseSessionToken(token) {
		return PhoneCode{}, errSession
	}
	hash := sha256.Sum256([]byte(token))
	code := newDigits(SignInCodeDigits)
	var out PhoneCode
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
		if u.Phone == "" {
			return errNoPhone
		}
		exp := now.Add(PhoneCodeTTL)
		rec.SMSCode = &phoneCode{Phone: u.Phone, Hash: db.peopleMAC("two-step-sms", rec.ID.String(), u.Phone, code), Expires: exp}
		out = PhoneCode{Phone: u.Phone, Code: code, ExpiresAt: exp}
		return putSession(tx, rec)
	})
	return out, err
}

// checkSMSCode reports whether code is the session's texted two-step code, still
// fresh, sent to the phone the user has now (a code sent to a number since removed or
// replaced is void). ECONFLICT phone_not_set when the user has no phone.
func (db *DB) checkSMSCode(rec sessionRecord, u User, code string, now time.Time) (bool, error) {
	if u.Phone == "" {
		return false, errNoPhone
	}
	c, valid := ParseSignInCode(code)
	s := rec.SMSCode
	return valid && s != nil && s.Phone == u.Phone && now.Before(s.Expires) &&
		hmac.Equal(s.Hash, db.peopleMAC("two-step-sms", rec.ID.String(), u.Phone, c)), nil
}

// withPhoneSession runs fn on the live session and its user in one transaction; a
// user with a two-step method of their own needs a session that passed it.
func (db *DB) withPhoneSession(ctx context.Context, token string, fn func(tx Tx, rec *sessionRecord, u *User) error) error {
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
		return fn(tx, &rec, &u)
	})
}
