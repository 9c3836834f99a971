package kv

import (
	"context"
	"errors"
	"testing"
)

// fenceNodes returns two nodes on one database with an organisation, a key whose
// credential node b has cached, and a study.
func fenceNodes(t *testing.T) (a, b *DB, org Org, secret string, study Study) {
	t.Helper()
	nodes := openNodes(t, 2)
	a, b = nodes[0], nodes[1]
	ctx := context.Background()
	org = mustOrg(t, a, "fence")
	_, secret, err := a.CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "ci", Environment: EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		t.Fatal(err)
	}
	title := "Fenced"
	study, err = a.CreateStudy(ctx, StudyInput{Partition: Partition{Org: org.ID, Env: EnvLive}, Brief: Brief{Title: &title}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, secret); err != nil { // cached on b from here
		t.Fatal(err)
	}
	return a, b, org, secret, study
}

func fenceState_(f *AuthFence) fenceState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// A cached key admitted under a fence is checked by the request's read itself: the
// read passes while nothing changed, and once the key is revoked on another node the
// very next read on this node fails and the key is refused from the store.
func TestNodes_FenceRidesOnTheRead(t *testing.T) {
	a, b, org, secret, study := fenceNodes(t)
	p := Partition{Org: org.ID, Env: EnvLive}

	ctx, f := WithAuthFence(context.Background())
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if s := fenceState_(f); s != fenceArmed {
		t.Fatalf("a cached credential left the fence in state %d, want armed", s)
	}
	if got, err := b.FindStudyByID(ctx, p, study.ID); err != nil || got.ID != study.ID {
		t.Fatalf("fenced read: %v, %v", got.ID, err)
	}
	if s := fenceState_(f); s != fencePassed {
		t.Fatalf("after the read the fence is in state %d, want passed", s)
	}
	if err := b.SettleAuth(ctx); err != nil {
		t.Fatalf("settling a passed fence: %v", err)
	}
	// A missing record under a fence is still a missing record.
	if _, err := b.FindStudyByID(ctx, p, NewV4()); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("missing study under a passed fence: %v", err)
	}

	if _, err := a.RevokeKey(context.Background(), mustKeyID(t, a, org.ID)); err != nil {
		t.Fatal(err)
	}
	ctx, f = WithAuthFence(context.Background())
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the cached credential is answered before its check: %v", err)
	}
	if _, err := b.FindStudyByID(ctx, p, study.ID); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("read after a revocation on another node: %v, want ErrCredentialChanged", err)
	}
	if err := b.SettleAuth(ctx); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("settling a failed fence: %v", err)
	}
	if err := b.ViewStudyRecord(ctx, p, study.ID, func([]byte) error { return nil }); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("a later read under a failed fence: %v", err)
	}
	f.Close()
	if _, err := b.Authenticate(context.Background(), secret); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("authenticating again after the failed check: %v, want EUNAUTHORIZED", err)
	}
}

func mustKeyID(t *testing.T, db *DB, org ID) ID {
	t.Helper()
	keys, err := db.FindKeys(context.Background(), org)
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys of the organisation: %v (%d)", err, len(keys))
	}
	return keys[0].ID
}

// In a transaction the check is sent with the first statement: a write by a credential
// changed meanwhile is rolled back whole, and a view checks too.
func TestNodes_FenceFailsTheTransaction(t *testing.T) {
	a, b, org, secret, _ := fenceNodes(t)
	p := Partition{Org: org.ID, Env: EnvLive}
	bg := context.Background()
	// Another key for the organisation: a change that leaves this key valid.
	if _, _, err := a.CreateKey(bg, KeyInput{OrgID: org.ID, Name: "other", Environment: EnvLive, Scopes: []string{"studies:read"}}); err != nil {
		t.Fatal(err)
	}
	ctx, f := WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	title := "Written by a stale credential"
	if _, err := b.CreateStudy(ctx, StudyInput{Partition: p, Brief: Brief{Title: &title}}); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("write under a changed credential: %v, want ErrCredentialChanged", err)
	}
	f.Close()
	page, err := a.FindStudies(bg, StudyFilter{Partition: p, Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("studies after the refused write: %d, %v; want the one seeded", len(page.Items), err)
	}

	// Authenticated again (from the store, so nothing to check), the request goes on.
	ctx, f = WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if s := fenceState_(f); s != fenceOpen {
		t.Fatalf("a credential read from the store armed the fence (state %d)", s)
	}
	if _, err := b.CreateStudy(ctx, StudyInput{Partition: p, Brief: Brief{Title: &title}}); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// Cached again: a view checks with its first statement and passes.
	ctx, f = WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if page, err := b.FindStudies(ctx, StudyFilter{Partition: p, Limit: 10}); err != nil || len(page.Items) != 2 {
		t.Fatalf("fenced view: %d studies, %v", len(page.Items), err)
	}
	if s := fenceState_(f); s != fencePassed {
		t.Fatalf("after a view the fence is in state %d, want passed", s)
	}
	f.Close()
}

// A fence never reached by a statement is settled on its own; a closed fence holds
// nothing to it any more.
func TestNodes_FenceSettledAndClosed(t *testing.T) {
	a, b, org, secret, study := fenceNodes(t)
	p := Partition{Org: org.ID, Env: EnvLive}
	bg := context.Background()
	ctx, f := WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := b.SettleAuth(ctx); err != nil || fenceState_(f) != fencePassed {
		t.Fatalf("settling an unchanged credential: %v (state %d)", err, fenceState_(f))
	}

	ctx, f = WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := a.RevokeKey(bg, mustKeyID(t, a, org.ID)); err != nil {
		t.Fatal(err)
	}
	// Work that outlives its request (a job started by it) is not held to its fence.
	if _, err := b.FindStudyByID(ctx, p, study.ID); err != nil {
		t.Fatalf("read under a closed fence: %v", err)
	}
	ctx, _ = WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err) // still cached: the check is due
	}
	if err := b.SettleAuth(ctx); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("settling a revoked credential: %v, want ErrCredentialChanged", err)
	}
}

// A fence arms only for a credential answered from the cache of a shared store: on a
// store of its own (bbolt) writes invalidate the cache themselves, and a credential
// just read from the store is current.
func TestAuthFence_ArmsOnlyOnASharedCacheHit(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "solo")
	_, secret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "ci", Environment: EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // a miss, then a hit
		fctx, f := WithAuthFence(ctx)
		if _, err := db.Authenticate(fctx, secret); err != nil {
			t.Fatal(err)
		}
		want := fenceOpen
		if db.Shared() && i == 1 {
			want = fenceArmed
		}
		if s := fenceState_(f); s != want {
			t.Fatalf("authentication %d left the fence in state %d, want %d", i, s, want)
		}
		if err := db.SettleAuth(fctx); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// An OAuth access token answered from one node's cache is fenced like an API key: the
// read after the token's revocation on another node fails its check, and the token is
// then refused from the store.
func TestNodes_FenceAccessToken(t *testing.T) {
	nodes := openNodes(t, 2)
	a, b := nodes[0], nodes[1]
	bg := context.Background()
	org, owner, err := a.CreateOrg(bg, OrgInput{Name: "acme", Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	client, _, err := a.RegisterClient(bg, ClientInput{Name: "Tool", RedirectURIs: []string{"http://127.0.0.1:3000/cb"},
		AuthMethod: AuthMethodNone, Scope: "studies:read"})
	if err != nil {
		t.Fatal(err)
	}
	_, code, err := a.Approve(bg, ApproveInput{UserID: owner.ID, OrgID: org.ID, Environment: EnvLive, Client: client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/api", RedirectURI: "http://127.0.0.1:3000/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := a.ExchangeCode(bg, ExchangeInput{Code: code, Client: client, RedirectURI: "http://127.0.0.1:3000/cb", Verifier: testVerifier})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthenticateAccess(bg, pair.Access); err != nil { // cached on b from here
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	ctx, f := WithAuthFence(bg)
	if _, err := b.AuthenticateAccess(ctx, pair.Access); err != nil {
		t.Fatal(err)
	}
	if s := fenceState_(f); s != fenceArmed {
		t.Fatalf("a cached access token left the fence in state %d, want armed", s)
	}
	if _, err := b.FindStudyByID(ctx, p, NewV4()); ErrorCode(err) != ENOTFOUND || fenceState_(f) != fencePassed {
		t.Fatalf("fenced read: %v (state %d)", err, fenceState_(f))
	}
	f.Close()

	if err := a.RevokeToken(bg, pair.Access, client.ID); err != nil {
		t.Fatal(err)
	}
	ctx, f = WithAuthFence(bg)
	defer f.Close()
	if _, err := b.AuthenticateAccess(ctx, pair.Access); err != nil {
		t.Fatalf("the cached token is answered before its check: %v", err)
	}
	if _, err := b.FindStudyByID(ctx, p, NewV4()); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("read after the token's revocation on another node: %v, want ErrCredentialChanged", err)
	}
	if _, err := b.AuthenticateAccess(bg, pair.Access); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("the revoked token authenticated again: %v, want EUNAUTHORIZED", err)
	}
}

// Under shared rate limits the check rides on the request's rate decision: a current
// credential is decided and recorded in one statement; a changed one is neither.
func TestNodes_FenceRidesOnTheRateDecision(t *testing.T) {
	a, b, org, secret, _ := fenceNodes(t)
	bg := context.Background()
	keys, limits := []string{"read:fenced"}, []int{5}
	const window = int64(60e9)
	count := func(now int64) int {
		t.Helper()
		logs, _, err := a.RateDecide(bg, keys, limits, window, now, false)
		if err != nil {
			t.Fatal(err)
		}
		return len(logs[0])
	}

	ctx, f := WithAuthFence(bg)
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	logs, admitted, err := b.RateDecide(ctx, keys, limits, window, 1e9, true)
	if err != nil || !admitted || len(logs) != 1 || len(logs[0]) != 0 {
		t.Fatalf("fenced decision: %v admitted=%v logs=%v", err, admitted, logs)
	}
	if s := fenceState_(f); s != fencePassed {
		t.Fatalf("after the decision the fence is in state %d, want passed", s)
	}
	f.Close()
	if n := count(2e9); n != 1 {
		t.Fatalf("%d admissions recorded, want 1", n)
	}

	if _, _, err := a.CreateKey(bg, KeyInput{OrgID: org.ID, Name: "other", Environment: EnvLive, Scopes: []string{"studies:read"}}); err != nil {
		t.Fatal(err)
	}
	ctx, f = WithAuthFence(bg)
	defer f.Close()
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.RateDecide(ctx, keys, limits, window, 3e9, true); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("decision for a changed credential: %v, want ErrCredentialChanged", err)
	}
	if n := count(4e9); n != 1 {
		t.Fatalf("%d admissions recorded after the refused decision, want still 1", n)
	}
}
