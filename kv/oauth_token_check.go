package kv

import (
	"context"
	"crypto/sha256"
)

// OAuthTokenLive reports whether token is an OAuth access or refresh token that still
// works: known as its kind, not expired, not spent (a refresh token rotated away), of a
// live connection whose approver is still a member. A surface that accepts no OAuth
// token asks this to tell a real one (refused for what it is) from one that is no
// credential at all (refused as a failed credential). Nothing is written: presenting a
// token where it is not accepted is not using it.
func (db *DB) OAuthTokenLive(ctx context.Context, token string) (bool, error) {
	var kind string
	switch {
	case parseCheckedToken(token, accessPrefix):
		kind = tokenAccess
	case parseCheckedToken(token, refreshPrefix):
		kind = tokenRefresh
	default:
		return false, nil
	}
	hash := sha256.Sum256([]byte(token))
	live := false
	err := db.view(ctx, func(tx Tx) error {
		live = false
		now := db.Now()
		rec, ok, err := tokenByHash(tx, hash[:])
		if err != nil || !ok || rec.Kind != kind || rec.Spent || !now.Before(rec.ExpiresAt) {
			return err
		}
		conn, ok, err := connectionByID(tx, rec.OrgID, rec.ConnID)
		if err != nil || !ok || !conn.Live(now) {
			return err
		}
		if _, err := orgByID(tx, conn.OrgID); err != nil {
			if ErrorCode(err) == ENOTFOUND {
				return nil
			}
			return err
		}
		if _, err := memberFor(tx, conn.OrgID, conn.UserID); err != nil {
			if ErrorCode(err) == ENOTFOUND {
				return nil
			}
			return err
		}
		live = true
		return nil
	})
	return live, err
}
