package kv

import (
	"context"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// team makes an organisation with an owner, an admin and a member.
func team(tb testing.TB, db *DB) (org Org, owner, admin, member User) {
	tb.Helper()
	ctx := context.Background()
	org, owner, err := db.CreateOrg(ctx, OrgInput{Name: "Acme", Email: "owner@acme.test"})
	if err != nil {
		tb.Fatal(err)
	}
	if admin, err = db.AddMember(ctx, org.ID, "admin@acme.test", RoleAdmin); err != nil {
		tb.Fatal(err)
	}
	if member, err = db.AddMember(ctx, org.ID, "member@acme.test", RoleMember); err != nil {
		tb.Fatal(err)
	}
	return org, owner, admin, member
}

func TestLastOwner(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, admin, _ := team(t, db)
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: owner.ID, Role: RoleAdmin}); reason(err) != "ECONFLICT last_owner" {
		t.Fatalf("demote the only owner: %v", err)
	}
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: owner.ID, UserID: owner.ID}); reason(err) != "ECONFLICT last_owner" {
		t.Fatalf("the only owner leaves: %v", err)
	}
	if _, err := db.AddMember(ctx, org.ID, "owner@acme.test", RoleMember); reason(err) != "ECONFLICT last_owner" {
		t.Fatalf("operator demotes the only owner: %v", err)
	}
	// With a second owner, either may go.
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: admin.ID, Role: RoleOwner}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: owner.ID, Role: RoleMember}); err != nil {
		t.Fatalf("demote one of two owners: %v", err)
	}
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: admin.ID, UserID: admin.ID}); reason(err) != "ECONFLICT last_owner" {
		t.Fatalf("the new only owner leaves: %v", err)
	}
}

func TestMemberRoleRules(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, admin, member := team(t, db)
	other := mustOrg(t, db, "other")
	outsider, _ := db.FindUserByEmail(ctx, "other@example.com")
	cases := []struct {
		name string
		in   MemberRoleInput
		want string
	}{
		{"ErrMemberChangesRoles", MemberRoleInput{OrgID: org.ID, Actor: member.ID, UserID: admin.ID, Role: RoleMember}, "EFORBIDDEN role_forbidden"},
		{"ErrAdminMakesOwner", MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: member.ID, Role: RoleOwner}, "EFORBIDDEN owner_only"},
		{"ErrAdminDemotesOwner", MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: owner.ID, Role: RoleAdmin}, "EFORBIDDEN owner_only"},
		{"ErrOutsider", MemberRoleInput{OrgID: org.ID, Actor: outsider.ID, UserID: member.ID, Role: RoleAdmin}, "ENOTFOUND not_found"},
		{"ErrNotAMember", MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: outsider.ID, Role: RoleAdmin}, "ENOTFOUND not_found"},
		{"ErrBadRole", MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: member.ID, Role: "boss"}, "EINVALID validation_error"},
		{"ErrOtherOrg", MemberRoleInput{OrgID: other.ID, Actor: owner.ID, UserID: member.ID, Role: RoleAdmin}, "ENOTFOUND not_found"},
		{"OK_AdminPromotesMember", MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: member.ID, Role: RoleAdmin}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := db.UpdateMemberRole(ctx, tc.in)
			if reason(err) != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if err == nil && m.Role != tc.in.Role {
				t.Fatalf("role %q", m.Role)
			}
		})
	}
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: admin.ID, UserID: owner.ID}); reason(err) != "EFORBIDDEN owner_only" {
		t.Fatalf("admin removes owner: %v", err)
	}
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: outsider.ID, On: true}); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("outsider sets require_mfa: %v", err)
	}
	if o, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: admin.ID, On: true}); err != nil || !o.RequireMFA {
		t.Fatalf("admin sets require_mfa: %+v %v", o, err)
	}
	if got, _ := db.FindOrgByID(ctx, org.ID); !got.RequireMFA {
		t.Fatal("require_mfa not stored")
	}
}

func TestMemberListsAndRemoval(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, admin, member := team(t, db)
	beta, _, err := db.CreateOrg(ctx, OrgInput{Name: "beta", Email: "member@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	members, err := db.FindMembers(ctx, org.ID)
	if err != nil || len(members) != 3 || members[0].User.ID != owner.ID || members[1].User.ID != admin.ID || members[2].User.ID != member.ID || members[2].Role != RoleMember {
		t.Fatalf("members %+v %v", members, err)
	}
	orgs, err := db.FindUserOrgs(ctx, member.ID)
	if err != nil || len(orgs) != 2 || orgs[0].Org.ID != org.ID || orgs[0].Role != RoleMember || orgs[1].Org.ID != beta.ID || orgs[1].Role != RoleOwner {
		t.Fatalf("user orgs %+v %v", orgs, err)
	}
	// Removal ends the membership and revokes the member's keys there, not elsewhere.
	k, secret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "m", Environment: EnvLive, Scopes: []string{ScopeStudiesRead}})
	if err != nil {
		t.Fatal(err)
	}
	_, betaSecret, err := db.CreateKey(ctx, KeyInput{OrgID: beta.ID, UserID: member.ID, Name: "b", Environment: EnvLive, Scopes: []string{ScopeStudiesRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: member.ID, UserID: admin.ID}); reason(err) != "EFORBIDDEN role_forbidden" {
		t.Fatalf("member removes admin: %v", err)
	}
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: admin.ID, UserID: member.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, secret); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("removed member's key: %v", err)
	}
	if _, err := db.Authenticate(ctx, betaSecret); err != nil {
		t.Fatalf("key in another org: %v", err)
	}
	if _, err := db.FindMembership(ctx, org.ID, member.ID); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("membership: %v", err)
	}
	if orgs, _ := db.FindUserOrgs(ctx, member.ID); len(orgs) != 1 || orgs[0].Org.ID != beta.ID {
		t.Fatalf("user orgs after removal %+v", orgs)
	}
	keys, _ := db.FindKeys(ctx, org.ID)
	if len(keys) != 1 || keys[0].ID != k.ID || keys[0].RevokedAt == nil {
		t.Fatalf("keys %+v", keys)
	}
	// Leaving on one's own.
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: admin.ID, UserID: admin.ID}); err != nil {
		t.Fatalf("admin leaves: %v", err)
	}
}

func TestKeyRoleAndMFARules(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, admin, member := team(t, db)
	for _, s := range []string{ScopeStudiesGoLive, ScopeExportRead} {
		if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "k", Environment: EnvLive, Scopes: []string{ScopeStudiesRead, s}}); reason(err) != "EFORBIDDEN role_forbids_scope" {
			t.Fatalf("member with %s: %v", s, err)
		}
	}
	mine, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "mine", Environment: EnvTest, Scopes: []string{ScopeStudiesRead, ScopeStudiesWrite, ScopeLinksWrite}})
	if err != nil {
		t.Fatal(err)
	}
	golive, goliveSecret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: admin.ID, Name: "admin", Environment: EnvLive, Scopes: []string{ScopeStudiesGoLive}})
	if err != nil {
		t.Fatal(err)
	}
	_, readSecret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: admin.ID, Name: "admin read", Environment: EnvLive, Scopes: []string{ScopeStudiesRead}})
	if err != nil {
		t.Fatal(err)
	}
	// Who sees what.
	if keys, _ := db.FindKeysFor(ctx, org.ID, member.ID); len(keys) != 1 || keys[0].ID != mine.ID {
		t.Fatalf("member sees %+v", keys)
	}
	if keys, _ := db.FindKeysFor(ctx, org.ID, owner.ID); len(keys) != 3 {
		t.Fatalf("owner sees %d keys", len(keys))
	}
	if _, err := db.RevokeKeyAs(ctx, RevokeKeyInput{OrgID: org.ID, Actor: member.ID, KeyID: golive.ID}); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("member revokes admin's key: %v", err)
	}
	// Demoting the admin to member revokes the key a member may not hold, only that one.
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: admin.ID, Role: RoleMember}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, goliveSecret); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("golive key after demotion: %v", err)
	}
	if _, err := db.Authenticate(ctx, readSecret); err != nil {
		t.Fatalf("read key after demotion: %v", err)
	}
	if k, err := db.RevokeKeyAs(ctx, RevokeKeyInput{OrgID: org.ID, Actor: member.ID, KeyID: mine.ID}); err != nil || k.RevokedAt == nil {
		t.Fatalf("member revokes own key: %+v %v", k, err)
	}
	// require_mfa: a key needs a passed two-step check, except from the operator.
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	in := KeyInput{OrgID: org.ID, UserID: owner.ID, Name: "mfa", Environment: EnvLive, Scopes: []string{ScopeExportRead}}
	if _, _, err := db.CreateKey(ctx, in); reason(err) != "EFORBIDDEN two_step_required" {
		t.Fatalf("without two-step: %v", err)
	}
	in.TwoStepPassed = true
	if _, _, err := db.CreateKey(ctx, in); err != nil {
		t.Fatalf("with two-step: %v", err)
	}
	in.TwoStepPassed, in.ByOperator = false, true
	if _, _, err := db.CreateKey(ctx, in); err != nil {
		t.Fatalf("operator: %v", err)
	}
}

// A file from before people (schema 2) gets its membership index and two-step defaults
// when opened.
func TestMigratePeople(t *testing.T) {
	boltOnly(t)
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	org, owner, err := db.CreateOrg(ctx, OrgInput{Name: "Old", Email: "old@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	// Make it look like schema 2: no index rows, users without the new fields.
	err = db.bolt.File().Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketUserOrgs); err != nil {
			return err
		}
		if err := tx.Bucket(bucketUsers).Put(owner.ID[:], []byte(`{"id":"`+owner.ID.String()+`","email":"old@example.com","created_at":"2026-01-01T00:00:00Z"}`)); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put([]byte("schema"), []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	orgs, err := db.FindUserOrgs(ctx, owner.ID)
	if err != nil || len(orgs) != 1 || orgs[0].Org.ID != org.ID || orgs[0].Role != RoleOwner {
		t.Fatalf("orgs after migration %+v %v", orgs, err)
	}
	if u, _ := db.FindUserByID(ctx, owner.ID); !u.EmailFallback {
		t.Fatalf("user after migration %+v", u)
	}
}

func TestUserName(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	_, u, err := db.CreateOrg(ctx, OrgInput{Name: "Acme", Email: "o@acme.test", OwnerName: "  Olive Owner "})
	if err != nil || u.Name != "Olive Owner" {
		t.Fatalf("owner %+v %v", u, err)
	}
	if _, _, err := db.CreateOrg(ctx, OrgInput{Name: "B", Email: "b@acme.test", OwnerName: "a\nb"}); reason(err) != "EINVALID validation_error" {
		t.Fatalf("two-line name: %v", err)
	}
	if got, err := db.UpdateUserName(ctx, u.ID, " Olive O. "); err != nil || got.Name != "Olive O." {
		t.Fatalf("update %+v %v", got, err)
	}
	if got, _ := db.FindUserByEmail(ctx, " O@ACME.test"); got.Name != "Olive O." {
		t.Fatalf("stored %+v", got)
	}
	if _, err := db.UpdateUserName(ctx, u.ID, strings.Repeat("é", 101)); reason(err) != "EINVALID validation_error" {
		t.Fatalf("long name: %v", err)
	}
	if _, err := db.UpdateUserName(ctx, NewV4(), "x"); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("unknown user: %v", err)
	}
}
