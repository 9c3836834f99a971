package oauth

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
)

var fuzzNow = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// FuzzDecodeRegistration: any body either decodes or is refused as
// invalid_client_metadata (invalid_redirect_uri for a redirect URI's text), never a
// panic; what decodes and kv accepts has only redirect URIs that pass the rules and
// match themselves, and a name and addresses that pass the text rule.
func FuzzDecodeRegistration(f *testing.F) {
	f.Add([]byte(`{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`))
	f.Add([]byte(`{"redirect_uris":["http://127.0.0.1:3000/cb","com.example.app:/cb"],"grant_types":["authorization_code","refresh_token"],"scope":"studies:read offline_access","logo_uri":3}`))
	f.Add([]byte(`{"redirect_uris":"x"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"redirect_uris":[null],"client_name":null}`))
	f.Add([]byte("{\"client_name\":\"\xff\"}"))
	f.Add([]byte(`{"client_name":"a\u202eb","client_uri":"https://x.example/\u0000","redirect_uris":["https://x.example/\ud800"]}`))
	f.Add([]byte(`{"redirect_uris":["https://cla%80/cb","https://app%E2%80%AE.example/cb"]}`)) // a host's escapes decode to any byte
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeRegistration(body)
		if err != nil {
			if oe := toOAuthError(err); oe.Status != 400 || (oe.Code != "invalid_client_metadata" && oe.Code != "invalid_redirect_uri") {
				t.Fatalf("refusal %+v", oe)
			}
			return
		}
		c, err := kv.NewClient("svcc_fuzz", in, fuzzNow)
		if err != nil {
			if oe := toOAuthError(err); oe.Status != 400 || (oe.Code != "invalid_client_metadata" && oe.Code != "invalid_redirect_uri") {
				t.Fatalf("kv refusal %+v from %v", oe, err)
			}
			return
		}
		if len(c.RedirectURIs) == 0 || len(c.Scopes) == 0 || c.Name == "" {
			t.Fatalf("accepted client %+v", c)
		}
		for _, u := range c.RedirectURIs {
			if kv.CheckRedirectURI(u) != "" || !kv.MatchRedirectURI(c.RedirectURIs, u) {
				t.Fatalf("accepted redirect URI %q", u)
			}
		}
		for _, sc := range c.Scopes {
			if sc == kv.ScopeAgentRun {
				t.Fatal("agent:run registered")
			}
		}
		// What a person is shown follows the text rule.
		for _, text := range append([]string{c.Name, c.URI}, c.RedirectURIs...) {
			if fe := pipeline.CheckLabel(text, nil); fe != nil {
				t.Fatalf("accepted %q: %s", text, fe.Msg)
			}
		}
	})
}

// FuzzDecodeAuthorize: any query decodes or is refused, never a panic; a decoded
// request without repeats survives the trip through the consent forms unchanged.
func FuzzDecodeAuthorize(f *testing.F) {
	f.Add("response_type=code&client_id=svcc_x&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&code_challenge=abc&code_challenge_method=S256&state=s&resource=http%3A%2F%2Fx%2Fv1%2Fmcp")
	f.Add("client_id=a&client_id=b")
	f.Add("scope=studies:read+agent:run&state=%zz")
	f.Add(";;&&==")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := authz.DecodeAuthorize(raw)
		if err != nil {
			return
		}
		if q.Dup != "" {
			return
		}
		again, err := authz.DecodeAuthorize(q.Encode())
		if err != nil || again != q {
			t.Fatalf("round trip: %+v → %q → %+v (%v)", q, q.Encode(), again, err)
		}
		_ = authz.ValidChallenge(q.Challenge)
		_ = kv.GrantableScopes(q.Scope)
	})
}

// FuzzDecodeTokenForm: any body and Authorization header decode or are refused in RFC
// 6749's vocabulary (400 invalid_request, 401 invalid_client), never a panic.
func FuzzDecodeTokenForm(f *testing.F) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("svcc_a:svcs_b"))
	f.Add("application/x-www-form-urlencoded", "grant_type=authorization_code&code=svco_x&redirect_uri=x&code_verifier=y&client_id=svcc_a", "")
	f.Add("application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=svcr_x", basic)
	f.Add("application/x-www-form-urlencoded; charset=utf-8", "grant_type=a&grant_type=b", "")
	f.Add("application/json", `{"grant_type":"x"}`, "")
	f.Add("application/x-www-form-urlencoded", "client_id=other", basic)
	f.Add("application/x-www-form-urlencoded", "", "Basic !!!")
	f.Add("application/x-www-form-urlencoded", "", "Basic "+base64.StdEncoding.EncodeToString([]byte("%zz:x")))
	f.Fuzz(func(t *testing.T, contentType, body, authorization string) {
		form, err := decodeTokenForm([]byte(contentType), []byte(body), []byte(authorization))
		if err != nil {
			oe := toOAuthError(err)
			if !(oe.Status == 400 && oe.Code == "invalid_request") && !(oe.Status == 401 && oe.Code == "invalid_client") {
				t.Fatalf("refusal %+v", oe)
			}
			if !utf8.ValidString(oe.Description) {
				t.Fatalf("description is not UTF-8: %q", oe.Description)
			}
			return
		}
		if form.basic && (authorization == "" || !strings.EqualFold(authorization[:6], "basic ")) {
			t.Fatalf("basic credentials from %q", authorization)
		}
	})
}
