package server

import (
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// corsClientScript is what a browser-based MCP client does from its own page, with the
// request headers the MCP TypeScript SDK sends: probe the endpoint, read both discovery
// documents, register, try the token endpoint (with a client it does not know), then
// call a tool with a credential.
// Each step reports what the page could read, or "blocked" when the browser's CORS
// check kept the answer from it.
const corsClientScript = `(async (server, key) => {
  const out = {};
  const step = async (name, f) => { try { out[name] = await f(); } catch (e) { out[name] = 'blocked'; } };
  const v = {'MCP-Protocol-Version': '2025-11-25'};
  await step('probe', async () => {
    const r = await fetch(server + '/v1/mcp', {headers: {'Accept': 'text/event-stream'}});
    return r.status + ' ' + r.headers.get('WWW-Authenticate');
  });
  await step('resource', async () => (await (await fetch(server + '/.well-known/oauth-protected-resource/v1/mcp', {headers: v})).json()).resource);
  await step('issuer', async () => (await (await fetch(server + '/.well-known/oauth-authorization-server', {headers: v})).json()).issuer);
  await step('register', async () => {
    const r = await fetch(server + '/v1/oauth/register', {method: 'POST', headers: {'Content-Type': 'application/json', ...v},
      body: JSON.stringify({client_name: 'Browser client', redirect_uris: [location.origin + '/callback'],
        token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token']})});
    return r.status + ' ' + (await r.json()).client_id.slice(0, 5);
  });
  await step('token', async () => {
    const r = await fetch(server + '/v1/oauth/token', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded', ...v},
      body: 'grant_type=authorization_code&code=svcg_nope&redirect_uri=' + encodeURIComponent(location.origin + '/callback') +
        '&code_verifier=' + 'v'.repeat(43) + '&client_id=svcc_nope'});
    return r.status + ' ' + (await r.json()).error;
  });
  await step('call', async () => {
    const r = await fetch(server + '/v1/mcp', {method: 'POST', headers: {'Content-Type': 'application/json',
      'Accept': 'application/json, text/event-stream', 'Authorization': 'Bearer ' + key, ...v},
      body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'whoami', arguments: {}}})});
    return r.status + ' ' + (await r.json()).result.structuredContent.key_name;
  });
  return JSON.stringify(out);
})`

// TestCORSInBrowser: pages of two other origins, in Chromium, run a browser-based MCP
// client's requests against the server. Discovery, registration and the token endpoint
// are readable from both; the MCP endpoint, its 401 challenge included, only from the
// origin the operator listed. The browser's own CORS checks decide.
func TestCORSInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	clientPage := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>A browser-based MCP client</title>"))
	}
	listed := httptest.NewServer(http.HandlerFunc(clientPage))
	defer listed.Close()
	unlisted := httptest.NewServer(http.HandlerFunc(clientPage))
	defer unlisted.Close()
	e := mustServe(t, withListenerBaseURL(), func(c *Config, _ *kv.Options) { c.CORSOrigins = []string{listed.URL} })
	key := e.keys["a_live"]
	challenge := `Bearer resource_metadata="` + e.url + `/.well-known/oauth-protected-resource/v1/mcp"`
	for _, c := range []struct {
		name, origin string
		probe, call  string
	}{
		{"OK_Listed", listed.URL, "401 " + challenge, "200 a_live"},
		{"ErrUnlisted", unlisted.URL, "blocked", "blocked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, _ := newBrowser(t, chromium)
			p := page{t: t, ctx: ctx}
			p.do("open the client's page", chromedp.Navigate(c.origin+"/"))
			raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("%s(%q, %q)", corsClientScript, e.url, key), chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := stdjson.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			want := map[string]string{
				"probe":    c.probe,
				"resource": e.url + "/v1/mcp",
				"issuer":   e.url,
				"register": "201 svcc_",
				"token":    "401 invalid_client",
				"call":     c.call,
			}
			for k, w := range want {
				if got[k] != w && !(k == "probe" && strings.HasPrefix(got[k], w)) { // the challenge may carry more parameters
					t.Errorf("%s: the page read %q, want %q", k, got[k], w)
				}
			}
		})
	}
}
