package kv

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestKeySecretFormat(t *testing.T) {
	for _, env := range []Environment{EnvLive, EnvTest} {
		s := newKeySecret(env)
		if !strings.HasPrefix(s, "jsk_"+string(env)+"_") || len(s) != keySecretLen {
			t.Fatalf("secret %q", s)
		}
		got, ok := ParseKeySecret(s)
		if !ok || got != env {
			t.Fatalf("parse %q: %v %v", s, got, ok)
		}
		if checksum(s[:len(s)-6]) != s[len(s)-6:] {
			t.Fatal("checksumFast and checksum disagree")
		}
		// Any single changed character breaks the checksum or the shape.
		for i := len("jsk_live_"); i < len(s); i++ {
			b := []byte(s)
			if b[i] == 'a' {
				b[i] = 'b'
			} else {
				b[i] = 'a'
			}
			if _, ok := ParseKeySecret(string(b)); ok {
				t.Fatalf("altered character %d accepted", i)
			}
		}
	}
	for _, bad := range []string{"", "jsk_live_", "jsk_prod_" + strings.Repeat("a", 49), "svca_x", strings.Repeat("a", keySecretLen)} {
		if _, ok := ParseKeySecret(bad); ok {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseKeySecret(f *testing.F) {
	f.Add(newKeySecret(EnvLive))
	f.Add(newKeySecret(EnvTest))
	f.Add("jsk_live_")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		env, ok := ParseKeySecret(s)
		if !ok {
			return
		}
		if !env.Valid() || len(s) != keySecretLen || !strings.HasPrefix(s, keyPrefix(env)) {
			t.Fatalf("accepted malformed %q", s)
		}
		if checksum(s[:len(s)-keyChecksumLen]) != s[len(s)-keyChecksumLen:] {
			t.Fatalf("accepted %q with a wrong checksum", s)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db := mustOpenDB(t, clock)
	org := mustOrg(t, db, "auth")
	ctx := context.Background()
	k, secret, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "ci", Environment: EnvLive, Scopes: []string{"studies:read", "links:read", "studies:read"}, ExpiresDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(k.Scopes, ",") != "links:read,studies:read" {
		t.Fatalf("scopes not sorted and deduplicated: %v", k.Scopes)
	}
	if strings.Contains(string(k.Hash), secret) || !strings.HasSuffix(k.Hint, secret[len(secret)-4:]) {
		t.Fatal("hash or hint wrong")
	}
	t.Run("OK", func(t *testing.T) {
		cred, err := db.Authenticate(ctx, secret)
		if err != nil || cred.Key.ID != k.ID || cred.Org.Name != "auth" {
			t.Fatalf("%+v %v", cred, err)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		if _, err := db.Authenticate(ctx, newKeySecret(EnvLive)); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatal(err)
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		now = now.AddDate(0, 0, 30)
		defer func() { now = now.AddDate(0, 0, -30) }()
		if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("expired key: %v", err)
		}
	})
	t.Run("ErrRevoked", func(t *testing.T) {
		if _, err := db.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("revoked key: %v", err)
		}
		keys, _ := db.FindKeys(ctx, org.ID)
		if len(keys) != 1 || keys[0].RevokedAt == nil {
			t.Fatalf("keys after revoke: %+v", keys)
		}
	})
}

func TestCreateKeyInvalid(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "inv")
	ctx := context.Background()
	cases := map[string]KeyInput{
		"ErrNoName":     {OrgID: org.ID, Environment: EnvLive, Scopes: []string{"studies:read"}},
		"ErrBadEnv":     {OrgID: org.ID, Name: "x", Environment: "prod", Scopes: []string{"studies:read"}},
		"ErrNoScopes":   {OrgID: org.ID, Name: "x", Environment: EnvLive},
		"ErrBadScope":   {OrgID: org.ID, Name: "x", Environment: EnvLive, Scopes: []string{"admin"}},
		"ErrBadExpiry":  {OrgID: org.ID, Name: "x", Environment: EnvLive, Scopes: []string{"studies:read"}, ExpiresDays: 31},
		"ErrUnknownOrg": {OrgID: NewV4(), Name: "x", Environment: EnvLive, Scopes: []string{"studies:read"}},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := db.CreateKey(ctx, in)
			want := EINVALID
			if name == "ErrUnknownOrg" {
				want = ENOTFOUND
			}
			if ErrorCode(err) != want {
				t.Fatalf("got %v, want %s", err, want)
			}
		})
	}
	for _, days := range []int{0, 30, 90, 180, 365} {
		k, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "x", Environment: EnvTest, Scopes: []string{"studies:read"}, ExpiresDays: days})
		if err != nil || (days == 0) != (k.ExpiresAt == nil) {
			t.Fatalf("expiry %d: %+v %v", days, k.ExpiresAt, err)
		}
	}
}

func TestCreateKeyRole(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "roles")
	ctx := context.Background()
	member, err := db.AddMember(ctx, org.ID, "member@example.com", RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.AddMember(ctx, org.ID, "admin@example.com", RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{ScopeStudiesGoLive, ScopeExportRead} {
		if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "m", Environment: EnvLive, Scopes: []string{scope}}); ErrorCode(err) != EFORBIDDEN {
			t.Errorf("member with %s: got %v, want EFORBIDDEN", scope, err)
		}
		if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: admin.ID, Name: "a", Environment: EnvLive, Scopes: []string{scope}}); err != nil {
			t.Errorf("admin with %s: %v", scope, err)
		}
	}
	if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: member.ID, Name: "m", Environment: EnvLive, Scopes: []string{ScopeStudiesRead, ScopeLinksWrite}}); err != nil {
		t.Errorf("member with read scopes: %v", err)
	}
	if _, _, err := db.CreateKey(ctx, KeyInput{OrgID: org.ID, UserID: NewV4(), Name: "x", Environment: EnvLive, Scopes: []string{ScopeStudiesRead}}); ErrorCode(err) != ENOTFOUND {
		t.Errorf("non-member: %v", err)
	}
}
