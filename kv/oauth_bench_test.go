package kv

import (
	"context"
	"testing"
)

// BenchmarkAuthenticateAccess is the per-request cost of an OAuth access token on REST
// or MCP (no touch: within ConnectionTouchAt), beside BenchmarkAuthenticateSession's
// cookie and the cached API key.
func BenchmarkAuthenticateAccess(b *testing.B) {
	ctx := context.Background()
	clk := newClock(t0)
	db := mustOpenDB(b, clk.now)
	org, owner, err := db.CreateOrg(ctx, OrgInput{Name: "acme", Email: "owner@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	client := OAuthClient{ID: "svcc_bench", Name: "bench"}
	_, code, err := db.Approve(ctx, ApproveInput{UserID: owner.ID, OrgID: org.ID, Environment: EnvLive, Client: client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/mcp", RedirectURI: "http://127.0.0.1/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		b.Fatal(err)
	}
	pair, err := db.ExchangeCode(ctx, ExchangeInput{Code: code, Client: client, RedirectURI: "http://127.0.0.1/cb", Verifier: testVerifier})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.AuthenticateAccess(ctx, pair.Access); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
