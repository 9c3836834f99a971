package server

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestPrincipalFollowsItsCredential: a key's principal is made once and reused while
// its credential is unchanged; a change to the organisation (here its credits) gives a
// fresh principal from the fresh record, and a revoked key gets none.
func TestPrincipalFollowsItsCredential(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	s := New(Config{DB: db, Log: zerolog.Nop(), BaseURL: testBaseURL})
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Memo", Email: "memo@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "memo", Environment: kv.EnvLive, Scopes: []string{kv.ScopeStudiesRead}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.ResolveTokenIn(ctx, secret, pipeline.ResourceAPI)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.ResolveTokenIn(ctx, secret, pipeline.ResourceAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Shared() && again != first {
		t.Error("an unchanged credential's principal was made again")
	}
	if first.OrgName != "Memo" || first.KeyName != "memo" || first.OrgKey != org.ID.String() || first.RateKey != key.ID.String() {
		t.Fatalf("principal %+v", first)
	}
	if _, err := db.AddCredits(ctx, org.ID, 5); err != nil {
		t.Fatal(err)
	}
	after, err := s.ResolveTokenIn(ctx, secret, pipeline.ResourceAPI)
	if err != nil {
		t.Fatal(err)
	}
	if after == first {
		t.Error("the principal outlived a change to its organisation")
	}
	if _, err := db.RevokeKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := s.ResolveTokenIn(ctx, secret, pipeline.ResourceAPI); err == nil {
		t.Fatalf("a revoked key still resolves to %+v", p)
	}
}
