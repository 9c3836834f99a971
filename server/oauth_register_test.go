package server

import (
	"net/http"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/pipeline"
)

// TestOAuthRegisterText: client registration applies the text rule of every other
// input to the metadata a person is shown (client_name, and the URIs a page may show):
// invalid UTF-8 (raw, or a lone surrogate escape) is refused rather than stored as
// U+FFFD, and NUL, control characters and bidirectional formatting characters, which
// could make a name on the consent page read as something it is not, are refused with
// RFC 7591's invalid_client_metadata and a description naming the member and the rule.
// Right-to-left scripts, emoji sequences and directional marks are text, and pass.
func TestOAuthRegisterText(t *testing.T) {
	e := mustServe(t)
	const redirect = `"redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"none"`
	for _, tc := range []struct {
		name, body, code string
		want             []string // in error_description
	}{
		{"ErrNameInvalidUTF8", `{"client_name":"Research ` + "\xff" + ` tool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "UTF-8"}},
		{"ErrNameLoneSurrogate", `{"client_name":"Research \ud800 tool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "UTF-8"}},
		{"ErrNameNUL", `{"client_name":"Research\u0000tool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "NUL"}},
		{"ErrNameRLOEscaped", `{"client_name":"Research \u202Eloot",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "bidirectional", "U+202E"}},
		{"ErrNameRLORaw", `{"client_name":"Research ` + "\u202e" + `loot",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "bidirectional"}},
		{"ErrNameIsolate", `{"client_name":"Research \u2067tool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "bidirectional"}},
		{"ErrNameControl", `{"client_name":"Research\ntool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "control"}},
		{"ErrNameLineSeparator", `{"client_name":"Research\u2028tool",` + redirect + `}`, "invalid_client_metadata", []string{"client_name", "control"}},
		{"ErrClientURIBidi", `{"client_uri":"https://example.com/\u202Emoc",` + redirect + `}`, "invalid_client_metadata", []string{"client_uri", "bidirectional"}},
		{"ErrLogoURINUL", `{"logo_uri":"https://example.com/l\u0000.png",` + redirect + `}`, "invalid_client_metadata", []string{"logo_uri", "NUL"}},
		{"ErrPolicyURIBidi", `{"policy_uri":"https://example.com/\u202Dp",` + redirect + `}`, "invalid_client_metadata", []string{"policy_uri", "bidirectional"}},
		{"ErrTosURIInvalidUTF8", `{"tos_uri":"https://example.com/` + "\xfe" + `",` + redirect + `}`, "invalid_client_metadata", []string{"tos_uri", "UTF-8"}},
		{"ErrRedirectURIBidi", `{"redirect_uris":["https://app.example.com/\u202Ecb"]}`, "invalid_redirect_uri", []string{"redirect_uris", "bidirectional"}},
		{"ErrOtherMemberInvalidUTF8", `{"contacts":["a` + "\xff" + `@example.com"],` + redirect + `}`, "invalid_client_metadata", []string{"UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/v1/oauth/register", "", tc.body)
			var out map[string]any
			r.json(t, &out)
			desc, _ := out["error_description"].(string)
			if r.status != 400 || out["error"] != tc.code {
				t.Fatalf("%d %s, want 400 %s", r.status, r.body, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(desc, w) {
					t.Fatalf("error_description %q does not say %q", desc, w)
				}
			}
		})
	}
	for _, tc := range []struct{ name, clientName string }{
		{"OK_RightToLeftScript", "עוזר מחקר"},
		{"OK_EmojiSequence", "👩‍🔬 Lab helper"},
		{"OK_DirectionalMark", "مساعد\u200f 2"},
		{"OK_ReplacementCharacterSent", "Tool \ufffd"}, // sent as U+FFFD, not made one
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := e.mustRegister(t, `{"client_name":"`+tc.clientName+`",`+redirect+`}`)
			if out["client_name"] != tc.clientName {
				t.Fatalf("client_name %q stored as %q", tc.clientName, out["client_name"])
			}
		})
	}
}

// TestOAuthConsentShowsClient: the consent page shows the client's name isolated
// (<bdi>), so no name can reorder the sentence around it, and beside it the host the
// client answers at: its redirect URI's, or for a metadata document client the
// document's, in ASCII form.
func TestOAuthConsentShowsClient(t *testing.T) {
	doc := newMetadataServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id":"` + self + `","client_name":"Doc helper","redirect_uris":["` + testRedirect + `"],` +
			`"token_endpoint_auth_method":"none"}`))
	})
	roots := doc.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	e := mustServe(t, func(c *Config, _ *kv.Options) { c.allowLoopbackMetadata, c.metadataRoots = true, roots })
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	_, challenge := newVerifier()
	consent := func(t *testing.T, clientID, redirect string) string {
		t.Helper()
		q := authorizeQuery(clientID, challenge, "studies:read", testBaseURL+pipeline.ResourceMCP, "s")
		q.Set("redirect_uri", redirect)
		loc := wantRedirect(t, owner.get(t, "/v1/oauth/authorize?"+q.Encode()), "/app/oauth/authorize?")
		return wantPage(t, owner.get(t, loc), 200)
	}

	t.Run("OK_Registered", func(t *testing.T) {
		const redirect = "https://connector.example.net/oauth/callback"
		reg := e.mustRegister(t, `{"client_name":"עוזר מחקר","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`)
		page := consent(t, reg["client_id"].(string), redirect)
		for _, want := range []string{`<bdi>עוזר מחקר</bdi>`, `<bdi dir="ltr">connector.example.net</bdi>`} {
			if !strings.Contains(page, want) {
				t.Fatalf("consent page lacks %s:\n%s", want, page)
			}
		}
		if strings.Contains(page, "עוזר מחקר</strong>") || strings.Contains(page, "“עוזר מחקר”") {
			t.Fatalf("the client's name appears outside an isolate:\n%s", page)
		}
	})
	t.Run("OK_MetadataDocument", func(t *testing.T) {
		id := doc.URL + "/oauth/client.json"
		page := consent(t, id, testRedirect)
		host := strings.TrimPrefix(doc.URL, "https://")
		for _, want := range []string{`<bdi>Doc helper</bdi>`, `<bdi dir="ltr">` + host + `</bdi>`} {
			if !strings.Contains(page, want) {
				t.Fatalf("consent page lacks %s:\n%s", want, page)
			}
		}
	})
}

// TestClientHostLabel: the host shown beside a client's name.
func TestClientHostLabel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		client   kv.OAuthClient
		redirect string
		want     string
	}{
		{"OK_RedirectHost", kv.OAuthClient{ID: "svcc_x"}, "https://chatgpt.com/connector_platform_oauth_redirect", "chatgpt.com"},
		{"OK_RedirectPort", kv.OAuthClient{ID: "svcc_x"}, "https://app.example.com:8443/cb", "app.example.com:8443"},
		{"OK_Loopback", kv.OAuthClient{ID: "svcc_x"}, "http://127.0.0.1:33418/cb", "127.0.0.1:33418"},
		{"OK_LoopbackIPv6", kv.OAuthClient{ID: "svcc_x"}, "http://[::1]:33418/cb", "[::1]:33418"},
		{"OK_PrivateUseScheme", kv.OAuthClient{ID: "svcc_x"}, "com.example.app:/oauth", "com.example.app:"},
		{"OK_DocumentHost", kv.OAuthClient{ID: "https://claude.ai/oauth/mcp-client.json", Document: true}, "https://elsewhere.example/cb", "claude.ai"},
		{"OK_LookAlikeInASCII", kv.OAuthClient{ID: "svcc_x"}, "https://аpple.com/cb", "xn--pple-43d.com"}, // a Cyrillic а
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := app.ClientHostLabel(tc.client, tc.redirect); got != tc.want {
				t.Fatalf("clientHostLabel(%s, %s) = %q, want %q", tc.client.ID, tc.redirect, got, tc.want)
			}
		})
	}
}
