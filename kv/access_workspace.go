package kv

import (
	"context"
	"sort"
	"strings"
	"time"
)

// The workspace step: list the person's workspaces and pending invitations, then
// select one, accept an invitation to one, or create a starter workspace. Allowed once
// the email (and any two-step due) is verified, and again before the key is issued, so
// an agent may change its mind. A workspace that requires two-step sends a transaction
// that has not passed it back to verify_mfa.

// AccessWorkspaces is what the list action shows.
type AccessWorkspaces struct {
	Access      Access
	Workspaces  []UserOrg
	Invitations []InvitationView
}

var accessWorkspaceStates = []AccessState{AccessAwaitingWorkspace, AccessAwaitingKey}

// ListAccessWorkspaces returns the person's workspaces by name and the pending
// invitations to their address, newest first.
func (db *DB) ListAccessWorkspaces(ctx context.Context, id ID, proof string) (AccessWorkspaces, error) {
	var out AccessWorkspaces
	a, err := db.accessStep(ctx, id, proof, accessWorkspaceStates,
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			out = AccessWorkspaces{Workspaces: []UserOrg{}, Invitations: []InvitationView{}}
			c := tx.Bucket(bucketUserOrgs).Cursor()
			for k, _ := c.Seek(rec.UserID[:]); k != nil && string(k[:16]) == string(rec.UserID[:]); k, _ = c.Next() {
				var orgID ID
				copy(orgID[:], k[16:])
				if uo, err := userOrg(tx, orgID, rec.UserID); err == nil {
					out.Workspaces = append(out.Workspaces, uo)
				}
			}
			sort.SliceStable(out.Workspaces, func(i, j int) bool {
				return strings.ToLower(out.Workspaces[i].Org.Name) < strings.ToLower(out.Workspaces[j].Org.Name)
			})
			invs, err := invitationsFor(tx, rec.Email, now)
			if err != nil {
				return nil, err
			}
			for _, inv := range invs {
				if org, err := orgByID(tx, inv.OrgID); err == nil {
					out.Invitations = append(out.Invitations, InvitationView{Invitation: inv.Invitation, OrgName: org.Name})
				}
			}
			sort.SliceStable(out.Invitations, func(i, j int) bool { return out.Invitations[i].CreatedAt.After(out.Invitations[j].CreatedAt) })
			return nil, nil
		})
	out.Access = a
	return out, err
}

// AccessChosen is the workspace a select, accept or create action chose.
type AccessChosen struct {
	Access    Access
	Workspace UserOrg
}

// SelectAccessWorkspace chooses one of the person's workspaces. ENOTFOUND for an
// organisation they are not a member of (as for one that does not exist).
func (db *DB) SelectAccessWorkspace(ctx context.Context, id ID, proof string, org ID) (AccessChosen, error) {
	var out AccessChosen
	a, err := db.accessStep(ctx, id, proof, accessWorkspaceStates,
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			uo, err := userOrg(tx, org, rec.UserID)
			if err != nil {
				return nil, notFound("Workspace")
			}
			out.Workspace = uo
			return nil, enterWorkspace(tx, rec, uo)
		})
	out.Access = a
	return out, err
}

// AcceptAccessInvitation accepts a pending invitation to the person's address and
// chooses its workspace. ENOTFOUND invitation_invalid for an invitation that is not
// theirs, or is expired, revoked or used.
func (db *DB) AcceptAccessInvitation(ctx context.Context, id ID, proof string, invitation ID) (AccessChosen, error) {
	var out AccessChosen
	a, err := db.accessStep(ctx, id, proof, accessWorkspaceStates,
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			invs, err := invitationsFor(tx, rec.Email, now)
			if err != nil {
				return nil, err
			}
			for _, inv := range invs {
				if inv.ID != invitation {
					continue
				}
				_, m, org, err := db.joinByInvitation(tx, inv, now)
				if err != nil {
					return nil, err
				}
				out.Workspace = UserOrg{Org: org, Role: m.Role}
				return nil, enterWorkspace(tx, rec, out.Workspace)
			}
			return nil, errInvitation
		})
	out.Access = a
	return out, err
}

// CreateAccessWorkspace creates a starter workspace named name (1 to 200 characters)
// with the person as its owner, and chooses it; one per transaction (ECONFLICT
// workspace_created for a second). Names need not be unique: telling a
// stranger that a name is taken would tell them another organisation exists.
func (db *DB) CreateAccessWorkspace(ctx context.Context, id ID, proof, name string) (AccessChosen, error) {
	name = strings.TrimSpace(name)
	if n := len([]rune(name)); n == 0 || n > 200 || strings.ContainsAny(name, "\x00\r\n") {
		return AccessChosen{}, Invalid(FieldError{Loc: []any{"name"}, Msg: "Workspace name must be 1 to 200 characters on one line.",
			Type: "string_length", Ctx: map[string]any{"max_length": 200}})
	}
	var out AccessChosen
	a, err := db.accessStep(ctx, id, proof, accessWorkspaceStates,
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			if !rec.Created.IsZero() {
				return nil, Errorf(ECONFLICT, "workspace_created", "This transaction has created a workspace already ("+rec.Created.String()+"): select it.")
			}
			org := Org{ID: db.NewID(), Name: name, CreatedAt: now}
			rec.Created = org.ID
			if err := db.putOrg(tx, org); err != nil {
				return nil, err
			}
			if err := putMember(tx, Membership{OrgID: org.ID, UserID: rec.UserID, Role: RoleOwner, CreatedAt: now}); err != nil {
				return nil, err
			}
			out.Workspace = UserOrg{Org: org, Role: RoleOwner}
			return nil, enterWorkspace(tx, rec, out.Workspace)
		})
	out.Access = a
	return out, err
}

// enterWorkspace records the chosen workspace and the step now due: issue_key, or
// verify_mfa first when the workspace requires two-step and none was passed.
func enterWorkspace(tx Tx, rec *accessRecord, uo UserOrg) error {
	u, err := userByID(tx, rec.UserID)
	if err != nil {
		return err
	}
	rec.OrgID = uo.Org.ID
	rec.State = AccessAwaitingKey
	if NeedsTwoStep(u, uo.Org) && !rec.MFAPassed {
		rec.State = AccessAwaitingMFA
	}
	return nil
}

// userOrg is the user's membership of org with the organisation.
func userOrg(tx Tx, org, user ID) (UserOrg, error) {
	m, err := memberFor(tx, org, user)
	if err != nil || user.IsZero() {
		return UserOrg{}, notFound("Workspace")
	}
	o, err := orgByID(tx, org)
	if err != nil {
		return UserOrg{}, err
	}
	return UserOrg{Org: o, Role: m.Role}, nil
}

// invitationsFor returns the pending invitations to email.
func invitationsFor(tx Tx, email string, now time.Time) ([]invitationRecord, error) {
	var out []invitationRecord
	err := tx.Bucket(bucketInvitations).ForEach(func(_, v []byte) error {
		var r invitationRecord
		if err := jsonUnmarshal(v, &r); err != nil {
			return err
		}
		if r.Email == email && now.Before(r.ExpiresAt) {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}
