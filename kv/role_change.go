package kv

import (
	"context"
	"time"
)

// RoleChange records who gave whom which role, and when: written in the transaction
// that changes a membership (joining, a new role, leaving or removal), listed in the
// app's Settings → Members. Emails are kept as they were, so the record still reads
// after someone leaves.
type RoleChange struct {
	ID     ID     `json:"id"`
	OrgID  ID     `json:"org_id"`
	UserID ID     `json:"user_id"`
	Email  string `json:"email"`
	// ActorID is who made the change; zero for the operator's command line.
	ActorID    ID     `json:"actor_id"`
	ActorEmail string `json:"actor_email,omitempty"`
	// From is "" when the user joined; To is "" when they left or were removed.
	From Role      `json:"from,omitempty"`
	To   Role      `json:"to,omitempty"`
	At   time.Time `json:"at"`
}

// ByOperator reports whether the operator's command line made the change.
func (c RoleChange) ByOperator() bool { return c.ActorID.IsZero() }

// recordRoleChange appends a change of user's role in org from → to, made by actor.
func (db *DB) recordRoleChange(tx Tx, org, user, actor ID, from, to Role) error {
	c := RoleChange{ID: db.NewID(), OrgID: org, UserID: user, ActorID: actor, From: from, To: to, At: db.Now()}
	if u, err := userByID(tx, user); err == nil {
		c.Email = u.Email
	} else if ErrorCode(err) != ENOTFOUND {
		return err
	}
	if !actor.IsZero() {
		if u, err := userByID(tx, actor); err == nil {
			c.ActorEmail = u.Email
		} else if ErrorCode(err) != ENOTFOUND {
			return err
		}
	}
	return putJSON(tx.Bucket(bucketRoleChanges), orgRowKey(org, c.ID), c)
}

// FindRoleChanges returns the organisation's latest role changes, newest first, at most
// limit (1..500; other values mean 100).
func (db *DB) FindRoleChanges(ctx context.Context, org ID, limit int) ([]RoleChange, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	var out []RoleChange
	err := db.view(ctx, func(tx Tx) error {
		out = []RoleChange{}
		_, _, err := pageNewest(tx.Bucket(bucketRoleChanges), org[:], nil, limit, func(v []byte) (bool, error) {
			var c RoleChange
			if err := jsonUnmarshal(v, &c); err != nil {
				return false, err
			}
			out = append(out, c)
			return true, nil
		})
		if len(out) > limit {
			out = out[:limit]
		}
		return err
	})
	return out, err
}
