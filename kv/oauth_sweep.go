package kv

import (
	"context"
	"slices"
)

// OAuthSwept counts what SweepOAuth deleted.
type OAuthSwept struct {
	Tokens      int // codes and tokens
	Connections int
}

// SweepOAuth deletes what can no longer work or matter: expired codes and tokens
// (except spent ones of a live connection, kept so their replay still ends it),
// connections that ended (by time or revocation) with everything of theirs, and
// approvals whose code was never exchanged.
func (db *DB) SweepOAuth(ctx context.Context) (OAuthSwept, error) {
	var out OAuthSwept
	err := db.update(ctx, func(tx Tx) error {
		out = OAuthSwept{}
		now := db.Now()
		conns := tx.Bucket(bucketOAuthConnections)
		var deadConns []Connection
		if err := conns.ForEach(func(_, v []byte) error {
			var c Connection
			if err := jsonUnmarshal(v, &c); err != nil {
				return err
			}
			if !c.Live(now) || (!c.Active && !now.Before(c.ApprovedAt.Add(CodeTTL))) {
				deadConns = append(deadConns, c)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, c := range deadConns {
			if err := db.endConnection(tx, c.OrgID, c.ID, "ended"); err != nil {
				return err
			}
			if err := conns.Delete(append(slices.Clone(c.OrgID[:]), c.ID[:]...)); err != nil {
				return err
			}
			out.Connections++
		}
		tokens := tx.Bucket(bucketOAuthTokens)
		var dead [][]byte
		var deadIdx [][]byte
		if err := tokens.ForEach(func(k, v []byte) error {
			var r tokenRecord
			if err := jsonUnmarshal(v, &r); err != nil {
				return err
			}
			if now.Before(r.ExpiresAt) {
				return nil
			}
			if r.Spent {
				if c, ok, err := connectionByID(tx, r.OrgID, r.ConnID); err != nil || (ok && c.Live(now)) {
					return err
				}
			}
			dead = append(dead, slices.Clone(k))
			deadIdx = append(deadIdx, append(slices.Clone(r.ConnID[:]), k...))
			return nil
		}); err != nil {
			return err
		}
		for i, k := range dead {
			if err := tokens.Delete(k); err != nil {
				return err
			}
			if err := tx.Bucket(bucketOAuthConnTokens).Delete(deadIdx[i]); err != nil {
				return err
			}
			out.Tokens++
		}
		return nil
	})
	return out, err
}
