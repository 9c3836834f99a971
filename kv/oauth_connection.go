package kv

import (
	"context"
	"crypto/sha256"
	"slices"
)

// Connections as the app lists and ends them, revocation by the client, and the
// records under every connection (its codes and tokens, by hash).

// RevokeToken ends the connection of any code or token (access, refresh, spent or not)
// that clientID was issued (RFC 7009). A token that is unknown, malformed or another
// client's is not an error and changes nothing.
func (db *DB) RevokeToken(ctx context.Context, token, clientID string) error {
	hash := sha256.Sum256([]byte(token))
	if len(token) > 200 {
		return nil
	}
	return db.update(ctx, func(tx Tx) error {
		rec, ok, err := tokenByHash(tx, hash[:])
		if err != nil || !ok || rec.ClientID != clientID {
			return err
		}
		return db.endConnection(tx, rec.OrgID, rec.ConnID, "client")
	})
}

// FindConnectionsFor returns the live, active connections of org that user may see,
// newest first: every one for owners and admins, their own for members. ENOTFOUND
// when the user is not a member.
func (db *DB) FindConnectionsFor(ctx context.Context, org, user ID) ([]Connection, error) {
	var out []Connection
	err := db.view(ctx, func(tx Tx) error {
		out = nil
		m, err := memberFor(tx, org, user)
		if err != nil || user.IsZero() {
			return notFound("Organisation")
		}
		now := db.Now()
		c := tx.Bucket(bucketOAuthConnections).Cursor()
		for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
			var conn Connection
			if err := jsonUnmarshal(v, &conn); err != nil {
				return err
			}
			if !conn.Active || !conn.Live(now) || (!m.Role.Manages() && conn.UserID != user) {
				continue
			}
			if _, err := memberFor(tx, org, conn.UserID); err != nil {
				continue // its approver left: it ends at its next use (AuthenticateAccess)
			}
			out = append(out, conn)
		}
		slices.Reverse(out) // UUIDv7 keys: oldest first on disk
		return nil
	})
	return out, err
}

// EndConnectionInput ends a connection on behalf of a signed-in user.
type EndConnectionInput struct {
	OrgID, Actor, ConnectionID ID
}

// EndConnection ends a connection the actor may see (FindConnectionsFor); its codes
// and tokens stop working at once. ENOTFOUND otherwise, as for an unknown one. Ending
// an ended connection is a no-op.
func (db *DB) EndConnection(ctx context.Context, in EndConnectionInput) error {
	return db.update(ctx, func(tx Tx) error {
		m, err := memberFor(tx, in.OrgID, in.Actor)
		if err != nil || in.Actor.IsZero() {
			return notFound("Connection")
		}
		conn, ok, err := connectionByID(tx, in.OrgID, in.ConnectionID)
		if err != nil {
			return err
		}
		if !ok || (!m.Role.Manages() && conn.UserID != in.Actor) {
			return notFound("Connection")
		}
		return db.endConnection(tx, in.OrgID, in.ConnectionID, "approver")
	})
}

// FindConnection returns one connection of org (ended or not), or ENOTFOUND.
func (db *DB) FindConnection(ctx context.Context, org, id ID) (Connection, error) {
	var conn Connection
	err := db.view(ctx, func(tx Tx) error {
		c, ok, err := connectionByID(tx, org, id)
		if err == nil && !ok {
			err = notFound("Connection")
		}
		conn = c
		return err
	})
	return conn, err
}

// endConnection marks the connection revoked and deletes every code and token of it.
func (db *DB) endConnection(tx Tx, org, id ID, why string) error {
	conn, ok, err := connectionByID(tx, org, id)
	if err != nil || !ok {
		return err
	}
	if conn.RevokedAt == nil {
		now := db.Now()
		conn.RevokedAt, conn.RevokedWhy = &now, why
		if err := putConnection(tx, conn); err != nil {
			return err
		}
	}
	db.authChanged(tx, org) // its cached access tokens go on commit, on every node
	idx := tx.Bucket(bucketOAuthConnTokens)
	tokens := tx.Bucket(bucketOAuthTokens)
	c := idx.Cursor()
	var drop [][]byte
	for k, _ := c.Seek(id[:]); k != nil && len(k) == 48 && string(k[:16]) == string(id[:]); k, _ = c.Next() {
		drop = append(drop, slices.Clone(k))
	}
	for _, k := range drop {
		if err := tokens.Delete(k[16:]); err != nil {
			return err
		}
		if err := idx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// endUserConnections ends every live connection user approved in org (they leave it).
func (db *DB) endUserConnections(tx Tx, org, user ID) error {
	var ids []ID
	c := tx.Bucket(bucketOAuthConnections).Cursor()
	for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
		var conn Connection
		if err := jsonUnmarshal(v, &conn); err != nil {
			return err
		}
		if conn.UserID == user && conn.RevokedAt == nil {
			ids = append(ids, conn.ID)
		}
	}
	for _, id := range ids {
		if err := db.endConnection(tx, org, id, "member_left"); err != nil {
			return err
		}
	}
	return nil
}

func connectionByID(tx Tx, org, id ID) (Connection, bool, error) {
	var conn Connection
	ok, err := getJSON(tx.Bucket(bucketOAuthConnections), append(slices.Clone(org[:]), id[:]...), &conn)
	return conn, ok, err
}

func putConnection(tx Tx, c Connection) error {
	return putJSON(tx.Bucket(bucketOAuthConnections), append(slices.Clone(c.OrgID[:]), c.ID[:]...), c)
}

func tokenByHash(tx Tx, hash []byte) (tokenRecord, bool, error) {
	var rec tokenRecord
	ok, err := getJSON(tx.Bucket(bucketOAuthTokens), hash, &rec)
	return rec, ok, err
}

// putToken stores a code or token record and its connection index entry.
func putToken(tx Tx, hash []byte, rec tokenRecord) error {
	if err := putJSON(tx.Bucket(bucketOAuthTokens), hash, rec); err != nil {
		return err
	}
	return tx.Bucket(bucketOAuthConnTokens).Put(append(slices.Clone(rec.ConnID[:]), hash...), []byte{})
}
