package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// BenchmarkMCPGetStudyOAuth is BenchmarkMCPGetStudy's legacy-era call with an OAuth
// access token instead of the API key: the difference is what resolving the token
// costs per request.
func BenchmarkMCPGetStudyOAuth(b *testing.B) {
	e := mustBenchServe(b)
	ctx := context.Background()
	owner, err := e.db.FindUserByEmail(ctx, "bench@example.com")
	if err != nil {
		b.Fatal(err)
	}
	st, err := e.db.FindMembership(ctx, e.study.OrgID, owner.ID)
	if err != nil || st.Role != kv.RoleOwner {
		b.Fatalf("owner: %+v %v", st, err)
	}
	const verifier = "bench-verifier-0123456789-0123456789-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	client := kv.OAuthClient{ID: "svcc_bench", Name: "bench"}
	_, code, err := e.db.Approve(ctx, kv.ApproveInput{UserID: owner.ID, OrgID: e.study.OrgID, Environment: kv.EnvLive,
		Client: client, Scopes: []string{kv.ScopeStudiesRead}, Resource: pipeline.ResourceMCP, RedirectURI: testRedirect,
		Challenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		b.Fatal(err)
	}
	pair, err := e.db.ExchangeCode(ctx, kv.ExchangeInput{Code: code, Client: client, RedirectURI: testRedirect, Verifier: verifier})
	if err != nil {
		b.Fatal(err)
	}
	e.secret = pair.Access
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_study","arguments":{"study_id":"` + e.study.ID.String() + `"}}}`)
	headers := []string{"Content-Type", "application/json", "Accept", acceptBoth, "Mcp-Protocol-Version", eraLegacy}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.roundTrip(b, "POST", "/v1/mcp", body, headers...)
		}
	})
}
