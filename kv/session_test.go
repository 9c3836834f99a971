package kv

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSessionIdleExpiry(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	// Used every 13 days, a session lives on; 14 idle days end it.
	for range 3 {
		clk.add(13 * 24 * time.Hour)
		if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); err != nil {
			t.Fatalf("after 13 idle days: %v", err)
		}
	}
	clk.add(SessionIdleTTL - time.Second)
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); err != nil {
		t.Fatalf("a second before 14 idle days: %v", err)
	}
	clk.add(SessionIdleTTL)
	if _, err := db.AuthenticateSession(ctx, s.Token, "", ""); reason(err) != "EUNAUTHORIZED session_invalid" {
		t.Fatalf("after 14 idle days: %v", err)
	}
	if list, _ := db.FindSessions(ctx, s.User.ID); len(list) != 0 {
		t.Fatalf("expired session listed: %+v", list)
	}
	if n, err := db.SweepPeople(ctx); err != nil || n.Sessions != 1 {
		t.Fatalf("sweep %+v %v", n, err)
	}
}

func TestSessionTouchIsThrottled(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	s := signInAs(t, db, "acme@example.com")
	before := db.CommitStats()
	clk.add(SessionTouchEvery - time.Second)
	for range 20 {
		if _, err := db.AuthenticateSession(ctx, s.Token, "other agent", "10.9.9.9"); err != nil {
			t.Fatal(err)
		}
	}
	if after := db.CommitStats(); after != before {
		t.Fatalf("requests within %v wrote: %+v → %+v", SessionTouchEvery, before, after)
	}
	list, _ := db.FindSessions(ctx, s.User.ID)
	if len(list) != 1 || !list[0].LastSeenAt.Equal(t0) {
		t.Fatalf("last seen moved early: %+v", list)
	}
	clk.add(time.Second)
	auth, err := db.AuthenticateSession(ctx, s.Token, "other agent", "10.9.9.9")
	if err != nil || !auth.Session.LastSeenAt.Equal(t0.Add(SessionTouchEvery)) {
		t.Fatalf("touch: %+v %v", auth.Session, err)
	}
	list, _ = db.FindSessions(ctx, s.User.ID)
	if !list[0].LastSeenAt.Equal(t0.Add(SessionTouchEvery)) || list[0].UserAgent != "other agent" || list[0].IP != "10.9.9.9" {
		t.Fatalf("after %v: %+v", SessionTouchEvery, list[0])
	}
}

func TestSessionWorkspace(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, newClock(t0).now)
	acme := mustOrg(t, db, "acme")
	other := mustOrg(t, db, "other")
	if _, err := db.AddMember(ctx, acme.ID, "ann@example.com", RoleMember); err != nil {
		t.Fatal(err)
	}
	s := signInAs(t, db, "ann@example.com")
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: other.ID, Environment: EnvLive}); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("another org: %v", err)
	}
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: acme.ID, Environment: "prod"}); reason(err) != "EINVALID validation_error" {
		t.Fatalf("bad environment: %v", err)
	}
	auth, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: acme.ID, Environment: EnvTest})
	if err != nil || auth.Org.ID != acme.ID || auth.Role != RoleMember || auth.Session.Environment != EnvTest {
		t.Fatalf("choose: %+v %v", auth, err)
	}
	auth, err = db.AuthenticateSession(ctx, s.Token, "", "")
	if err != nil || auth.Org.ID != acme.ID || auth.TwoStepDue() {
		t.Fatalf("auth: %+v %v", auth, err)
	}
	owner, _ := db.FindUserByEmail(ctx, "acme@example.com")
	if err := db.RemoveMember(ctx, RemoveMemberInput{OrgID: acme.ID, Actor: owner.ID, UserID: s.User.ID}); err != nil {
		t.Fatal(err)
	}
	auth, err = db.AuthenticateSession(ctx, s.Token, "", "")
	if err != nil || !auth.Org.ID.IsZero() || auth.Role != "" || !auth.Session.OrgID.IsZero() {
		t.Fatalf("after removal the session still holds the org: %+v %v", auth, err)
	}
}

func TestSessionListAndRevoke(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	mustOrg(t, db, "bob")
	a := signInAs(t, db, "acme@example.com")
	clk.add(time.Minute)
	b := signInAs(t, db, "acme@example.com")
	clk.add(time.Minute)
	c := signInAs(t, db, "acme@example.com")
	bob := signInAs(t, db, "bob@example.com")
	list, err := db.FindSessions(ctx, a.User.ID)
	if err != nil || len(list) != 3 || list[0].ID != c.Session.ID || list[2].ID != a.Session.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, s := range list {
		if s.CSRF != "" {
			t.Fatal("a listed session carries its CSRF secret")
		}
	}
	if err := db.RevokeSession(ctx, bob.User.ID, a.Session.ID); reason(err) != "ENOTFOUND not_found" {
		t.Fatalf("another user's session: %v", err)
	}
	if err := db.RevokeSession(ctx, a.User.ID, b.Session.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AuthenticateSession(ctx, b.Token, "", ""); err == nil {
		t.Fatal("revoked session still works")
	}
	if n, err := db.RevokeOtherSessions(ctx, a.User.ID, c.Session.ID); err != nil || n != 1 {
		t.Fatalf("revoke others: %d %v", n, err)
	}
	if _, err := db.AuthenticateSession(ctx, a.Token, "", ""); err == nil {
		t.Fatal("other session still works")
	}
	if _, err := db.AuthenticateSession(ctx, c.Token, "", ""); err != nil {
		t.Fatalf("kept session: %v", err)
	}
	if _, err := db.AuthenticateSession(ctx, bob.Token, "", ""); err != nil {
		t.Fatalf("bob's session: %v", err)
	}
	if err := db.SignOut(ctx, c.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AuthenticateSession(ctx, c.Token, "", ""); err == nil {
		t.Fatal("signed-out session still works")
	}
	if err := db.SignOut(ctx, "ivs_nonsense"); err != nil {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestSessionCSRF(t *testing.T) {
	db := mustOpenDB(t, newClock(t0).now)
	mustOrg(t, db, "acme")
	a := signInAs(t, db, "acme@example.com")
	b := signInAs(t, db, "acme@example.com")
	if len(a.Session.CSRF) < 43 || !a.Session.CheckCSRF(a.Session.CSRF) {
		t.Fatalf("csrf %q", a.Session.CSRF)
	}
	if a.Session.CheckCSRF(b.Session.CSRF) || a.Session.CheckCSRF("") || (Session{}).CheckCSRF("") {
		t.Fatal("accepted a wrong or empty CSRF token")
	}
}

func TestSessionTokenFormat(t *testing.T) {
	tok, hash := newSessionToken()
	if !strings.HasPrefix(tok, "ivs_") || len(tok) != sessionTokenLen || !ParseSessionToken(tok) || len(hash) != 32 {
		t.Fatalf("token %q", tok)
	}
	for i := len("ivs_"); i < len(tok); i++ {
		b := []byte(tok)
		b[i] = map[bool]byte{true: 'b', false: 'a'}[b[i] == 'a']
		if ParseSessionToken(string(b)) {
			t.Fatalf("changed character %d accepted", i)
		}
	}
	key, _ := newCheckedToken("jsk_live_")
	inv, _ := newCheckedToken(invitationPrefix)
	for _, bad := range []string{"", "ivs_", key, inv, strings.Replace(tok, "ivs_", "ivx_", 1)} {
		if ParseSessionToken(bad) {
			t.Errorf("accepted %q", bad)
		}
	}
	if !ParseInvitationToken(inv) || ParseInvitationToken(tok) {
		t.Fatal("invitation token parser mixes up kinds")
	}
}

func FuzzParseSessionToken(f *testing.F) {
	tok, _ := newSessionToken()
	f.Add(tok)
	f.Add("ivs_")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if !ParseSessionToken(s) {
			return
		}
		if len(s) != sessionTokenLen || !strings.HasPrefix(s, "ivs_") || checksum(s[:len(s)-6]) != s[len(s)-6:] {
			t.Fatalf("accepted malformed %q", s)
		}
	})
}

func FuzzParseInvitationToken(f *testing.F) {
	tok, _ := newCheckedToken(invitationPrefix)
	f.Add(tok)
	f.Add("ivi_")
	f.Fuzz(func(t *testing.T, s string) {
		if !ParseInvitationToken(s) {
			return
		}
		if len(s) != len(invitationPrefix)+keyBodyLen+keyChecksumLen || !strings.HasPrefix(s, invitationPrefix) || checksum(s[:len(s)-6]) != s[len(s)-6:] {
			t.Fatalf("accepted malformed %q", s)
		}
	})
}

// Many requests on one session at once: the throttled touch and concurrent revocation
// never corrupt the session indexes (run with -race).
func TestSessionConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	mustOrg(t, db, "acme")
	keep := signInAs(t, db, "acme@example.com")
	var others []SessionStart
	for range 4 {
		others = append(others, signInAs(t, db, "acme@example.com"))
	}
	clk.add(SessionTouchEvery)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := db.AuthenticateSession(ctx, keep.Token, "ua", "ip"); err != nil {
					t.Errorf("kept session failed: %v", err)
					return
				}
				_, _ = db.AuthenticateSession(ctx, others[i%4].Token, "ua", "ip")
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := db.RevokeOtherSessions(ctx, keep.User.ID, keep.Session.ID); err != nil {
			t.Errorf("revoke: %v", err)
		}
	}()
	wg.Wait()
	list, err := db.FindSessions(ctx, keep.User.ID)
	if err != nil || len(list) != 1 || list[0].ID != keep.Session.ID {
		t.Fatalf("after: %+v %v", list, err)
	}
	for _, o := range others {
		if _, err := db.AuthenticateSession(ctx, o.Token, "", ""); err == nil {
			t.Fatal("a revoked session came back (a touch rewrote it)")
		}
	}
}

// BenchmarkAuthenticateSession is the app's per-request cost of a session cookie with a
// chosen workspace (no touch: within SessionTouchEvery).
func BenchmarkAuthenticateSession(b *testing.B) {
	ctx := context.Background()
	db := mustOpenDB(b, newClock(t0).now)
	org := mustOrg(b, db, "acme")
	s := signInAs(b, db, "acme@example.com")
	if _, err := db.ChooseWorkspace(ctx, WorkspaceInput{Token: s.Token, OrgID: org.ID, Environment: EnvLive}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.AuthenticateSession(ctx, s.Token, "ua", "127.0.0.1"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
