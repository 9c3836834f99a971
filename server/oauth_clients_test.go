package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"interviewd/kv"
)

// Real OAuth clients against the real server: golang.org/x/oauth2 for the REST API,
// and the MCP Go SDK's AuthorizationCodeHandler (with registration, and with a client
// ID metadata document). The person's part (sign in, consent) is the app over HTTP
// here; the TypeScript SDK's test drives it in Chromium.

// consentAt plays the person: it opens an authorization URL the client built (on this
// server), approves everything pre-ticked in org/env, and returns where the server
// sends the browser back, parsed.
func (e *testEnv) consentAt(t *testing.T, u *appClient, authURL string, org kv.ID, env kv.Environment) url.Values {
	t.Helper()
	au, err := url.Parse(authURL)
	if err != nil || !strings.HasPrefix(authURL, e.srv.BaseURL+"/v1/oauth/authorize?") {
		t.Errorf("authorization URL %q is not this server's", authURL)
		return nil
	}
	q := au.Query()
	loc := wantRedirect(t, u.get(t, "/v1/oauth/authorize?"+au.RawQuery), "/app/oauth/authorize?")
	page := wantPage(t, u.get(t, loc), 200, "Connect")
	form := url.Values{"org": {org.String()}, "env": {string(env)}, "decision": {"approve"}}
	for k, v := range q {
		form[k] = v
	}
	for _, sc := range kv.OAuthScopes {
		if strings.Contains(page, `name="grant" value="`+sc+`" checked`) {
			form.Add("grant", sc)
		}
	}
	r := u.post(t, "/app/oauth/authorize", form)
	back, err := url.Parse(r.header.Get("Location"))
	if r.status != 303 || err != nil || !strings.HasPrefix(back.String(), q.Get("redirect_uri")) {
		t.Fatalf("approval: %d to %q:\n%s", r.status, r.header.Get("Location"), r.body)
	}
	return back.Query()
}

func TestOAuthXOAuth2RESTClient(t *testing.T) {
	e := mustServe(t, withListenerBaseURL())
	base := e.srv.BaseURL
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	ctx := context.Background()
	for _, style := range []struct {
		name   string
		method string
		style  oauth2.AuthStyle
	}{
		{"Public", "none", oauth2.AuthStyleInParams},
		{"ConfidentialBasic", "client_secret_basic", oauth2.AuthStyleInHeader},
		{"ConfidentialPost", "client_secret_post", oauth2.AuthStyleInParams},
	} {
		t.Run("OK_"+style.name, func(t *testing.T) {
			reg := e.mustRegister(t, `{"client_name":"x/oauth2","redirect_uris":["`+testRedirect+`"],"token_endpoint_auth_method":"`+style.method+`"}`)
			secret, _ := reg["client_secret"].(string)
			conf := &oauth2.Config{ClientID: reg["client_id"].(string), ClientSecret: secret, RedirectURL: testRedirect,
				Scopes:   []string{"studies:read", "export:read"},
				Endpoint: oauth2.Endpoint{AuthURL: base + "/v1/oauth/authorize", TokenURL: base + "/v1/oauth/token", AuthStyle: style.style}}
			resource := oauth2.SetAuthURLParam("resource", base+"/v1/api")
			verifier := oauth2.GenerateVerifier()
			back := e.consentAt(t, owner, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), resource), e.orgA.ID, kv.EnvLive)
			if back.Get("state") != "st" || back.Get("iss") != base {
				t.Fatalf("back %v", back)
			}
			tok, err := conf.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier), resource)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(tok.AccessToken, "svca_") || tok.RefreshToken == "" || time.Until(tok.Expiry) > 10*time.Minute {
				t.Fatalf("token %+v", tok)
			}
			if tok.Extra("scope") != "export:read studies:read" {
				t.Fatalf("scope %v", tok.Extra("scope"))
			}
			hc := conf.Client(ctx, tok)
			resp, err := hc.Get(base + "/v1/api/studies")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("studies: %v %v", resp, err)
			}
			resp.Body.Close()
			// The refresh grant: an expired token is refreshed by the library.
			tok.Expiry = time.Now().Add(-time.Minute)
			fresh, err := conf.TokenSource(ctx, tok).Token()
			if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
				t.Fatalf("refresh: %+v %v", fresh, err)
			}
			req, _ := http.NewRequest("GET", base+"/v1/api/me", nil)
			fresh.SetAuthHeader(req)
			resp, err = http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("me with the refreshed token: %v %v", resp, err)
			}
			resp.Body.Close()
			// The old refresh token again: the library gets invalid_grant and the
			// connection is over.
			tok.Expiry = time.Now().Add(-time.Minute)
			_, err = conf.TokenSource(ctx, tok).Token()
			var re *oauth2.RetrieveError
			if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
				t.Fatalf("replayed refresh: %v", err)
			}
			req, _ = http.NewRequest("GET", base+"/v1/api/me", nil)
			fresh.SetAuthHeader(req)
			resp, _ = http.DefaultClient.Do(req)
			if resp.StatusCode != 401 {
				t.Fatalf("after replay: %d", resp.StatusCode)
			}
			resp.Body.Close()
		})
	}
}

// goSDKFetcher is the AuthorizationCodeFetcher of the Go SDK tests: the person
// approves in org A's live data.
func (e *testEnv) goSDKFetcher(t *testing.T, u *appClient) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		back := e.consentAt(t, u, args.URL, e.orgA.ID, kv.EnvLive)
		if back == nil {
			return nil, errors.New("authorization URL refused")
		}
		return &auth.AuthorizationResult{Code: back.Get("code"), State: back.Get("state"), Iss: back.Get("iss")}, nil
	}
}

// connectGoSDK connects the MCP Go SDK client through handler and checks it can list
// and call tools as the connection.
func connectGoSDK(t *testing.T, e *testEnv, handler auth.OAuthHandler) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "interviewd-oauth-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		OAuthHandler: handler, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 10 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	_, who := callTool(t, cs, "whoami", map[string]any{})
	if who["credential_type"] != "oauth" || who["org_name"] != "Org A" || who["environment"] != "live" {
		t.Fatalf("whoami %v", who)
	}
	return cs
}

func TestOAuthMCPGoSDKRegistration(t *testing.T) {
	e := mustServe(t, withListenerBaseURL())
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK", RedirectURIs: []string{testRedirect}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RedirectURL:              testRedirect,
		AuthorizationCodeFetcher: e.goSDKFetcher(t, owner),
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	connectGoSDK(t, e, handler)
	page := wantPage(t, owner.get(t, "/app/settings/apps"), 200, "Go SDK")
	if !strings.Contains(page, "MCP server") {
		t.Fatalf("connection not listed as MCP:\n%s", page)
	}
}

func TestOAuthMCPGoSDKClientMetadataDocument(t *testing.T) {
	doc := newMetadataServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id":"` + self + `","client_name":"Go SDK by document","redirect_uris":["` + testRedirect + `"],` +
			`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`))
	})
	roots := doc.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	// Loopback fetching is allowed in this test only: the document is served here.
	e := mustServe(t, withListenerBaseURL(), func(c *Config, _ *kv.Options) {
		c.allowLoopbackMetadata, c.metadataRoots = true, roots
	})
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: doc.URL + "/oauth/client.json"},
		RedirectURL:                    testRedirect,
		AuthorizationCodeFetcher:       e.goSDKFetcher(t, owner),
	})
	if err != nil {
		t.Fatal(err)
	}
	connectGoSDK(t, e, handler)
	wantPage(t, owner.get(t, "/app/settings/apps"), 200, "Go SDK by document")
	if doc.hits.Load() == 0 {
		t.Fatal("the metadata document was never fetched")
	}
}
