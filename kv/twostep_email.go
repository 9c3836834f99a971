package kv

import (
	"context"
	"crypto/sha256"
)

// Codes by email as a second step. The sign-in code already comes by email, so a
// second code to the same mailbox proves nothing more: it counts as a second step only
// in an organisation whose owners or admins accepted that (Org.TwoStepEmail, off by
// default and for organisations made before the setting existed, whose stored records
// lack it). A person with an authenticator or a phone may in addition refuse codes by
// email for their own account (User.EmailFallback).
//
// Before a workspace is chosen, a code by email passes the check when any of the
// person's organisations accepts them; the session remembers how it passed
// (Session.TwoStepByEmail), and in an organisation that does not accept codes by email
// such a check does not count (Session.PassedTwoStepFor), so the person is asked again.
// The account access API (AccessMethods) keeps its own rule.

// TwoStepEmailInput turns the organisation's acceptance of codes by email as a second
// step on or off.
type TwoStepEmailInput struct {
	OrgID ID
	Actor ID
	On    bool
}

// SetTwoStepEmail sets whether the organisation accepts codes by email as a second
// step (owners and admins only), in one transaction. EFORBIDDEN role_forbidden;
// ENOTFOUND for an unknown org or a non-member actor. Turning it on weakens two-step:
// the caller checks the session verified recently, as for turning require_mfa off.
func (db *DB) SetTwoStepEmail(ctx context.Context, in TwoStepEmailInput) (Org, error) {
	return db.setOrgPolicy(ctx, in.OrgID, in.Actor, func(o *Org) { o.TwoStepEmail = in.On })
}

// PassedTwoStepFor reports whether the session's two-step check counts in org: it was
// passed, and not with a code by email unless org accepts them. With no organisation
// chosen (org zero) a check passed by email counts: it was admitted because one of the
// person's organisations accepts codes by email, and choosing another asks again.
func (s Session) PassedTwoStepFor(org Org) bool {
	return s.TwoStepPassed && (!s.TwoStepByEmail || org.ID.IsZero() || org.TwoStepEmail)
}

// EmailReverifies reports whether a code by email may re-prove u's second step in org
// (Reverify): for a person with no other second step it proves what signing in again
// would; otherwise only as their fallback, where org accepts codes by email.
func EmailReverifies(u User, org Org) bool {
	return !u.twoStepOn() || (u.EmailFallback && org.TwoStepEmail)
}

// EmailSecondStep returns nil when a code by email may pass the two-step check of the
// session token names, else the refusal PassTwoStep and RequestTwoStepEmailCode give:
// EFORBIDDEN email_fallback_off when the person refuses codes by email, email_codes_off
// when the organisation (the chosen one, or before one is chosen every one of the
// person's) does not accept them. EUNAUTHORIZED for a bad token.
func (db *DB) EmailSecondStep(ctx context.Context, token string) error {
	if !ParseSessionToken(token) {
		return errSession
	}
	hash := sha256.Sum256([]byte(token))
	var refusal error
	err := db.view(ctx, func(tx Tx) error {
		rec, err := liveSession(tx, hash[:], db.Now())
		if err != nil {
			return err
		}
		u, err := userByID(tx, rec.UserID)
		if err != nil {
			return errSession
		}
		refusal, err = emailSecondStep(tx, u, rec.OrgID)
		return err
	})
	if err != nil {
		return err
	}
	return refusal
}

// emailSecondStep is EmailSecondStep's rule for user u in a session whose chosen
// organisation is org (zero: none yet): the refusal, if any, and an error reading.
func emailSecondStep(tx Tx, u User, org ID) (refusal, err error) {
	if !emailCodesAllowed(u) {
		return errEmailFallback, nil
	}
	if !org.IsZero() {
		o, ok, err := sessionOrg(tx, u.ID, org)
		if err != nil || !ok {
			return errEmailCodesOff(Org{}), err
		}
		if !o.TwoStepEmail {
			return errEmailCodesOff(o), nil
		}
		return nil, nil
	}
	orgs, err := userOrgs(tx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, o := range orgs {
		if o.Org.TwoStepEmail {
			return nil, nil
		}
	}
	if len(orgs) == 1 {
		return errEmailCodesOff(orgs[0].Org), nil
	}
	return errEmailCodesOff(Org{}), nil
}

// sessionOrg loads a session's chosen organisation; ok is false when it is gone or the
// user no longer belongs to it (the choice no longer holds: AuthenticateSession drops it).
func sessionOrg(tx Tx, user, org ID) (Org, bool, error) {
	if org.IsZero() {
		return Org{}, false, nil
	}
	if _, err := memberFor(tx, org, user); err != nil {
		return Org{}, false, nil
	}
	o, err := orgByID(tx, org)
	if ErrorCode(err) == ENOTFOUND {
		return Org{}, false, nil
	}
	return o, err == nil, err
}

// errEmailCodesOff refuses a code by email as the second step in org (zero: in none of
// the person's organisations).
func errEmailCodesOff(org Org) error {
	msg := "None of your organisations accepts codes by email as a second step."
	if org.Name != "" {
		msg = org.Name + " does not accept codes by email as a second step."
	}
	return Errorf(EFORBIDDEN, "email_codes_off", msg)
}

// checkNotPassed returns ECONFLICT two_step_passed when the session's check already
// counts in its chosen organisation: a new code would have nothing to check.
func checkNotPassed(tx Tx, rec sessionRecord) error {
	org, _, err := sessionOrg(tx, rec.UserID, rec.OrgID)
	if err != nil {
		return err
	}
	if rec.PassedTwoStepFor(org) {
		return errAlreadyPassed
	}
	return nil
}
