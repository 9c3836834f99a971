package kv

import (
	"context"
	"crypto/sha256"
	"slices"
)

// OAuthCredential is an authenticated access token: its connection and organisation.
type OAuthCredential struct {
	Connection Connection
	Org        Org
}

var errAccessToken = Errorf(EUNAUTHORIZED, "invalid_token", "The access token is invalid, expired or revoked.")

// AuthenticateAccess resolves a presented access token. EUNAUTHORIZED invalid_token
// for a malformed, unknown or expired token or an ended connection. The scopes are the
// granted ones still allowed by the approver's role; a connection whose approver left
// the organisation is ended. The credential may be shared with other callers (it is
// cached, see accessTokenCache): treat its slices as read-only.
func (db *DB) AuthenticateAccess(ctx context.Context, token string) (OAuthCredential, error) {
	if !parseCheckedToken(token, accessPrefix) {
		return OAuthCredential{}, errAccessToken
	}
	if err := ctx.Err(); err != nil {
		return OAuthCredential{}, err
	}
	hash := sha256.Sum256([]byte(token))
	if e, ok := db.cache.accessTokens.get(hash); ok {
		now := db.Now()
		fresh := true
		// As for API keys (Authenticate): the epoch check rides on the request's next
		// statement when ctx has a fence, unless the entry is answered here and now
		// (expired, or due for its touch, which is a write of its own).
		quiet := now.Before(e.expires) && now.Sub(e.touched) < ConnectionTouchAt
		if db.Shared() && (!quiet || !db.arm(ctx, e.cred.Org.ID, e.epoch, hash, true)) {
			cur, err := db.authEpoch(ctx, e.cred.Org.ID)
			if err != nil {
				return OAuthCredential{}, err
			}
			fresh = cur == e.epoch
		}
		switch {
		case !fresh:
			db.cache.accessTokens.drop(hash) // changed on some node since: read it again below
		case !now.Before(e.expires):
			db.cache.accessTokens.drop(hash)
			return OAuthCredential{}, errAccessToken
		default:
			if now.Sub(e.touched) >= ConnectionTouchAt {
				if err := db.touchConnection(ctx, e.cred.Connection); err != nil {
					return OAuthCredential{}, err
				}
				db.cache.accessTokens.touch(hash, now)
			}
			return e.cred, nil
		}
	}
	gen := db.cache.accessTokens.generation()
	var entry cachedAccess
	var left bool
	err := db.view(ctx, func(tx Tx) error {
		now := db.Now()
		// A failed read is the store's trouble, not the token's: it is returned as it is
		// (a 5xx the client retries), never as invalid_token, which tells the client to
		// send its person through consent again.
		rec, ok, err := tokenByHash(tx, hash[:])
		if err != nil {
			return err
		}
		if !ok || rec.Kind != tokenAccess || !now.Before(rec.ExpiresAt) {
			return errAccessToken
		}
		conn, ok, err := connectionByID(tx, rec.OrgID, rec.ConnID)
		if err != nil {
			return err
		}
		if !ok || !conn.Live(now) {
			return errAccessToken
		}
		org, err := orgByID(tx, conn.OrgID)
		if ErrorCode(err) == ENOTFOUND {
			return errAccessToken
		} else if err != nil {
			return err
		}
		m, err := memberFor(tx, conn.OrgID, conn.UserID)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return err
		}
		if err != nil {
			left = true
			entry.cred.Connection = conn
			return errAccessToken
		}
		conn.Scopes = slices.DeleteFunc(slices.Clone(conn.Scopes), func(s string) bool { return !m.Role.MayHoldScope(s) })
		entry = cachedAccess{cred: OAuthCredential{Connection: conn, Org: org}, expires: rec.ExpiresAt}
		if conn.EndsAt.Before(entry.expires) {
			entry.expires = conn.EndsAt
		}
		if conn.LastUsedAt != nil {
			entry.touched = *conn.LastUsedAt
		}
		if db.Shared() {
			entry.epoch = epochOf(tx.Bucket(bucketAuthEpochs).Get(org.ID[:]))
		}
		return nil
	})
	if left {
		c := entry.cred.Connection
		_ = db.update(ctx, func(tx Tx) error { return db.endConnection(tx, c.OrgID, c.ID, "member_left") })
	}
	if err != nil {
		return OAuthCredential{}, err
	}
	if now := db.Now(); now.Sub(entry.touched) >= ConnectionTouchAt {
		if err := db.touchConnection(ctx, entry.cred.Connection); err != nil {
			return OAuthCredential{}, err
		}
		entry.touched = now
	}
	db.cache.accessTokens.put(hash, entry, gen)
	return entry.cred, nil
}

// touchConnection writes the connection's LastUsedAt (at most every
// ConnectionTouchAt, which its callers see to).
func (db *DB) touchConnection(ctx context.Context, c Connection) error {
	return db.update(ctx, func(tx Tx) error {
		stored, ok, err := connectionByID(tx, c.OrgID, c.ID)
		if err != nil || !ok {
			return err
		}
		now := db.Now()
		stored.LastUsedAt = &now
		return putConnection(tx, stored)
	})
}
