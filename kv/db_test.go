package kv

import (
	"context"
	"sync"
	"testing"
	"time"
)

// mustOpenDB opens a store in a fresh temp folder and closes it with the test.
func mustOpenDB(tb testing.TB, now func() time.Time) *DB {
	tb.Helper()
	db, err := Open(tb.TempDir(), testOptions(tb, Options{Now: now}))
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func mustOrg(tb testing.TB, db *DB, name string) Org {
	tb.Helper()
	org, _, err := db.CreateOrg(context.Background(), OrgInput{Name: name, Email: name + "@example.com"})
	if err != nil {
		tb.Fatalf("create org: %v", err)
	}
	return org
}

func TestOpen(t *testing.T) {
	t.Run("OK_ReopenKeepsSecretAndSchema", func(t *testing.T) {
		dir := t.TempDir()
		db, err := Open(dir, testOptionsAt(t, dir, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		secret := append([]byte(nil), db.Secret()...)
		if len(secret) != 32 {
			t.Fatalf("secret length %d", len(secret))
		}
		_ = db.Close()
		db, err = Open(dir, testOptionsAt(t, dir, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if string(db.Secret()) != string(secret) {
			t.Fatal("secret changed across reopen")
		}
	})
	t.Run("ErrLocked", func(t *testing.T) {
		boltOnly(t)
		dir := t.TempDir()
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		start := time.Now()
		_, err = Open(dir, Options{LockTimeout: 100 * time.Millisecond})
		if ErrorCode(err) != ELOCKED {
			t.Fatalf("second open: got %v, want ELOCKED", err)
		}
		if time.Since(start) > time.Minute {
			t.Fatal("second open did not fail within a minute of its 100 ms lock timeout")
		}
	})
}

func TestNewV7Monotonic(t *testing.T) {
	var src idSource
	now := time.UnixMilli(1_800_000_000_000)
	var prev ID
	for i := 0; i < 10000; i++ { // far more than one millisecond's 4096 counter values
		id := src.newV7(now)
		if string(id[:]) <= string(prev[:]) {
			t.Fatalf("id %d not increasing: %s after %s", i, id, prev)
		}
		if id[6]>>4 != 7 || id[8]>>6 != 2 {
			t.Fatalf("id %s is not a version 7, variant 10 UUID", id)
		}
		prev = id
	}
}

func TestParseID(t *testing.T) {
	id := NewV4()
	got, ok := ParseID(id.String())
	if !ok || got != id {
		t.Fatalf("round trip: %v %v", got, ok)
	}
	for _, bad := range []string{"", "xyz", id.String()[:35], id.String() + "0", "0000000000000000000000000000000000000", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"} {
		if _, ok := ParseID(bad); ok {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

func TestCreateOrg(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	t.Run("OK_SameUserOwnsTwoOrgs", func(t *testing.T) {
		a, ua, err := db.CreateOrg(ctx, OrgInput{Name: "A", Email: "Owner@Example.com", Credits: 3})
		if err != nil {
			t.Fatal(err)
		}
		b, ub, err := db.CreateOrg(ctx, OrgInput{Name: "B", Email: "owner@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if ua.ID != ub.ID {
			t.Fatal("same email made two users")
		}
		if a.ID == b.ID || a.Credits != 3 {
			t.Fatalf("orgs %+v %+v", a, b)
		}
		m, err := db.FindMembership(ctx, b.ID, ub.ID)
		if err != nil || m.Role != RoleOwner {
			t.Fatalf("membership %+v %v", m, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []OrgInput{{Name: "", Email: "a@b.co"}, {Name: "x", Email: "nope"}, {Name: "x", Email: "a@b.co", Credits: -1}} {
			if _, _, err := db.CreateOrg(ctx, in); ErrorCode(err) != EINVALID {
				t.Errorf("%+v: got %v, want EINVALID", in, err)
			}
		}
	})
}

func TestAddCredits(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "credits")
	ctx := context.Background()
	if n, err := db.AddCredits(ctx, org.ID, 5); err != nil || n != 5 {
		t.Fatalf("add: %d %v", n, err)
	}
	if _, err := db.AddCredits(ctx, org.ID, -6); ErrorCode(err) != EINVALID {
		t.Fatalf("overdraw: %v", err)
	}
	if _, err := db.AddCredits(ctx, NewV4(), 1); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("unknown org: %v", err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = db.AddCredits(ctx, org.ID, 1) }()
	}
	wg.Wait()
	got, _ := db.FindOrgByID(ctx, org.ID)
	if got.Credits != 25 {
		t.Fatalf("credits after 20 concurrent adds: %d, want 25", got.Credits)
	}
}
