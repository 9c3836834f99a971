package kv

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"
)

// Membership ties a user to an organisation with a role.
type Membership struct {
	OrgID     ID        `json:"org_id"`
	UserID    ID        `json:"user_id"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// Member is a membership with its user, as the members page lists it.
type Member struct {
	Membership
	User User
}

// UserOrg is one organisation a user belongs to, with their role in it.
type UserOrg struct {
	Org  Org
	Role Role
}

// Valid reports whether r is owner, admin, member or viewer.
func (r Role) Valid() bool {
	return r == RoleOwner || r == RoleAdmin || r == RoleMember || r == RoleViewer
}

// Changes reports whether the role may change research (create and edit studies, run
// simulations and analyses, make links): everyone but a viewer.
func (r Role) Changes() bool { return r.Valid() && r != RoleViewer }

// Label is the role's name in the app: a member is a researcher.
func (r Role) Label() string {
	switch r {
	case RoleOwner:
		return "Owner"
	case RoleAdmin:
		return "Admin"
	case RoleMember:
		return "Researcher"
	case RoleViewer:
		return "Viewer"
	}
	return string(r)
}

// Manages reports whether the role may manage the organisation (members, invitations,
// every key, require_mfa): owners and admins.
func (r Role) Manages() bool { return r == RoleOwner || r == RoleAdmin }

// MayHoldScope reports whether a holder of the role may hold scope on a key or grant
// (DECISIONS §3: a member never holds studies:golive or export:read). A viewer changes
// nothing, so holds only the reading scopes a member may hold: studies:read and
// links:read (export:read also starts exports, and a member may not hold it either).
func (r Role) MayHoldScope(scope string) bool {
	switch r {
	case RoleMember:
		return scope != ScopeStudiesGoLive && scope != ScopeExportRead
	case RoleViewer:
		return scope == ScopeStudiesRead || scope == ScopeLinksRead
	}
	return true
}

var errRole = FieldError{Loc: []any{"role"}, Msg: "Role must be owner, admin, member (researcher) or viewer.", Type: "enum"}

// Errors of the member rules, as the app shows them.
var (
	errLastOwner    = Errorf(ECONFLICT, "last_owner", "An organisation needs at least one owner: make someone else an owner first.")
	errNotManager   = Errorf(EFORBIDDEN, "role_forbidden", "Only owners and admins can manage members.")
	errOwnerOnly    = Errorf(EFORBIDDEN, "owner_only", "Only an owner can make, change or remove an owner.")
	errMemberAbsent = notFound("Member")
)

// AddMember adds the user with email (created if new) to the organisation with role,
// or changes their role: the operator's command (no actor checks; the last owner rule
// still holds). EINVALID for a bad email or role; ENOTFOUND for an unknown org;
// ECONFLICT last_owner when it would demote the only owner.
func (db *DB) AddMember(ctx context.Context, org ID, email string, role Role) (User, error) {
	email, ok := NormalizeEmail(email)
	if !ok {
		return User{}, Invalid(errEmail)
	}
	if !role.Valid() {
		return User{}, Invalid(errRole)
	}
	var user User
	err := db.update(ctx, func(tx Tx) error {
		if _, err := orgByID(tx, org); err != nil {
			return err
		}
		var err error
		if user, err = db.userForEmail(tx, email); err != nil {
			return err
		}
		m, err := memberFor(tx, org, user.ID)
		if err != nil {
			if err := putMember(tx, Membership{OrgID: org, UserID: user.ID, Role: role, CreatedAt: db.Now()}); err != nil {
				return err
			}
			return db.recordRoleChange(tx, org, user.ID, ID{}, "", role)
		}
		return db.setRole(tx, m, role, ID{})
	})
	return user, err
}

// FindMembers returns the organisation's members with their users, owners first, then
// admins, then members, then viewers, each group by email. ENOTFOUND for an unknown org.
func (db *DB) FindMembers(ctx context.Context, org ID) ([]Member, error) {
	var out []Member
	err := db.view(ctx, func(tx Tx) error {
		out = nil
		if _, err := orgByID(tx, org); err != nil {
			return err
		}
		return eachMember(tx, org, func(m Membership) error {
			u, err := userByID(tx, m.UserID)
			if err != nil {
				return err
			}
			out = append(out, Member{Membership: m, User: u})
			return nil
		})
	})
	rank := map[Role]int{RoleOwner: 0, RoleAdmin: 1, RoleMember: 2, RoleViewer: 3}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Role] != rank[out[j].Role] {
			return rank[out[i].Role] < rank[out[j].Role]
		}
		return out[i].User.Email < out[j].User.Email
	})
	return out, err
}

// FindUserOrgs returns the organisations the user belongs to, by name. An unknown user
// has none.
func (db *DB) FindUserOrgs(ctx context.Context, user ID) ([]UserOrg, error) {
	var out []UserOrg
	err := db.view(ctx, func(tx Tx) error {
		var err error
		out, err = userOrgs(tx, user)
		return err
	})
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Org.Name) < strings.ToLower(out[j].Org.Name) })
	return out, err
}

// userOrgs returns the user's memberships, in no particular order.
func userOrgs(tx Tx, user ID) ([]UserOrg, error) {
	var out []UserOrg
	c := tx.Bucket(bucketUserOrgs).Cursor()
	for k, _ := c.Seek(user[:]); k != nil && string(k[:16]) == string(user[:]); k, _ = c.Next() {
		var orgID ID
		copy(orgID[:], k[16:])
		m, err := memberFor(tx, orgID, user)
		if err != nil {
			continue // an index row without its membership: not a membership
		}
		org, err := orgByID(tx, orgID)
		if err != nil {
			continue
		}
		out = append(out, UserOrg{Org: org, Role: m.Role})
	}
	return out, nil
}

// MemberRoleInput changes a member's role on behalf of Actor.
type MemberRoleInput struct {
	OrgID  ID
	Actor  ID // the signed-in user making the change
	UserID ID // whose role changes
	Role   Role
}

// UpdateMemberRole changes a member's role. Owners and admins may change roles; only an
// owner may make someone an owner or change an owner's role. A new role revokes the
// user's keys in the organisation that hold a scope it may not hold (MayHoldScope), and
// the change is recorded (role_change.go), in the same transaction. EINVALID for a bad role; EFORBIDDEN
// role_forbidden / owner_only; ENOTFOUND when either is not a member; ECONFLICT
// last_owner when it would leave the organisation without an owner.
func (db *DB) UpdateMemberRole(ctx context.Context, in MemberRoleInput) (Membership, error) {
	if !in.Role.Valid() {
		return Membership{}, Invalid(errRole)
	}
	var out Membership
	err := db.update(ctx, func(tx Tx) error {
		actor, target, err := managerAndMember(tx, in.OrgID, in.Actor, in.UserID)
		if err != nil {
			return err
		}
		if (target.Role == RoleOwner || in.Role == RoleOwner) && actor.Role != RoleOwner {
			return errOwnerOnly
		}
		if err := db.setRole(tx, target, in.Role, in.Actor); err != nil {
			return err
		}
		target.Role = in.Role
		out = target
		return nil
	})
	return out, err
}

// RemoveMemberInput removes UserID from the organisation on behalf of Actor (who may be
// the same person, leaving).
type RemoveMemberInput struct {
	OrgID  ID
	Actor  ID
	UserID ID
}

// RemoveMember removes a membership and, in the same transaction, revokes the user's
// keys in the organisation and ends their sessions' choice of it. Anyone may leave;
// owners and admins may remove others; only an owner may remove an owner. EFORBIDDEN
// role_forbidden / owner_only; ENOTFOUND when either is not a member; ECONFLICT
// last_owner for the only owner.
func (db *DB) RemoveMember(ctx context.Context, in RemoveMemberInput) error {
	return db.update(ctx, func(tx Tx) error {
		var target Membership
		if in.UserID.IsZero() {
			return errMemberAbsent
		}
		if in.Actor == in.UserID {
			m, err := memberFor(tx, in.OrgID, in.UserID)
			if err != nil {
				return errMemberAbsent
			}
			target = m
		} else {
			actor, m, err := managerAndMember(tx, in.OrgID, in.Actor, in.UserID)
			if err != nil {
				return err
			}
			if m.Role == RoleOwner && actor.Role != RoleOwner {
				return errOwnerOnly
			}
			target = m
		}
		if target.Role == RoleOwner {
			if n, err := countOwners(tx, in.OrgID); err != nil {
				return err
			} else if n <= 1 {
				return errLastOwner
			}
		}
		if err := db.revokeUserKeys(tx, in.OrgID, in.UserID, nil); err != nil {
			return err
		}
		if err := db.endUserConnections(tx, in.OrgID, in.UserID); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMembers).Delete(memberKey(in.OrgID, in.UserID)); err != nil {
			return err
		}
		if err := db.recordRoleChange(tx, in.OrgID, in.UserID, in.Actor, target.Role, ""); err != nil {
			return err
		}
		return tx.Bucket(bucketUserOrgs).Delete(append(in.UserID[:], in.OrgID[:]...))
	})
}

// RequireMFAInput turns the organisation's require_mfa setting on or off.
type RequireMFAInput struct {
	OrgID ID
	Actor ID
	On    bool
}

// SetRequireMFA sets the organisation's require_mfa (owners and admins only). While it
// is on, every session needs a passed two-step check for the organisation and key
// creation requires one. EFORBIDDEN role_forbidden; ENOTFOUND for an unknown org or a
// non-member actor.
func (db *DB) SetRequireMFA(ctx context.Context, in RequireMFAInput) (Org, error) {
	return db.setOrgPolicy(ctx, in.OrgID, in.Actor, func(o *Org) { o.RequireMFA = in.On })
}

// setOrgPolicy changes one of the organisation's security settings by set, in one
// transaction, when actor manages it. EFORBIDDEN role_forbidden; ENOTFOUND for an
// unknown org or a non-member actor.
func (db *DB) setOrgPolicy(ctx context.Context, orgID, actor ID, set func(*Org)) (Org, error) {
	var org Org
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if org, err = orgByID(tx, orgID); err != nil {
			return err
		}
		m, err := memberFor(tx, orgID, actor)
		if err != nil || actor.IsZero() {
			return notFound("Organisation")
		}
		if !m.Role.Manages() {
			return errNotManager
		}
		set(&org)
		return db.putOrg(tx, org)
	})
	return org, err
}

// managerAndMember loads the actor (who must manage the organisation) and the target
// membership.
func managerAndMember(tx Tx, org, actor, user ID) (Membership, Membership, error) {
	if actor.IsZero() {
		return Membership{}, Membership{}, errNotManager
	}
	a, err := memberFor(tx, org, actor)
	if err != nil {
		return Membership{}, Membership{}, notFound("Organisation")
	}
	if !a.Role.Manages() {
		return Membership{}, Membership{}, errNotManager
	}
	if user.IsZero() {
		return Membership{}, Membership{}, errMemberAbsent
	}
	m, err := memberFor(tx, org, user)
	if err != nil {
		return Membership{}, Membership{}, errMemberAbsent
	}
	return a, m, nil
}

// setRole writes m with role, keeping an owner and the role's scope rule, and records
// the change as made by actor (zero: the operator).
func (db *DB) setRole(tx Tx, m Membership, role Role, actor ID) error {
	if m.Role == role {
		return nil
	}
	if m.Role == RoleOwner {
		if n, err := countOwners(tx, m.OrgID); err != nil {
			return err
		} else if n <= 1 {
			return errLastOwner
		}
	}
	// A key keeps working only if the new role may hold all it carries; an OAuth
	// connection's scopes are cut to the role at each use (oauth_access.go).
	err := db.revokeUserKeys(tx, m.OrgID, m.UserID, func(k Key) bool {
		return slices.ContainsFunc(k.Scopes, func(s string) bool { return !role.MayHoldScope(s) })
	})
	if err != nil {
		return err
	}
	if err := db.recordRoleChange(tx, m.OrgID, m.UserID, actor, m.Role, role); err != nil {
		return err
	}
	m.Role = role
	db.authChanged(tx, m.OrgID)
	return putMember(tx, m)
}

// revokeUserKeys revokes the user's live keys in org for which match (nil: all) holds.
func (db *DB) revokeUserKeys(tx Tx, org, user ID, match func(Key) bool) error {
	b := tx.Bucket(bucketKeys)
	var revoke []Key
	err := b.ForEach(func(_, v []byte) error {
		var k Key
		if err := jsonUnmarshal(v, &k); err != nil {
			return err
		}
		if k.OrgID == org && k.UserID == user && k.RevokedAt == nil && (match == nil || match(k)) {
			revoke = append(revoke, k)
		}
		return nil
	})
	if err != nil || len(revoke) == 0 {
		return err
	}
	now := db.Now()
	db.authChanged(tx, org)
	for _, k := range revoke {
		k.RevokedAt = &now
		if err := tx.Bucket(bucketKeyHashes).Delete(k.Hash); err != nil {
			return err
		}
		if err := putJSON(b, k.ID[:], k); err != nil {
			return err
		}
	}
	return nil
}

func countOwners(tx Tx, org ID) (int, error) {
	n := 0
	err := eachMember(tx, org, func(m Membership) error {
		if m.Role == RoleOwner {
			n++
		}
		return nil
	})
	return n, err
}

func eachMember(tx Tx, org ID, fn func(Membership) error) error {
	c := tx.Bucket(bucketMembers).Cursor()
	for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
		var m Membership
		if err := jsonUnmarshal(v, &m); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

func memberKey(org, user ID) []byte { return append(org[:], user[:]...) }

// putMember writes a membership and its row in the user's index.
func putMember(tx Tx, m Membership) error {
	if err := putJSON(tx.Bucket(bucketMembers), memberKey(m.OrgID, m.UserID), m); err != nil {
		return err
	}
	return tx.Bucket(bucketUserOrgs).Put(append(m.UserID[:], m.OrgID[:]...), []byte{})
}

// indexPeople is the migration to schema 3: every membership gets its row in the
// user's index, and users made before two-step settings existed get the email fallback.
func indexPeople(tx Tx) error {
	for _, name := range [][]byte{bucketUserOrgs, bucketUsers, bucketMembers} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	err := tx.Bucket(bucketMembers).ForEach(func(_, v []byte) error {
		var m Membership
		if err := jsonUnmarshal(v, &m); err != nil {
			return err
		}
		return tx.Bucket(bucketUserOrgs).Put(append(m.UserID[:], m.OrgID[:]...), []byte{})
	})
	if err != nil {
		return err
	}
	users := tx.Bucket(bucketUsers)
	var all []User
	if err := users.ForEach(func(_, v []byte) error {
		var u User
		if err := jsonUnmarshal(v, &u); err != nil {
			return err
		}
		all = append(all, u)
		return nil
	}); err != nil {
		return err
	}
	for _, u := range all {
		u.EmailFallback = true
		if err := putUser(tx, u); err != nil {
			return err
		}
	}
	return nil
}
