package kv

import (
	"context"
	"testing"
)

// TestAcceptInvitationOtherAccount: a browser signed in as someone else cannot accept
// an invitation to another address; nothing is spent, joined or signed in, and the
// invited address's own user (or a signed-out browser) still can.
func TestAcceptInvitationOtherAccount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		invited string // an existing user's address, or a new one
	}{
		{"ErrInvitedAddressHasAUser", "member@acme.test"},
		{"ErrInvitedAddressIsNew", "new@acme.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := mustOpenDB(t, newClock(t0).now)
			_, owner, _, _ := team(t, db)
			other := mustOrg(t, db, "other")
			_, token, err := db.CreateInvitation(ctx, InvitationInput{OrgID: other.ID, Actor: mustUser(t, db, "other@example.com").ID, Email: tc.invited, Role: RoleAdmin})
			if err != nil {
				t.Fatal(err)
			}
			signedIn := signInAs(t, db, owner.Email)
			_, err = db.AcceptInvitation(ctx, AcceptInput{Token: token, Actor: owner.ID, Previous: signedIn.Token})
			if reason(err) != "EFORBIDDEN invitation_other_account" {
				t.Fatalf("accept as another user: %v", err)
			}
			if _, err := db.AuthenticateSession(ctx, signedIn.Token, "", ""); err != nil {
				t.Fatalf("the signed-in session was dropped: %v", err)
			}
			orgs, _ := db.FindUserOrgs(ctx, owner.ID)
			for _, o := range orgs {
				if o.Org.ID == other.ID {
					t.Fatal("the signed-in user joined under another address")
				}
			}
			if _, err := db.FindInvitation(ctx, token); err != nil {
				t.Fatalf("the invitation was spent: %v", err)
			}
			acc, err := db.AcceptInvitation(ctx, AcceptInput{Token: token})
			if err != nil || acc.User.Email != tc.invited || acc.Org.ID != other.ID {
				t.Fatalf("signed-out accept afterwards: %+v %v", acc, err)
			}
		})
	}
	t.Run("OK_SignedInAsTheInvitedAddress", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		_, _, _, member := team(t, db)
		other := mustOrg(t, db, "other")
		_, token, err := db.CreateInvitation(ctx, InvitationInput{OrgID: other.ID, Actor: mustUser(t, db, "other@example.com").ID, Email: member.Email, Role: RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		s := signInAs(t, db, member.Email)
		acc, err := db.AcceptInvitation(ctx, AcceptInput{Token: token, Actor: member.ID, Previous: s.Token})
		if err != nil || acc.User.ID != member.ID || acc.Org.ID != other.ID {
			t.Fatalf("accept as the invited user: %+v %v", acc, err)
		}
	})
}

// mustUser finds the user with email.
func mustUser(tb testing.TB, db *DB, email string) User {
	tb.Helper()
	u, err := db.FindUserByEmail(context.Background(), email)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// TestOwnerInvitationOwnerOnly: only an owner may invite an owner, and only an owner may
// cancel or replace an invitation to be an owner; admins keep every other invitation.
func TestOwnerInvitationOwnerOnly(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, admin, _ := team(t, db)
	ownerInv, ownerToken, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "boss@acme.test", Role: RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "boss2@acme.test", Role: RoleOwner}); reason(err) != "EFORBIDDEN owner_only" {
		t.Fatalf("admin invites an owner: %v", err)
	}
	if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: admin.ID, ID: ownerInv.ID}); reason(err) != "EFORBIDDEN owner_only" {
		t.Fatalf("admin revokes an owner's invitation: %v", err)
	}
	if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "boss@acme.test", Role: RoleMember}); reason(err) != "EFORBIDDEN owner_only" {
		t.Fatalf("admin replaces an owner's invitation: %v", err)
	}
	if v, err := db.FindInvitation(ctx, ownerToken); err != nil || v.Role != RoleOwner {
		t.Fatalf("the owner's invitation after the admin's tries: %+v %v", v, err)
	}
	// An admin's own invitations stay theirs to cancel and replace.
	inv, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "help@acme.test", Role: RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "help@acme.test", Role: RoleMember}); err != nil {
		t.Fatalf("admin replaces an admin's invitation: %v", err)
	}
	if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: admin.ID, ID: inv.ID}); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("the replaced invitation: %v", err)
	}
	// The owner may do both.
	if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "boss@acme.test", Role: RoleAdmin}); err != nil {
		t.Fatalf("owner replaces an owner's invitation: %v", err)
	}
	again, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "boss3@acme.test", Role: RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: owner.ID, ID: again.ID}); err != nil {
		t.Fatalf("owner revokes an owner's invitation: %v", err)
	}
}
