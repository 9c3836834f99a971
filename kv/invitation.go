package kv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"sort"
	"time"
)

// Invitations by email: a link with a random token (only its SHA-256 stored) that makes
// the address a member of the organisation when opened within 7 days.
const (
	InvitationTTL    = 7 * 24 * time.Hour
	invitationPrefix = "ivi_"
)

// Invitation is a pending invitation.
type Invitation struct {
	ID        ID        `json:"id"`
	OrgID     ID        `json:"org_id"`
	Email     string    `json:"email"`
	Role      Role      `json:"role"`
	InvitedBy ID        `json:"invited_by"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

type invitationRecord struct {
	Invitation
	Hash []byte `json:"hash"`
}

// InvitationView is an invitation with what the accept page shows of its organisation.
type InvitationView struct {
	Invitation
	OrgName string
}

// InvitationInput invites Email to OrgID with Role on behalf of Actor.
type InvitationInput struct {
	OrgID ID
	Actor ID
	Email string
	Role  Role
}

var (
	errInvitation    = Errorf(ENOTFOUND, "invitation_invalid", "This invitation is not valid: it may have expired, been revoked or been used. Ask for a new one.")
	errAlreadyMember = Errorf(ECONFLICT, "already_member", "That person is already a member of this organisation.")
	// errOtherAccount: the browser is signed in as someone other than the invited
	// address. Accepting would either join the wrong person or switch accounts on the
	// strength of a link alone; the person signs out first.
	errOtherAccount = Errorf(EFORBIDDEN, "invitation_other_account", "This invitation is for another email address than the one you're signed in with. Sign out, then open the invitation again.")
	// errOwnerInvitation: an owner's invitation is an owner's to cancel or replace, as
	// only an owner may make one.
	errOwnerInvitation = Errorf(EFORBIDDEN, "owner_only", "Only an owner can cancel or replace an invitation to be an owner.")
)

// CreateInvitation invites an address and returns the invitation with its token (the
// only time the token exists outside the email). A pending invitation of the same
// address to the organisation is replaced. Owners and admins may invite; only an owner
// may invite an owner or replace an invitation to be an owner. EINVALID for a bad email
// or role; EFORBIDDEN role_forbidden / owner_only; ENOTFOUND for an unknown org or a non-member actor; ECONFLICT
// already_member.
func (db *DB) CreateInvitation(ctx context.Context, in InvitationInput) (Invitation, string, error) {
	email, ok := NormalizeEmail(in.Email)
	var fields []FieldError
	if !ok {
		fields = append(fields, errEmail)
	}
	if !in.Role.Valid() {
		fields = append(fields, errRole)
	}
	if len(fields) > 0 {
		return Invitation{}, "", Invalid(fields...)
	}
	token, hash := newCheckedToken(invitationPrefix)
	var inv Invitation
	err := db.update(ctx, func(tx Tx) error {
		if _, err := orgByID(tx, in.OrgID); err != nil {
			return err
		}
		if in.Actor.IsZero() {
			return notFound("Organisation")
		}
		actor, err := memberFor(tx, in.OrgID, in.Actor)
		if err != nil {
			return notFound("Organisation")
		}
		if !actor.Role.Manages() {
			return errNotManager
		}
		if in.Role == RoleOwner && actor.Role != RoleOwner {
			return errOwnerOnly
		}
		if u, err := userByEmail(tx, email); err == nil {
			if _, err := memberFor(tx, in.OrgID, u.ID); err == nil {
				return errAlreadyMember
			}
		}
		now := db.Now()
		var stale []invitationRecord
		if err := eachInvitation(tx, in.OrgID, func(r invitationRecord) error {
			if r.Email == email {
				stale = append(stale, r)
			}
			if r.Email == email && r.Role == RoleOwner && actor.Role != RoleOwner && now.Before(r.ExpiresAt) {
				return errOwnerInvitation
			}
			return nil
		}); err != nil {
			return err
		}
		for _, r := range stale {
			if err := deleteInvitation(tx, r); err != nil {
				return err
			}
		}
		inv = Invitation{ID: db.NewID(), OrgID: in.OrgID, Email: email, Role: in.Role, InvitedBy: in.Actor, CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}
		rec := invitationRecord{Invitation: inv, Hash: hash[:]}
		if err := putJSON(tx.Bucket(bucketInvitations), invitationKey(inv), rec); err != nil {
			return err
		}
		return tx.Bucket(bucketInviteHashes).Put(hash[:], invitationKey(inv))
	})
	if err != nil {
		return Invitation{}, "", err
	}
	return inv, token, nil
}

// FindInvitations returns the organisation's pending (unexpired) invitations, newest
// first. ENOTFOUND for an unknown org.
func (db *DB) FindInvitations(ctx context.Context, org ID) ([]Invitation, error) {
	var out []Invitation
	err := db.view(ctx, func(tx Tx) error {
		out = nil
		if _, err := orgByID(tx, org); err != nil {
			return err
		}
		now := db.Now()
		return eachInvitation(tx, org, func(r invitationRecord) error {
			if now.Before(r.ExpiresAt) {
				out = append(out, r.Invitation)
			}
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, err
}

// FindInvitation returns the pending invitation a token names, for the accept page.
// ENOTFOUND invitation_invalid for a malformed, unknown, revoked, used or expired token.
func (db *DB) FindInvitation(ctx context.Context, token string) (InvitationView, error) {
	var out InvitationView
	err := db.view(ctx, func(tx Tx) error {
		rec, err := invitationByToken(tx, token, db.Now())
		if err != nil {
			return err
		}
		org, err := orgByID(tx, rec.OrgID)
		if err != nil {
			return errInvitation
		}
		out = InvitationView{Invitation: rec.Invitation, OrgName: org.Name}
		return nil
	})
	return out, err
}

// AcceptInput opens an invitation link in a browser.
type AcceptInput struct {
	Token string
	// Previous is the session token the browser held, if any: it is replaced.
	Previous string
	// Actor is the user the browser is signed in as, zero when signed out. A signed-in
	// browser may accept only an invitation to its own address.
	Actor     ID
	UserAgent string
	IP        string
}

// Accepted is the membership an invitation made and the session it started.
type Accepted struct {
	SessionStart
	Membership Membership
	Org        Org
}

// AcceptInvitation spends the invitation and, in the same transaction, creates the user
// if the address has none (verified: the link reached the address), the membership with
// the invited role (someone already a member keeps their role) and a new session in the
// invitation's organisation (live environment), replacing Previous. The link is as good
// a proof of the address as a sign-in code; a user with two-step on must still pass it
// (TwoStepDue). ENOTFOUND invitation_invalid as FindInvitation; EFORBIDDEN
// invitation_other_account when Actor is set and is not the invited address's user
// (nothing is spent or changed then).
func (db *DB) AcceptInvitation(ctx context.Context, in AcceptInput) (Accepted, error) {
	token, hash := newSessionToken()
	csrf := newCSRFSecret()
	var out Accepted
	err := db.update(ctx, func(tx Tx) error {
		out = Accepted{}
		now := db.Now()
		rec, err := invitationByToken(tx, in.Token, now)
		if err != nil {
			return err
		}
		if !in.Actor.IsZero() {
			if u, err := userByEmail(tx, rec.Email); err != nil || u.ID != in.Actor {
				return errOtherAccount
			}
		}
		u, m, org, err := db.joinByInvitation(tx, rec, now)
		if err != nil {
			return err
		}
		if err := db.dropSessionToken(tx, in.Previous); err != nil {
			return err
		}
		s := sessionRecord{Session: Session{
			ID: NewV4(), UserID: u.ID, OrgID: org.ID, Environment: EnvLive, CreatedAt: now, LastSeenAt: now,
			UserAgent: clip(in.UserAgent, 300), IP: clip(in.IP, 64), CSRF: csrf,
		}, Hash: hash[:]}
		if err := putSession(tx, s); err != nil {
			return err
		}
		out = Accepted{SessionStart: SessionStart{Session: s.Session, Token: token, User: u}, Membership: m, Org: org}
		return nil
	})
	if err != nil {
		return Accepted{}, err
	}
	return out, nil
}

// joinByInvitation spends the invitation rec and makes its address's user (created if
// new; verified and signed in now, since the invitation reached the address) a member
// with the invited role; someone already a member keeps their role. ENOTFOUND
// invitation_invalid when its organisation is gone.
func (db *DB) joinByInvitation(tx Tx, rec invitationRecord, now time.Time) (User, Membership, Org, error) {
	org, err := orgByID(tx, rec.OrgID)
	if err != nil {
		return User{}, Membership{}, Org{}, errInvitation
	}
	u, err := db.userForEmail(tx, rec.Email)
	if err != nil {
		return User{}, Membership{}, Org{}, err
	}
	u.Verified = true
	u.LastSignInAt = &now
	if err := putUser(tx, u); err != nil {
		return User{}, Membership{}, Org{}, err
	}
	if err := deleteInvitation(tx, rec); err != nil {
		return User{}, Membership{}, Org{}, err
	}
	m, err := memberFor(tx, rec.OrgID, u.ID)
	if err != nil {
		m = Membership{OrgID: rec.OrgID, UserID: u.ID, Role: rec.Role, CreatedAt: now}
		if err := putMember(tx, m); err != nil {
			return User{}, Membership{}, Org{}, err
		}
		if err := db.recordRoleChange(tx, rec.OrgID, u.ID, rec.InvitedBy, "", rec.Role); err != nil {
			return User{}, Membership{}, Org{}, err
		}
	}
	return u, m, org, nil
}

// RevokeInvitationInput revokes invitation ID of OrgID on behalf of Actor.
type RevokeInvitationInput struct {
	OrgID ID
	Actor ID
	ID    ID
}

// RevokeInvitation deletes a pending invitation; its link stops working at once. Owners
// and admins only (EFORBIDDEN role_forbidden), and only an owner may revoke an
// invitation to be an owner (EFORBIDDEN owner_only); ENOTFOUND for an unknown
// invitation.
func (db *DB) RevokeInvitation(ctx context.Context, in RevokeInvitationInput) error {
	return db.update(ctx, func(tx Tx) error {
		if in.Actor.IsZero() {
			return notFound("Organisation")
		}
		actor, err := memberFor(tx, in.OrgID, in.Actor)
		if err != nil {
			return notFound("Organisation")
		}
		if !actor.Role.Manages() {
			return errNotManager
		}
		var rec invitationRecord
		ok, err := getJSON(tx.Bucket(bucketInvitations), append(in.OrgID[:], in.ID[:]...), &rec)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("Invitation")
		}
		if rec.Role == RoleOwner && actor.Role != RoleOwner {
			return errOwnerInvitation
		}
		return deleteInvitation(tx, rec)
	})
}

// ParseInvitationToken reports whether s is shaped as an invitation token (ivi_, 43
// base62 characters, a 6-character checksum).
func ParseInvitationToken(s string) bool { return parseCheckedToken(s, invitationPrefix) }

func invitationKey(inv Invitation) []byte { return append(inv.OrgID[:], inv.ID[:]...) }

func invitationByToken(tx Tx, token string, now time.Time) (invitationRecord, error) {
	if !ParseInvitationToken(token) {
		return invitationRecord{}, errInvitation
	}
	hash := sha256.Sum256([]byte(token))
	key := tx.Bucket(bucketInviteHashes).Get(hash[:])
	if key == nil {
		return invitationRecord{}, errInvitation
	}
	var rec invitationRecord
	if ok, err := getJSON(tx.Bucket(bucketInvitations), key, &rec); err != nil || !ok {
		return invitationRecord{}, errInvitation
	}
	if !hmac.Equal(rec.Hash, hash[:]) || !now.Before(rec.ExpiresAt) {
		return invitationRecord{}, errInvitation
	}
	return rec, nil
}

func eachInvitation(tx Tx, org ID, fn func(invitationRecord) error) error {
	c := tx.Bucket(bucketInvitations).Cursor()
	for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
		var r invitationRecord
		if err := jsonUnmarshal(v, &r); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func deleteInvitation(tx Tx, r invitationRecord) error {
	if err := tx.Bucket(bucketInvitations).Delete(invitationKey(r.Invitation)); err != nil {
		return err
	}
	return tx.Bucket(bucketInviteHashes).Delete(r.Hash)
}
