package kv

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"
)

const testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-verifier"

func testChallenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// oauthFixture is an organisation, its owner and a registered public client.
type oauthFixture struct {
	db     *DB
	clk    *clock
	org    Org
	owner  User
	client OAuthClient
}

func newOAuthFixture(t *testing.T) *oauthFixture {
	t.Helper()
	clk := newClock(t0)
	db := mustOpenDB(t, clk.now)
	org, owner, err := db.CreateOrg(context.Background(), OrgInput{Name: "acme", Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	c, secret, err := db.RegisterClient(context.Background(), ClientInput{Name: "Tool", RedirectURIs: []string{"http://127.0.0.1:3000/cb"},
		AuthMethod: AuthMethodNone, Scope: "studies:read studies:write offline_access"})
	if err != nil || secret != "" {
		t.Fatalf("register: %+v %q %v", c, secret, err)
	}
	return &oauthFixture{db: db, clk: clk, org: org, owner: owner, client: c}
}

func (f *oauthFixture) approve(t *testing.T, scopes ...string) (Connection, string) {
	t.Helper()
	conn, code, err := f.db.Approve(context.Background(), ApproveInput{UserID: f.owner.ID, OrgID: f.org.ID, Environment: EnvTest,
		Client: f.client, Scopes: scopes, Resource: "/v1/mcp", RedirectURI: "http://127.0.0.1:4000/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	return conn, code
}

func (f *oauthFixture) exchange(code string) (TokenPair, error) {
	return f.db.ExchangeCode(context.Background(), ExchangeInput{Code: code, Client: f.client,
		RedirectURI: "http://127.0.0.1:4000/cb", Verifier: testVerifier})
}

func TestOAuthClientRegistration(t *testing.T) {
	f := newOAuthFixture(t)
	if !strings.HasPrefix(f.client.ID, "svcc_") || strings.Join(f.client.Scopes, " ") != "studies:read studies:write" {
		t.Fatalf("client %+v", f.client)
	}
	got, err := f.db.FindClient(context.Background(), f.client.ID)
	if err != nil || got.Name != "Tool" || len(got.SecretHash) != 0 {
		t.Fatalf("find %+v %v", got, err)
	}
	conf, secret, err := f.db.RegisterClient(context.Background(), ClientInput{RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil || !strings.HasPrefix(secret, "svcs_") || conf.AuthMethod != AuthMethodBasic || conf.Name != "app.example.com" {
		t.Fatalf("confidential %+v %q %v", conf, secret, err)
	}
	wrong := secret[:len(secret)-1] + "x"
	if wrong == secret { // the secret ended in x already
		wrong = secret[:len(secret)-1] + "y"
	}
	if !CheckClientSecret(conf, secret) || CheckClientSecret(conf, wrong) || CheckClientSecret(f.client, secret) {
		t.Fatal("secret check")
	}
	for _, tc := range []struct {
		name, reason string
		in           ClientInput
	}{
		{"NoRedirect", "invalid_redirect_uri", ClientInput{}},
		{"PlainHTTP", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"http://example.com/cb"}}},
		{"Fragment", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"https://example.com/cb#x"}}},
		{"Javascript", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"javascript:alert(1)"}}},
		{"Relative", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"/cb"}}},
		{"EscapedHost", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"https://app%E2%80%AE.example/cb"}}},
		{"EscapedInvalidHost", "invalid_redirect_uri", ClientInput{RedirectURIs: []string{"https://cla%80/cb"}}},
		{"Implicit", "invalid_client_metadata", ClientInput{RedirectURIs: []string{"https://a.example/cb"}, ResponseTypes: []string{"token"}}},
		{"ClientCredentials", "invalid_client_metadata", ClientInput{RedirectURIs: []string{"https://a.example/cb"}, GrantTypes: []string{"client_credentials"}}},
		{"AuthMethod", "invalid_client_metadata", ClientInput{RedirectURIs: []string{"https://a.example/cb"}, AuthMethod: "private_key_jwt"}},
		{"AgentRun", "invalid_client_metadata", ClientInput{RedirectURIs: []string{"https://a.example/cb"}, Scope: "agent:run"}},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			_, _, err := f.db.RegisterClient(context.Background(), tc.in)
			if reason(err) != "EINVALID "+tc.reason {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, ok := range []string{"https://a.example/cb", "http://localhost:1/x", "http://[::1]:9/x", "com.example.app:/oauth", "cursor://anysphere.cursor-retrieval/oauth/callback",
		"https://a.example/c%20b?x=%2F", "com.example.app:/a//b%20c"} {
		if msg := CheckRedirectURI(ok); msg != "" {
			t.Errorf("%s refused: %s", ok, msg)
		}
	}
}

func TestOAuthRedirectMatch(t *testing.T) {
	reg := []string{"http://127.0.0.1:3000/cb", "https://app.example/cb"}
	for uri, want := range map[string]bool{
		"http://127.0.0.1:3000/cb":    true,
		"http://127.0.0.1:51234/cb":   true, // any port on loopback
		"http://127.0.0.1/cb":         true,
		"http://localhost:3000/cb":    false, // another host
		"http://127.0.0.1:3000/other": false,
		"https://app.example/cb":      true,
		"https://app.example:444/cb":  false, // ports matter off loopback
		"https://app.example/cb?x=1":  false,
		"https://app.example/cb/":     false,
	} {
		if got := MatchRedirectURI(reg, uri); got != want {
			t.Errorf("%s: got %v", uri, got)
		}
	}
}

func TestOAuthCodeExchangeAndRotation(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	conn, code := f.approve(t, ScopeStudiesRead, ScopeExportRead)
	if conn.Active {
		t.Fatal("a connection is not active before its code is exchanged")
	}
	if list, _ := f.db.FindConnectionsFor(ctx, f.org.ID, f.owner.ID); len(list) != 0 {
		t.Fatalf("unexchanged approval listed: %+v", list)
	}
	// Wrong verifier, redirect URI or client: refused, and the code stays good.
	for _, in := range []ExchangeInput{
		{Code: code, Client: f.client, RedirectURI: "http://127.0.0.1:4000/cb", Verifier: strings.Repeat("a", 43)},
		{Code: code, Client: f.client, RedirectURI: "http://127.0.0.1:4001/cb", Verifier: testVerifier},
		{Code: code, Client: OAuthClient{ID: "svcc_other"}, RedirectURI: "http://127.0.0.1:4000/cb", Verifier: testVerifier},
	} {
		if _, err := f.db.ExchangeCode(ctx, in); reason(err) != "EUNAUTHORIZED invalid_grant" {
			t.Fatalf("bad exchange %+v: %v", in, err)
		}
	}
	pair, err := f.exchange(code)
	if err != nil || !strings.HasPrefix(pair.Access, "svca_") || !strings.HasPrefix(pair.Refresh, "svcr_") || pair.ExpiresIn != 600 {
		t.Fatalf("exchange %+v %v", pair, err)
	}
	cred, err := f.db.AuthenticateAccess(ctx, pair.Access)
	if err != nil || cred.Connection.Resource != "/v1/mcp" || cred.Org.ID != f.org.ID || strings.Join(cred.Connection.Scopes, " ") != "export:read studies:read" {
		t.Fatalf("authenticate %+v %v", cred, err)
	}
	// Rotation: the new pair works, the old access token lives out its ten minutes.
	next, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client})
	if err != nil || next.Refresh == pair.Refresh {
		t.Fatalf("refresh %+v %v", next, err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, next.Access); err != nil {
		t.Fatal(err)
	}
	f.clk.add(AccessTokenTTL)
	if _, err := f.db.AuthenticateAccess(ctx, next.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("access token after ten minutes: %v", err)
	}
	// Another client cannot spend the refresh token.
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: next.Refresh, Client: OAuthClient{ID: "svcc_other"}}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatal(err)
	}
	third, err := f.db.Refresh(ctx, RefreshInput{Token: next.Refresh, Client: f.client})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.db.FindConnectionsFor(ctx, f.org.ID, f.owner.ID)
	if err != nil || len(list) != 1 || list[0].ID != conn.ID || list[0].LastUsedAt == nil {
		t.Fatalf("list %+v %v", list, err)
	}
	// Reusing the spent refresh token ends the connection: every token dies.
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: next.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatalf("reuse: %v", err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, third.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("access after reuse: %v", err)
	}
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: third.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatalf("refresh after reuse: %v", err)
	}
	got, _ := f.db.FindConnection(ctx, f.org.ID, conn.ID)
	if got.RevokedAt == nil || got.RevokedWhy != "refresh_reuse" {
		t.Fatalf("connection %+v", got)
	}
}

func TestOAuthCodeRules(t *testing.T) {
	ctx := context.Background()
	t.Run("ErrExpiredAfterFiveMinutes", func(t *testing.T) {
		f := newOAuthFixture(t)
		_, code := f.approve(t, ScopeStudiesRead)
		f.clk.add(CodeTTL)
		if _, err := f.exchange(code); reason(err) != "EUNAUTHORIZED invalid_grant" {
			t.Fatal(err)
		}
	})
	t.Run("ErrReuseEndsConnection", func(t *testing.T) {
		f := newOAuthFixture(t)
		conn, code := f.approve(t, ScopeStudiesRead)
		pair, err := f.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.exchange(code); reason(err) != "EUNAUTHORIZED invalid_grant" {
			t.Fatal(err)
		}
		if _, err := f.db.AuthenticateAccess(ctx, pair.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
			t.Fatalf("token of a replayed code: %v", err)
		}
		got, _ := f.db.FindConnection(ctx, f.org.ID, conn.ID)
		if got.RevokedWhy != "code_reuse" {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("OK_ThirtyDaysEndEverything", func(t *testing.T) {
		f := newOAuthFixture(t)
		_, code := f.approve(t, ScopeStudiesRead)
		pair, err := f.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		// Refreshed every nine minutes, the last access token still stops at day 30.
		f.clk.add(ConnectionTTL - 5*time.Minute)
		last, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client})
		if err != nil || last.ExpiresIn != 300 {
			t.Fatalf("refresh near the end: %+v %v", last, err)
		}
		f.clk.add(5 * time.Minute)
		if _, err := f.db.AuthenticateAccess(ctx, last.Access); err == nil {
			t.Fatal("access token outlived its connection")
		}
		if _, err := f.db.Refresh(ctx, RefreshInput{Token: last.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
			t.Fatalf("refresh after 30 days: %v", err)
		}
	})
	t.Run("ErrRoleAndTwoStep", func(t *testing.T) {
		f := newOAuthFixture(t)
		member, err := f.db.AddMember(ctx, f.org.ID, "m@example.com", RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		in := ApproveInput{UserID: member.ID, OrgID: f.org.ID, Environment: EnvLive, Client: f.client,
			Scopes: []string{ScopeExportRead}, Resource: "/v1/api", Challenge: "x"}
		if _, _, err := f.db.Approve(ctx, in); reason(err) != "EFORBIDDEN role_forbids_scope" {
			t.Fatal(err)
		}
		in.Scopes = []string{ScopeAgentRun}
		if _, _, err := f.db.Approve(ctx, in); ErrorCode(err) != EINVALID {
			t.Fatal(err)
		}
		if _, err := f.db.SetRequireMFA(ctx, RequireMFAInput{OrgID: f.org.ID, Actor: f.owner.ID, On: true}); err != nil {
			t.Fatal(err)
		}
		in.Scopes = []string{ScopeStudiesRead}
		if _, _, err := f.db.Approve(ctx, in); reason(err) != "EFORBIDDEN two_step_required" {
			t.Fatal(err)
		}
		in.TwoStepPassed = true
		if _, _, err := f.db.Approve(ctx, in); err != nil {
			t.Fatal(err)
		}
		stranger := ApproveInput{UserID: NewV4(), OrgID: f.org.ID, Environment: EnvLive, Client: f.client, Scopes: []string{ScopeStudiesRead}}
		if _, _, err := f.db.Approve(ctx, stranger); ErrorCode(err) != ENOTFOUND {
			t.Fatal(err)
		}
	})
}

func TestOAuthRevokeAndEnd(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	_, code := f.approve(t, ScopeStudiesRead)
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	// Unknown tokens and other clients' tokens change nothing.
	for _, tok := range []string{"", "svca_nonsense", pair.Refresh + "x"} {
		if err := f.db.RevokeToken(ctx, tok, f.client.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.db.RevokeToken(ctx, pair.Access, "svcc_other"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, pair.Access); err != nil {
		t.Fatalf("another client's revocation counted: %v", err)
	}
	// The access token ends the whole connection, refresh token included.
	if err := f.db.RevokeToken(ctx, pair.Access, f.client.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatal(err)
	}

	// The app: a member sees and ends only their own; an admin any.
	member, _ := f.db.AddMember(ctx, f.org.ID, "m@example.com", RoleMember)
	mine, code2, err := f.db.Approve(ctx, ApproveInput{UserID: member.ID, OrgID: f.org.ID, Environment: EnvTest, Client: f.client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/api", RedirectURI: "http://127.0.0.1:4000/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := f.exchange(code2)
	if err != nil {
		t.Fatal(err)
	}
	_, code3 := f.approve(t, ScopeStudiesRead)
	ownerConn, err := f.exchange(code3)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := f.db.FindConnectionsFor(ctx, f.org.ID, member.ID); len(list) != 1 || list[0].ID != mine.ID {
		t.Fatalf("member sees %+v", list)
	}
	if list, _ := f.db.FindConnectionsFor(ctx, f.org.ID, f.owner.ID); len(list) != 2 || list[0].ID != ownerConn.Connection.ID {
		t.Fatalf("owner sees %+v (newest first)", list)
	}
	if err := f.db.EndConnection(ctx, EndConnectionInput{OrgID: f.org.ID, Actor: member.ID, ConnectionID: ownerConn.Connection.ID}); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("member ended the owner's connection: %v", err)
	}
	if err := f.db.EndConnection(ctx, EndConnectionInput{OrgID: f.org.ID, Actor: f.owner.ID, ConnectionID: mine.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, p2.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatal(err)
	}
	// A member who leaves takes their connections with them.
	_, code4, err := f.db.Approve(ctx, ApproveInput{UserID: member.ID, OrgID: f.org.ID, Environment: EnvTest, Client: f.client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/api", RedirectURI: "http://127.0.0.1:4000/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatal(err)
	}
	p4, err := f.exchange(code4)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.RemoveMember(ctx, RemoveMemberInput{OrgID: f.org.ID, Actor: f.owner.ID, UserID: member.ID}); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.db.FindConnectionsFor(ctx, f.org.ID, f.owner.ID); len(list) != 1 || list[0].UserID != f.owner.ID {
		t.Fatalf("a departed member's connection is listed: %+v", list)
	}
	if _, err := f.db.AuthenticateAccess(ctx, p4.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("a departed member's token: %v", err)
	}
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: p4.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatalf("a departed member's refresh: %v", err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, ownerConn.Access); err != nil {
		t.Fatalf("the owner's connection ended with the member's: %v", err)
	}
}

// TestOAuthRefreshRace: of concurrent refreshes with one token, at most one wins and
// the connection ends (the loser presented a spent token).
func TestOAuthRefreshRace(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	_, code := f.approve(t, ScopeStudiesRead)
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client}); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d refreshes won", wins)
	}
	if list, _ := f.db.FindConnectionsFor(ctx, f.org.ID, f.owner.ID); len(list) != 0 {
		t.Fatalf("connection survived a replayed refresh: %+v", list)
	}
}

func TestOAuthSweep(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	_, abandoned := f.approve(t, ScopeStudiesRead) // never exchanged
	_ = abandoned
	_, code := f.approve(t, ScopeStudiesRead)
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	next, err := f.db.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: f.client})
	if err != nil {
		t.Fatal(err)
	}
	f.clk.add(AccessTokenTTL)
	swept, err := f.db.SweepOAuth(ctx)
	// Gone: two expired access tokens, and the abandoned approval with its code. Kept:
	// the spent code and refresh token (their replay must still end the connection)
	// and the live refresh token.
	if err != nil || swept != (OAuthSwept{Tokens: 2, Connections: 1}) {
		t.Fatalf("swept %+v %v", swept, err)
	}
	if _, err := f.exchange(code); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatal(err)
	}
	if _, err := f.db.Refresh(ctx, RefreshInput{Token: next.Refresh, Client: f.client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatalf("the replay after a sweep did not end the connection: %v", err)
	}
	swept, err = f.db.SweepOAuth(ctx)
	if err != nil || swept.Connections != 1 {
		t.Fatalf("ended connection not swept: %+v %v", swept, err)
	}
	if err := f.db.view(ctx, func(tx Tx) error {
		for _, b := range [][]byte{bucketOAuthConnections, bucketOAuthTokens, bucketOAuthConnTokens} {
			if k, _ := tx.Bucket(b).Cursor().First(); k != nil {
				t.Errorf("%s not empty after the sweep", b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOAuthAccessCache: a token resolved once is answered from memory, and every change
// that ends or narrows it is seen by the very next request: the connection ended in
// the app, the approver's role lowered, the approver removed.
func TestOAuthAccessCache(t *testing.T) {
	ctx := context.Background()
	f := newOAuthFixture(t)
	admin, err := f.db.AddMember(ctx, f.org.ID, "admin@example.com", RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(user ID) (Connection, TokenPair) {
		t.Helper()
		conn, code, err := f.db.Approve(ctx, ApproveInput{UserID: user, OrgID: f.org.ID, Environment: EnvLive, Client: f.client,
			Scopes: []string{ScopeStudiesRead, ScopeExportRead}, Resource: "/v1/api", RedirectURI: "http://127.0.0.1:4000/cb", Challenge: testChallenge(testVerifier)})
		if err != nil {
			t.Fatal(err)
		}
		pair, err := f.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		return conn, pair
	}
	resolve := func(tok string) (OAuthCredential, error) {
		t.Helper()
		for range 3 { // the first fills the cache, the rest are hits
			if _, err := f.db.AuthenticateAccess(ctx, tok); err != nil {
				return OAuthCredential{}, err
			}
		}
		return f.db.AuthenticateAccess(ctx, tok)
	}
	ownerConn, ownerPair := connect(f.owner.ID)
	_, adminPair := connect(admin.ID)
	if _, err := resolve(ownerPair.Access); err != nil {
		t.Fatal(err)
	}
	if c, err := resolve(adminPair.Access); err != nil || len(c.Connection.Scopes) != 2 {
		t.Fatalf("admin's token %+v %v", c, err)
	}
	if !testPostgres && f.db.cache.accessTokens.generation() == 0 && len(f.db.cache.accessTokens.m) != 2 {
		t.Fatalf("%d tokens cached", len(f.db.cache.accessTokens.m))
	}
	// Lowered to member: export:read is gone from the next request on.
	if _, err := f.db.UpdateMemberRole(ctx, MemberRoleInput{OrgID: f.org.ID, Actor: f.owner.ID, UserID: admin.ID, Role: RoleMember}); err != nil {
		t.Fatal(err)
	}
	if c, err := f.db.AuthenticateAccess(ctx, adminPair.Access); err != nil || strings.Join(c.Connection.Scopes, " ") != ScopeStudiesRead {
		t.Fatalf("after the role change: %+v %v", c.Connection.Scopes, err)
	}
	// Removed: the token stops at once.
	if err := f.db.RemoveMember(ctx, RemoveMemberInput{OrgID: f.org.ID, Actor: f.owner.ID, UserID: admin.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, adminPair.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("after removal: %v", err)
	}
	// Ended in the app: the cached token stops at once.
	if _, err := resolve(ownerPair.Access); err != nil {
		t.Fatal(err)
	}
	if err := f.db.EndConnection(ctx, EndConnectionInput{OrgID: f.org.ID, Actor: f.owner.ID, ConnectionID: ownerConn.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AuthenticateAccess(ctx, ownerPair.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("after the end: %v", err)
	}
	// Time: a cached token still expires after ten minutes.
	_, pair := connect(f.owner.ID)
	if _, err := resolve(pair.Access); err != nil {
		t.Fatal(err)
	}
	f.clk.add(AccessTokenTTL)
	if _, err := f.db.AuthenticateAccess(ctx, pair.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("after ten minutes: %v", err)
	}
}

// TestOAuthAcrossNodes: on a shared store, a token one node has cached stops there the
// moment another node ends its connection, and a refresh token replayed on another
// node ends the connection for all.
func TestOAuthAcrossNodes(t *testing.T) {
	nodes := openNodes(t, 2)
	ctx := context.Background()
	a, b := nodes[0], nodes[1]
	org, owner, err := a.CreateOrg(ctx, OrgInput{Name: "acme", Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	client := OAuthClient{ID: "svcc_nodes", Name: "nodes"}
	_, code, err := a.Approve(ctx, ApproveInput{UserID: owner.ID, OrgID: org.ID, Environment: EnvLive, Client: client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/mcp", RedirectURI: "http://127.0.0.1/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := b.ExchangeCode(ctx, ExchangeInput{Code: code, Client: client, RedirectURI: "http://127.0.0.1/cb", Verifier: testVerifier})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := a.AuthenticateAccess(ctx, pair.Access); err != nil {
			t.Fatal(err)
		}
	}
	next, err := b.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AuthenticateAccess(ctx, next.Access); err != nil {
		t.Fatal(err)
	}
	// The spent refresh token, replayed on node A, ends the connection on B too.
	if _, err := a.Refresh(ctx, RefreshInput{Token: pair.Refresh, Client: client}); reason(err) != "EUNAUTHORIZED invalid_grant" {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := n.AuthenticateAccess(ctx, next.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
			t.Fatalf("a token of the ended connection: %v", err)
		}
	}
	// A fresh connection, cached on A, ended in the app on B.
	_, code, err = b.Approve(ctx, ApproveInput{UserID: owner.ID, OrgID: org.ID, Environment: EnvLive, Client: client,
		Scopes: []string{ScopeStudiesRead}, Resource: "/v1/mcp", RedirectURI: "http://127.0.0.1/cb", Challenge: testChallenge(testVerifier)})
	if err != nil {
		t.Fatal(err)
	}
	pair, err = a.ExchangeCode(ctx, ExchangeInput{Code: code, Client: client, RedirectURI: "http://127.0.0.1/cb", Verifier: testVerifier})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := a.AuthenticateAccess(ctx, pair.Access)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AuthenticateAccess(ctx, pair.Access); err != nil {
		t.Fatal(err)
	}
	if err := b.EndConnection(ctx, EndConnectionInput{OrgID: org.ID, Actor: owner.ID, ConnectionID: cred.Connection.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AuthenticateAccess(ctx, pair.Access); reason(err) != "EUNAUTHORIZED invalid_token" {
		t.Fatalf("node A still answers from its cache after node B ended the connection: %v", err)
	}
}

// A record the store cannot read is the store's trouble, not a bad token: the error
// comes back as it is (a 5xx the client retries), never as invalid_token, which sends
// the client's person through consent again.
func TestOAuthAccessUnreadableRecordIsNotInvalidToken(t *testing.T) {
	f := newOAuthFixture(t)
	_, code := f.approve(t, ScopeStudiesRead)
	pair, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte(pair.Access))
	f.db.cache.accessTokens.drop(hash) // read it from the store
	if err := f.db.update(context.Background(), func(tx Tx) error {
		return tx.Bucket(bucketOAuthTokens).Put(hash[:], []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	_, err = f.db.AuthenticateAccess(context.Background(), pair.Access)
	if err == nil || ErrorCode(err) == EUNAUTHORIZED {
		t.Fatalf("an unreadable token record answered %v; want the store's error, not invalid_token", err)
	}
}
