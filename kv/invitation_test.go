package kv

import (
	"context"
	"testing"
	"time"
)

func TestInvitation(t *testing.T) {
	ctx := context.Background()
	t.Run("OK_AcceptCreatesUserMembershipAndSession", func(t *testing.T) {
		clk := newClock(t0)
		db := mustOpenDB(t, clk.now)
		org, owner, _, _ := team(t, db)
		inv, token, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: " New@Acme.test ", Role: RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if !ParseInvitationToken(token) || inv.Email != "new@acme.test" || !inv.ExpiresAt.Equal(t0.Add(7*24*time.Hour)) || inv.InvitedBy != owner.ID {
			t.Fatalf("invitation %+v %q", inv, token)
		}
		pending, _ := db.FindInvitations(ctx, org.ID)
		if len(pending) != 1 || pending[0].ID != inv.ID {
			t.Fatalf("pending %+v", pending)
		}
		view, err := db.FindInvitation(ctx, token)
		if err != nil || view.OrgName != "Acme" || view.Role != RoleAdmin {
			t.Fatalf("view %+v %v", view, err)
		}
		if _, err := db.FindUserByEmail(ctx, "new@acme.test"); reason(err) != "ENOTFOUND not_found" {
			t.Fatalf("user exists before accepting: %v", err)
		}
		acc, err := db.AcceptInvitation(ctx, AcceptInput{Token: token, UserAgent: "ua", IP: "1.2.3.4"})
		if err != nil {
			t.Fatal(err)
		}
		if !acc.User.Verified || acc.Membership.Role != RoleAdmin || acc.Org.ID != org.ID || acc.Session.OrgID != org.ID || acc.Session.Environment != EnvLive {
			t.Fatalf("accepted %+v", acc)
		}
		auth, err := db.AuthenticateSession(ctx, acc.Token, "", "")
		if err != nil || auth.Role != RoleAdmin || auth.User.Email != "new@acme.test" {
			t.Fatalf("session %+v %v", auth, err)
		}
		if _, err := db.AcceptInvitation(ctx, AcceptInput{Token: token}); reason(err) != "ENOTFOUND invitation_invalid" {
			t.Fatalf("second accept: %v", err)
		}
		if p, _ := db.FindInvitations(ctx, org.ID); len(p) != 0 {
			t.Fatalf("still pending %+v", p)
		}
	})
	t.Run("ErrExpiresAfterSevenDays", func(t *testing.T) {
		clk := newClock(t0)
		db := mustOpenDB(t, clk.now)
		org, owner, _, _ := team(t, db)
		_, early, _ := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "a@x.test", Role: RoleMember})
		_, late, _ := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "b@x.test", Role: RoleMember})
		clk.add(InvitationTTL - time.Second)
		if _, err := db.AcceptInvitation(ctx, AcceptInput{Token: early}); err != nil {
			t.Fatalf("a second before 7 days: %v", err)
		}
		clk.add(time.Second)
		if _, err := db.FindInvitation(ctx, late); reason(err) != "ENOTFOUND invitation_invalid" {
			t.Fatalf("at 7 days: %v", err)
		}
		if _, err := db.AcceptInvitation(ctx, AcceptInput{Token: late}); reason(err) != "ENOTFOUND invitation_invalid" {
			t.Fatalf("accept at 7 days: %v", err)
		}
		if p, _ := db.FindInvitations(ctx, org.ID); len(p) != 0 {
			t.Fatalf("expired listed as pending: %+v", p)
		}
		if n, err := db.SweepPeople(ctx); err != nil || n.Invitations != 1 {
			t.Fatalf("sweep %+v %v", n, err)
		}
	})
	t.Run("ErrRules", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		org, owner, admin, member := team(t, db)
		cases := []struct {
			name string
			in   InvitationInput
			want string
		}{
			{"ErrMemberInvites", InvitationInput{OrgID: org.ID, Actor: member.ID, Email: "x@x.test", Role: RoleMember}, "EFORBIDDEN role_forbidden"},
			{"ErrAdminInvitesOwner", InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "x@x.test", Role: RoleOwner}, "EFORBIDDEN owner_only"},
			{"ErrAlreadyMember", InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "MEMBER@acme.test", Role: RoleAdmin}, "ECONFLICT already_member"},
			{"ErrBadEmailAndRole", InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "nope", Role: "chief"}, "EINVALID validation_error"},
			{"ErrNoActor", InvitationInput{OrgID: org.ID, Email: "x@x.test", Role: RoleMember}, "ENOTFOUND not_found"},
			{"OK_AdminInvitesMember", InvitationInput{OrgID: org.ID, Actor: admin.ID, Email: "x@x.test", Role: RoleMember}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if _, _, err := db.CreateInvitation(ctx, tc.in); reason(err) != tc.want {
					t.Fatalf("got %v, want %q", err, tc.want)
				}
			})
		}
		if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "nope", Role: "chief"}); err == nil || len(err.(*Error).Fields) != 2 {
			t.Fatalf("both fields: %v", err)
		}
	})
	t.Run("OK_ReinviteReplacesAndRevoke", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		org, owner, _, member := team(t, db)
		_, first, _ := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "x@x.test", Role: RoleMember})
		second, token, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "x@x.test", Role: RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindInvitation(ctx, first); reason(err) != "ENOTFOUND invitation_invalid" {
			t.Fatalf("replaced token: %v", err)
		}
		if p, _ := db.FindInvitations(ctx, org.ID); len(p) != 1 || p[0].Role != RoleAdmin {
			t.Fatalf("pending %+v", p)
		}
		if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: member.ID, ID: second.ID}); reason(err) != "EFORBIDDEN role_forbidden" {
			t.Fatalf("member revokes: %v", err)
		}
		if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: owner.ID, ID: second.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AcceptInvitation(ctx, AcceptInput{Token: token}); reason(err) != "ENOTFOUND invitation_invalid" {
			t.Fatalf("revoked: %v", err)
		}
		if err := db.RevokeInvitation(ctx, RevokeInvitationInput{OrgID: org.ID, Actor: owner.ID, ID: second.ID}); reason(err) != "ENOTFOUND not_found" {
			t.Fatalf("revoke twice: %v", err)
		}
	})
	t.Run("OK_ExistingUserKeepsRoleAndRotates", func(t *testing.T) {
		db := mustOpenDB(t, newClock(t0).now)
		org, owner, _, _ := team(t, db)
		other := mustOrg(t, db, "other")
		otherOwner, _ := db.FindUserByEmail(ctx, "other@example.com")
		_, token, err := db.CreateInvitation(ctx, InvitationInput{OrgID: other.ID, Actor: otherOwner.ID, Email: "owner@acme.test", Role: RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		before := signInAs(t, db, "owner@acme.test")
		acc, err := db.AcceptInvitation(ctx, AcceptInput{Token: token, Previous: before.Token})
		if err != nil || acc.User.ID != owner.ID || acc.Membership.Role != RoleMember {
			t.Fatalf("accept %+v %v", acc, err)
		}
		if _, err := db.AuthenticateSession(ctx, before.Token, "", ""); err == nil {
			t.Fatal("previous session kept")
		}
		if orgs, _ := db.FindUserOrgs(ctx, owner.ID); len(orgs) != 2 || orgs[0].Org.ID != org.ID {
			t.Fatalf("orgs %+v", orgs)
		}
	})
}
