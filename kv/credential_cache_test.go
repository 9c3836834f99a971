package kv

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func mustKey(tb testing.TB, db *DB, org ID, env Environment, days int) (Key, string) {
	tb.Helper()
	k, secret, err := db.CreateKey(context.Background(), KeyInput{OrgID: org, Name: "k", Environment: env, Scopes: []string{ScopeStudiesRead}, ExpiresDays: days})
	if err != nil {
		tb.Fatal(err)
	}
	return k, secret
}

// mustWarm authenticates secret and checks the answer now comes from the cache.
func mustWarm(tb testing.TB, db *DB, secret string) Credential {
	tb.Helper()
	cred, err := db.Authenticate(context.Background(), secret)
	if err != nil {
		tb.Fatalf("authenticate: %v", err)
	}
	if _, ok := db.cache.credentials.get(HashKeySecret(secret)); !ok {
		tb.Fatal("credential not cached after a successful authentication")
	}
	return cred
}

func TestCredentialCache_RevocationWithCacheWarm(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "revoke")
	k, secret := mustKey(t, db, org.ID, EnvLive, 0)
	_, other := mustKey(t, db, org.ID, EnvLive, 0)
	mustWarm(t, db, secret)
	mustWarm(t, db, other)
	if _, err := db.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("revoked key with a warm cache: got %v, want EUNAUTHORIZED", err)
	}
	if _, err := db.Authenticate(ctx, other); err != nil {
		t.Fatalf("the organisation's other key after a revocation: %v", err)
	}
}

func TestCredentialCache_OrgChangeVisible(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "credits")
	_, secret := mustKey(t, db, org.ID, EnvLive, 0)
	if cred := mustWarm(t, db, secret); cred.Org.Credits != 0 {
		t.Fatalf("credits %d", cred.Org.Credits)
	}
	if _, err := db.AddCredits(ctx, org.ID, 7); err != nil {
		t.Fatal(err)
	}
	cred, err := db.Authenticate(ctx, secret)
	if err != nil || cred.Org.Credits != 7 {
		t.Fatalf("after adding credits: credits %d, %v; want 7", cred.Org.Credits, err)
	}
}

func TestCredentialCache_ExpiryRecheckedPerRequest(t *testing.T) {
	var nowNS atomic.Int64
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	nowNS.Store(start.UnixNano())
	db := mustOpenDB(t, func() time.Time { return time.Unix(0, nowNS.Load()) })
	ctx := context.Background()
	org := mustOrg(t, db, "expiry")
	_, secret := mustKey(t, db, org.ID, EnvTest, 30)
	mustWarm(t, db, secret)
	nowNS.Store(start.AddDate(0, 0, 30).Add(-time.Nanosecond).UnixNano())
	if _, err := db.Authenticate(ctx, secret); err != nil {
		t.Fatalf("a nanosecond before expiry: %v", err)
	}
	nowNS.Store(start.AddDate(0, 0, 30).UnixNano())
	if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("at expiry with a warm cache: got %v, want EUNAUTHORIZED", err)
	}
	if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("after expiry, uncached: got %v, want EUNAUTHORIZED", err)
	}
}

func TestCredentialCache_NoLeakAcrossOrgsAndEnvs(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	type want struct {
		key ID
		org ID
		env Environment
	}
	secrets := map[string]want{}
	var orgs []Org
	for _, name := range []string{"alpha", "beta"} {
		org := mustOrg(t, db, name)
		orgs = append(orgs, org)
		for _, env := range []Environment{EnvLive, EnvTest} {
			k, s := mustKey(t, db, org.ID, env, 0)
			secrets[s] = want{k.ID, org.ID, env}
		}
	}
	for round := 0; round < 2; round++ { // cold, then warm
		for s, w := range secrets {
			cred, err := db.Authenticate(ctx, s)
			if err != nil || cred.Key.ID != w.key || cred.Org.ID != w.org || cred.Key.OrgID != w.org || cred.Key.Environment != w.env {
				t.Fatalf("round %d: got key %s org %s env %s (%v), want %+v", round, cred.Key.ID, cred.Org.ID, cred.Key.Environment, err, w)
			}
			// The same secret body under the other environment's prefix is another secret.
			swapped := "jsk_test_" + s[len("jsk_live_"):]
			if w.env == EnvTest {
				swapped = "jsk_live_" + s[len("jsk_test_"):]
			}
			if _, err := db.Authenticate(ctx, swapped); ErrorCode(err) != EUNAUTHORIZED {
				t.Fatalf("secret under the other environment's prefix: %v", err)
			}
		}
	}
	if n := db.cache.credentials.len(); n != len(secrets) {
		t.Fatalf("cached %d credentials, want %d", n, len(secrets))
	}
	// A change to one organisation drops its credentials only.
	if _, err := db.AddCredits(ctx, orgs[0].ID, 1); err != nil {
		t.Fatal(err)
	}
	if n := db.cache.credentials.len(); n != 2 {
		t.Fatalf("after changing one organisation: %d cached, want the other's 2", n)
	}
}

// TestCredentialCache_RevokeRace hammers Authenticate from several goroutines while a key is
// revoked: once RevokeKey has returned, no authentication that starts afterwards may
// succeed, however the reads and the invalidation interleave.
func TestCredentialCache_RevokeRace(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "race")
	for round := 0; round < 20; round++ {
		k, secret := mustKey(t, db, org.ID, EnvLive, 0)
		var revoked atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					after := revoked.Load()
					_, err := db.Authenticate(ctx, secret)
					if after && err == nil {
						errs <- errorString("authenticated after RevokeKey returned")
						return
					}
				}
			}()
		}
		if _, err := db.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		revoked.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("round %d: revoked key: %v", round, err)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
