package kv

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestViewerRole: a viewer may be added, invited and listed last; on a key or grant a
// viewer holds only studies:read and links:read; becoming a viewer revokes, in the same
// change, every key carrying anything else.
func TestViewerRole(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	org, owner, _, member := team(t, db)
	viewer, err := db.AddMember(ctx, org.ID, "viewer@acme.test", RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range AllScopes {
		_, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: viewer.ID, Name: "v", Environment: EnvLive, Scopes: []string{sc}})
		want := ""
		if sc != ScopeStudiesRead && sc != ScopeLinksRead {
			want = "EFORBIDDEN role_forbids_scope"
		}
		if reason(err) != want {
			t.Errorf("viewer with %s: %v, want %q", sc, err, want)
		}
	}
	if _, _, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "new@acme.test", Role: RoleViewer}); err != nil {
		t.Fatalf("invite a viewer: %v", err)
	}
	members, err := db.FindMembers(ctx, org.ID)
	if err != nil || members[len(members)-1].Role != RoleViewer {
		t.Fatalf("viewers listed last: %+v %v", members, err)
	}

	_, writeSecret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "w", Environment: EnvLive, Scopes: []string{ScopeStudiesRead, ScopeStudiesWrite}})
	if err != nil {
		t.Fatal(err)
	}
	_, readSecret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "r", Environment: EnvLive, Scopes: []string{ScopeStudiesRead, ScopeLinksRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, writeSecret); err != nil { // cached before the change
		t.Fatal(err)
	}
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: member.ID, Role: RoleViewer}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, writeSecret); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("write key of a new viewer: %v", err)
	}
	if _, err := db.Authenticate(ctx, readSecret); err != nil {
		t.Fatalf("read key of a new viewer: %v", err)
	}
}

// TestRoleChanges: joining, every change of role and leaving are recorded with who
// made them and when, newest first; a refused change records nothing.
func TestRoleChanges(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org, owner, admin, member := team(t, db) // the operator adds admin and member
	step := func() { clk.add(time.Minute) }
	step()
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: member.ID, Role: RoleViewer}); err != nil {
		t.Fatal(err)
	}
	step()
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: admin.ID, UserID: owner.ID, Role: RoleAdmin}); reason(err) != "EFORBIDDEN owner_only" {
		t.Fatalf("refused change: %v", err)
	}
	if _, err := db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: org.ID, Actor: owner.ID, UserID: member.ID, Role: RoleViewer}); err != nil {
		t.Fatal(err) // unchanged: nothing to record
	}
	step()
	_, tok, err := db.CreateInvitation(ctx, InvitationInput{OrgID: org.ID, Actor: owner.ID, Email: "joiner@acme.test", Role: RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcceptInvitation(ctx, AcceptInput{Token: tok}); err != nil {
		t.Fatalf("accept: %v", err)
	}
	step()
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: org.ID, Actor: member.ID, UserID: member.ID}); err != nil {
		t.Fatal(err)
	}

	changes, err := db.FindRoleChanges(ctx, org.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		by := c.ActorEmail
		if c.ByOperator() {
			by = "operator"
		}
		got = append(got, fmt.Sprintf("%s %t:%s→%s by %s at +%s", c.Email, c.OrgID == org.ID, c.From, c.To, by, c.At.Sub(t0)))
	}
	want := []string{
		"member@acme.test true:viewer→ by member@acme.test at +4m0s",
		"joiner@acme.test true:→member by owner@acme.test at +3m0s",
		"member@acme.test true:member→viewer by admin@acme.test at +1m0s",
		"member@acme.test true:→member by operator at +0s",
		"admin@acme.test true:→admin by operator at +0s",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changes\n got %q\nwant %q", got, want)
	}
	if few, err := db.FindRoleChanges(ctx, org.ID, 2); err != nil || len(few) != 2 || few[0].ID != changes[0].ID {
		t.Fatalf("limit 2: %d %v", len(few), err)
	}
	other := mustOrg(t, db, "other")
	if none, err := db.FindRoleChanges(ctx, other.ID, 0); err != nil || len(none) != 0 {
		t.Fatalf("another organisation: %+v %v", none, err)
	}
}

// TestViewerOAuth: an OAuth connection of a researcher made a viewer keeps only the
// scopes a viewer may hold, from the very next request; a viewer cannot approve more.
func TestViewerOAuth(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	member, err := f.db.AddMember(ctx, f.org.ID, "m@example.com", RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	approve := func(user ID, scopes ...string) (string, error) {
		_, code, err := f.db.Approve(ctx, ApproveInput{UserID: user, OrgID: f.org.ID, Environment: EnvLive, Client: f.client,
			Scopes: scopes, Resource: "/v1/api", RedirectURI: "http://127.0.0.1:4000/cb", Challenge: testChallenge(testVerifier)})
		return code, err
	}
	code, err := approve(member.ID, ScopeStudiesRead, ScopeStudiesWrite, ScopeLinksWrite)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.db.AuthenticateAccess(ctx, pair.Access); err != nil || len(c.Connection.Scopes) != 3 {
		t.Fatalf("before: %+v %v", c.Connection.Scopes, err)
	}
	if _, err := f.db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: f.org.ID, Actor: f.owner.ID, UserID: member.ID, Role: RoleViewer}); err != nil {
		t.Fatal(err)
	}
	if c, err := f.db.AuthenticateAccess(ctx, pair.Access); err != nil || fmt.Sprint(c.Connection.Scopes) != "[studies:read]" {
		t.Fatalf("after becoming a viewer: %+v %v", c.Connection.Scopes, err)
	}
	if _, err := approve(member.ID, ScopeStudiesRead, ScopeStudiesWrite); ErrorCode(err) != EFORBIDDEN {
		t.Fatalf("a viewer approves studies:write: %v", err)
	}
	if _, err := approve(member.ID, ScopeStudiesRead, ScopeLinksRead); err != nil {
		t.Fatalf("a viewer approves reading: %v", err)
	}
}
