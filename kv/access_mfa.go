package kv

import (
	"context"
	"crypto/hmac"
	"strings"
	"time"
)

// AccessMethods returns the two-step methods u may use on the access API, in a fixed
// order: totp with an authenticator; sms when smsOK (a provider is configured) and u
// has a verified number; email when emailOK (one of u's organisations accepts codes by
// email as a second step, as at sign-in before a workspace is chosen: see
// emailSecondStep) and u has no other step or keeps email as the fallback. Recovery
// codes are for a person at a keyboard, not for an agent reading codes back.
func AccessMethods(u User, smsOK, emailOK bool) []TwoStepMethod {
	var out []TwoStepMethod
	if u.TOTPEnabled {
		out = append(out, MethodTOTP)
	}
	if smsOK && u.Phone != "" {
		out = append(out, MethodSMS)
	}
	if emailOK && emailCodesAllowed(u) {
		out = append(out, MethodEmail)
	}
	return out
}

// AccessChallengeInput asks for a two-step challenge.
type AccessChallengeInput struct {
	ID     ID
	Proof  string
	Method TwoStepMethod
	// SMS says a text-message provider is configured.
	SMS bool
}

// AccessChallengeIssued is a new challenge. For email and sms, Code is to be sent to
// To (the address or the number); for totp both are empty.
type AccessChallengeIssued struct {
	Access      Access
	ChallengeID ID
	Method      TwoStepMethod
	ExpiresAt   time.Time
	Methods     []TwoStepMethod
	To, Code    string
}

// RequestAccessChallenge makes a two-step challenge by in.Method, valid
// AccessChallengeTTL, replacing any earlier one. EINVALID at ["method"] for a method
// the person cannot use (the message names the ones they can); ECONFLICT
// challenge_limit past AccessChallenges challenges; plus the refusals every step shares (accessStep).
func (db *DB) RequestAccessChallenge(ctx context.Context, in AccessChallengeInput) (AccessChallengeIssued, error) {
	var out AccessChallengeIssued
	code := newDigits(SignInCodeDigits)
	a, err := db.accessStep(ctx, in.ID, in.Proof, []AccessState{AccessAwaitingMFA},
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			u, err := userByID(tx, rec.UserID)
			if err != nil {
				return nil, err
			}
			methods, err := accessMethodsIn(tx, u, rec.OrgID, in.SMS)
			if err != nil {
				return nil, err
			}
			if len(methods) == 0 {
				return nil, Invalid(FieldError{Loc: []any{"method"}, Msg: "This account has no second step the access API can use: " +
					"set up an authenticator app in the web app (Settings → Security), or ask an owner or admin to accept codes by email as a second step.",
					Type: "enum", Ctx: map[string]any{"expected": []string{}}})
			}
			if !containsMethod(methods, in.Method) {
				names := methodNames(methods)
				return nil, Invalid(FieldError{Loc: []any{"method"}, Msg: "Method must be one this account can use: " + strings.Join(names, ", ") + ".",
					Type: "enum", Ctx: map[string]any{"expected": names}})
			}
			if rec.Challenges >= AccessChallenges {
				// Not a 429: waiting would not help, only a new transaction does.
				return nil, Errorf(ECONFLICT, "challenge_limit", "This transaction has asked for too many two-step challenges: start a new transaction.")
			}
			rec.Challenges++
			ch := accessChallenge{ID: NewV4(), Method: in.Method, ExpiresAt: now.Add(AccessChallengeTTL)}
			out = AccessChallengeIssued{ChallengeID: ch.ID, Method: in.Method, ExpiresAt: ch.ExpiresAt, Methods: methods}
			switch in.Method {
			case MethodEmail:
				out.To, out.Code = u.Email, code
			case MethodSMS:
				out.To, out.Code = u.Phone, code
			}
			if out.Code != "" {
				ch.Hash = db.peopleMAC("access-mfa", rec.ID.String(), ch.ID.String(), code)
			}
			rec.Challenge = &ch
			return nil, nil
		})
	out.Access = a
	return out, err
}

// accessMethodsIn is AccessMethods for u in a transaction whose chosen workspace is
// org (zero: none yet): a code by email is a second step only where the workspace (or,
// before one is chosen, one of u's organisations) accepts it, since the access API's
// first step already came from the same mailbox.
func accessMethodsIn(tx Tx, u User, org ID, smsOK bool) ([]TwoStepMethod, error) {
	refusal, err := emailSecondStep(tx, u, org)
	if err != nil {
		return nil, err
	}
	return AccessMethods(u, smsOK, refusal == nil), nil
}

// FindAccessMethods returns the two-step methods the transaction's person may use
// (none before the email is verified).
func (db *DB) FindAccessMethods(ctx context.Context, id ID, proof string, smsOK bool) ([]TwoStepMethod, error) {
	var out []TwoStepMethod
	err := db.view(ctx, func(tx Tx) error {
		rec, err := accessByProof(tx, id, proof)
		if err != nil || rec.UserID.IsZero() {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return err
		}
		out, err = accessMethodsIn(tx, u, rec.OrgID, smsOK)
		return err
	})
	return out, err
}

// VerifyAccessChallenge checks the code of the pending challenge: from the
// authenticator for totp (each code accepted once, as at sign-in), else the code sent.
// Right, the transaction has passed two-step and moves on to issue_key when a
// workspace is chosen, else select_workspace. EINVALID challenge_invalid at
// ["challenge_id"] for an unknown, replaced or expired challenge; a wrong code is
// EINVALID invalid_code at ["code"] and counts as VerifyAccessEmail's do.
func (db *DB) VerifyAccessChallenge(ctx context.Context, id ID, proof string, challenge ID, code string) (Access, error) {
	return db.accessStep(ctx, id, proof, []AccessState{AccessAwaitingMFA},
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			ch := rec.Challenge
			if ch == nil || ch.ID != challenge || !now.Before(ch.ExpiresAt) {
				return nil, Invalid(FieldError{Loc: []any{"challenge_id"}, Type: "challenge_invalid",
					Msg: "No such challenge: it may have expired or been replaced. Request a new one with {\"method\": ...}."})
			}
			ok := false
			switch ch.Method {
			case MethodTOTP:
				ts, err := twoStepOf(tx, rec.UserID)
				if err != nil {
					return nil, err
				}
				if ok, err = acceptTOTP(&ts, code, now); err != nil {
					return nil, err
				}
				if ok {
					if err := putTwoStep(tx, rec.UserID, ts); err != nil {
						return nil, err
					}
				}
			default:
				c, valid := ParseSignInCode(code)
				ok = valid && hmac.Equal(ch.Hash, db.peopleMAC("access-mfa", rec.ID.String(), ch.ID.String(), c))
			}
			if !ok {
				return wrongAccessCode(rec, "code"), nil
			}
			rec.MFAPassed, rec.Challenge = true, nil
			rec.State = AccessAwaitingWorkspace
			if !rec.OrgID.IsZero() {
				rec.State = AccessAwaitingKey
			}
			return nil, nil
		})
}

func containsMethod(list []TwoStepMethod, m TwoStepMethod) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}

func methodNames(list []TwoStepMethod) []string {
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = string(m)
	}
	return out
}
