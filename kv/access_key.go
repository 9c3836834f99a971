package kv

import (
	"context"
	"crypto/subtle"
	"time"
)

// AccessKey is the key a transaction issued or replaced, as its step answers (the
// secret apart, which exists only in the first answer).
type AccessKey struct {
	KeyID       ID          `json:"key_id"`
	Name        string      `json:"name"`
	Scopes      []string    `json:"scopes"`
	Environment Environment `json:"environment"`
	ExpiresAt   *time.Time  `json:"expires_at"`
}

// AccessIdem is the request's Idempotency-Key and fingerprint (method, path, body).
type AccessIdem struct {
	Key         string
	Fingerprint [32]byte
}

// AccessKeyInput issues the transaction's key.
type AccessKeyInput struct {
	ID          ID
	Proof       string
	Name        string
	Scopes      []string
	Environment Environment
	ExpiresDays int // 0, 30, 90, 180 or 365
	Idem        AccessIdem
}

// AccessKeyIssued is a step's key. Secret is "" on a replay.
type AccessKeyIssued struct {
	Access   Access
	Key      AccessKey
	Secret   string
	Replayed bool
}

// IssueAccessKey issues the transaction's one key, for its person in the chosen
// workspace, and completes the transaction. Replaying the request that issued it (same
// Idempotency-Key and fingerprint) returns the same key with no secret; any other key
// request is ECONFLICT (idempotency_key_reused for the same key with another request,
// wrong_step otherwise). Refusals are CreateKey's: EINVALID, EFORBIDDEN
// role_forbids_scope, EFORBIDDEN two_step_required; plus accessStep's.
func (db *DB) IssueAccessKey(ctx context.Context, in AccessKeyInput) (AccessKeyIssued, error) {
	kin := KeyInput{Name: in.Name, Environment: in.Environment, Scopes: in.Scopes, ExpiresDays: in.ExpiresDays}
	k, secret, err := newKey(kin, db.Now())
	if err != nil {
		return AccessKeyIssued{}, err
	}
	out := AccessKeyIssued{Secret: secret}
	a, err := db.accessStep(ctx, in.ID, in.Proof, []AccessState{AccessAwaitingKey, AccessCompleted},
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			if rec.State == AccessCompleted {
				return nil, replayAccessKey(rec, in.Idem, &out)
			}
			kin.OrgID, kin.UserID, kin.TwoStepPassed = rec.OrgID, rec.UserID, rec.MFAPassed
			k.OrgID, k.UserID = rec.OrgID, rec.UserID
			if err := db.putNewKey(tx, &k, kin); err != nil {
				return nil, err
			}
			out.Key = accessKeyOf(k)
			completeAccess(rec, out.Key, in.Idem)
			return nil, nil
		})
	out.Access = a
	if err != nil || out.Replayed {
		out.Secret = ""
	}
	return out, err
}

// AccessReplaceInput replaces a key's secret.
type AccessReplaceInput struct {
	ID    ID
	Proof string
	KeyID ID
	Idem  AccessIdem
}

// ReplaceAccessKey gives key in.KeyID of the chosen workspace a new secret, keeping its
// name, scopes, environment and expiry; the old secret stops working at once. The
// person must be able to see the key (their own, or any for owners and admins:
// ENOTFOUND otherwise, as for an unknown key). ECONFLICT key_revoked or key_expired
// for a key that can no longer be used; EFORBIDDEN two_step_required as CreateKey;
// replays and everything else as IssueAccessKey.
func (db *DB) ReplaceAccessKey(ctx context.Context, in AccessReplaceInput) (AccessKeyIssued, error) {
	var out AccessKeyIssued
	a, err := db.accessStep(ctx, in.ID, in.Proof, []AccessState{AccessAwaitingKey, AccessCompleted},
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			if rec.State == AccessCompleted {
				return nil, replayAccessKey(rec, in.Idem, &out)
			}
			k, err := keyVisibleTo(tx, rec.OrgID, rec.UserID, in.KeyID)
			if err != nil {
				return nil, err
			}
			switch {
			case k.RevokedAt != nil:
				return nil, Errorf(ECONFLICT, "key_revoked", "This key is revoked: issue a new key instead.")
			case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
				return nil, Errorf(ECONFLICT, "key_expired", "This key has expired: issue a new key instead.")
			}
			org, err := orgByID(tx, rec.OrgID)
			if err != nil {
				return nil, err
			}
			if org.RequireMFA && !rec.MFAPassed {
				return nil, errTwoStepRequired
			}
			secret := newKeySecret(k.Environment)
			hash := HashKeySecret(secret)
			if err := tx.Bucket(bucketKeyHashes).Delete(k.Hash); err != nil {
				return nil, err
			}
			k.Hash, k.Hint = hash[:], keyHint(secret)
			db.authChanged(tx, k.OrgID) // cached credentials of the old secret go on commit
			if err := putJSON(tx.Bucket(bucketKeys), k.ID[:], k); err != nil {
				return nil, err
			}
			if err := tx.Bucket(bucketKeyHashes).Put(k.Hash, k.ID[:]); err != nil {
				return nil, err
			}
			out.Key, out.Secret = accessKeyOf(k), secret
			completeAccess(rec, out.Key, in.Idem)
			return nil, nil
		})
	out.Access = a
	if err != nil || out.Replayed {
		out.Secret = ""
	}
	return out, err
}

// replayAccessKey answers a key request to a completed transaction: the issued key for
// a replay of the request that issued it, else a conflict.
func replayAccessKey(rec *accessRecord, idem AccessIdem, out *AccessKeyIssued) error {
	if rec.Issued == nil || subtle.ConstantTimeCompare([]byte(rec.IdemKey), []byte(idem.Key)) != 1 {
		return wrongStep(rec.State)
	}
	if subtle.ConstantTimeCompare(rec.IdemFP, idem.Fingerprint[:]) != 1 {
		return Errorf(ECONFLICT, "idempotency_key_reused", "This Idempotency-Key was used with a different request; a transaction issues one key: start a new transaction for another.")
	}
	out.Key, out.Replayed = *rec.Issued, true
	return nil
}

func completeAccess(rec *accessRecord, k AccessKey, idem AccessIdem) {
	rec.State, rec.Issued = AccessCompleted, &k
	rec.IdemKey, rec.IdemFP = idem.Key, append([]byte(nil), idem.Fingerprint[:]...)
}

func accessKeyOf(k Key) AccessKey {
	return AccessKey{KeyID: k.ID, Name: k.Name, Scopes: k.Scopes, Environment: k.Environment, ExpiresAt: k.ExpiresAt}
}
