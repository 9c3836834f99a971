package kv

import (
	"context"
)

// PeopleSwept counts what SweepPeople deleted.
type PeopleSwept struct {
	SignInCodes int `json:"signin_codes"`
	Sessions    int `json:"sessions"`
	Invitations int `json:"invitations"`
}

// SweepPeople deletes expired sign-in codes, idle-expired sessions and expired
// invitations, in one transaction. Nothing depends on it for correctness (every read
// checks expiry itself); it keeps the file from collecting dead records, such as the
// code records of addresses nobody has.
func (db *DB) SweepPeople(ctx context.Context) (PeopleSwept, error) {
	var out PeopleSwept
	err := db.update(ctx, func(tx Tx) error {
		out = PeopleSwept{}
		now := db.Now()
		codes := tx.Bucket(bucketSignInCodes)
		var deadCodes [][]byte
		if err := codes.ForEach(func(k, v []byte) error {
			var r signInRecord
			if err := jsonUnmarshal(v, &r); err != nil {
				return err
			}
			if !now.Before(r.ExpiresAt) {
				deadCodes = append(deadCodes, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range deadCodes {
			if err := codes.Delete(k); err != nil {
				return err
			}
		}
		var deadSessions []sessionRecord
		if err := tx.Bucket(bucketAppSessions).ForEach(func(_, v []byte) error {
			var r sessionRecord
			if err := jsonUnmarshal(v, &r); err != nil {
				return err
			}
			if !now.Before(r.LastSeenAt.Add(SessionIdleTTL)) {
				deadSessions = append(deadSessions, r)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, r := range deadSessions {
			if err := deleteSession(tx, r); err != nil {
				return err
			}
		}
		var deadInvites []invitationRecord
		if err := tx.Bucket(bucketInvitations).ForEach(func(_, v []byte) error {
			var r invitationRecord
			if err := jsonUnmarshal(v, &r); err != nil {
				return err
			}
			if !now.Before(r.ExpiresAt) {
				deadInvites = append(deadInvites, r)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, r := range deadInvites {
			if err := deleteInvitation(tx, r); err != nil {
				return err
			}
		}
		out = PeopleSwept{SignInCodes: len(deadCodes), Sessions: len(deadSessions), Invitations: len(deadInvites)}
		return nil
	})
	return out, err
}
