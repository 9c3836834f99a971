package kv

import (
	"context"
	"strings"
	"testing"
)

// OAuthTokenLive tells a working access or refresh token from one that is no credential:
// unknown, malformed, rotated away, expired, or of an ended connection.
func TestOAuthTokenLive(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	_, code := f.approve(t, ScopeStudiesRead)
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	live := func(tok string) bool {
		t.Helper()
		ok, err := f.db.OAuthTokenLive(ctx, tok)
		if err != nil {
			t.Fatalf("%.9s: %v", tok, err)
		}
		return ok
	}
	for _, tok := range []string{pair.Access, pair.Refresh} {
		if !live(tok) {
			t.Fatalf("%.5s token of a live connection is not live", tok)
		}
	}
	for _, tok := range []string{"svca_" + strings.Repeat("x", 40), "svcr_nothing", "jsk_live_x", "", pair.Access + "x", "svcr_" + pair.Access[5:]} {
		if live(tok) {
			t.Fatalf("%q is live", tok)
		}
	}
	next, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client})
	if err != nil {
		t.Fatal(err)
	}
	if live(pair.Refresh) || !live(next.Refresh) || !live(next.Access) {
		t.Fatal("after rotation: the spent refresh token is live, or the new pair is not")
	}
	f.clk.add(AccessTokenTTL)
	if live(next.Access) || !live(next.Refresh) {
		t.Fatal("after the access token's lifetime: it is live, or the refresh token is not")
	}
	if err := f.db.RevokeToken(ctx, next.Refresh, f.client.ID); err != nil {
		t.Fatal(err)
	}
	if live(next.Refresh) {
		t.Fatal("the refresh token of a revoked connection is live")
	}
}
