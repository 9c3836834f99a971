package server

import (
	"html"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/pipeline"
)

// getAs fetches an app page with u's session, addressed to host (the Host header a
// browser sends for the name it used; "" for the listener's own address).
func (u *appClient) getAs(t *testing.T, path, host string) string {
	t.Helper()
	req, err := http.NewRequest("GET", u.e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.AddCookie(&http.Cookie{Name: app.SessionCookie, Value: u.cookie})
	resp, err := u.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s as %q: %d\n%s", path, host, resp.StatusCode, b)
	}
	return string(b)
}

var (
	snippetIn = regexp.MustCompile(`(?s)<pre class="snippet" id="snippet-([a-z]+)"><code>(.*?)</code></pre>`)
	mcpURLIn  = regexp.MustCompile(`<input id="mcp-url"[^>]* value="([^"]*)"`)
	scopeIn   = regexp.MustCompile(`<li><code>([^<]+)</code>`)
)

// connectShown is what the page offers for connecting an assistant, read back from
// its HTML as a browser would (entities decoded).
type connectShown struct {
	url      string
	snippets map[string]string // client id → the snippet's text
}

func readConnect(t *testing.T, page string) connectShown {
	t.Helper()
	m := mcpURLIn.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no MCP address on the page:\n%s", page)
	}
	c := connectShown{url: html.UnescapeString(m[1]), snippets: map[string]string{}}
	for _, s := range snippetIn.FindAllStringSubmatch(page, -1) {
		c.snippets[s[1]] = html.UnescapeString(s[2])
	}
	return c
}

// wantSnippets checks that the three snippets are valid JSON of each client's shape,
// naming mcpURL (with remoteArgs as mcp-remote's arguments after the URL).
func wantSnippets(t *testing.T, c connectShown, mcpURL string, remoteArgs ...string) {
	t.Helper()
	if c.url != mcpURL {
		t.Fatalf("the page gives %q, want %q", c.url, mcpURL)
	}
	var claude struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	var vscode struct {
		Servers map[string]struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"servers"`
	}
	var cursor struct {
		MCPServers map[string]struct {
			URL string `json:"url"`
		} `json:"mcpServers"`
	}
	for id, v := range map[string]any{"claude": &claude, "vscode": &vscode, "cursor": &cursor} {
		text, ok := c.snippets[id]
		if !ok {
			t.Fatalf("no %s snippet; snippets %v", id, c.snippets)
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s snippet is not its client's JSON (%v):\n%s", id, err, text)
		}
	}
	wantArgs := append([]string{"mcp-remote", mcpURL}, remoteArgs...)
	if s, ok := claude.MCPServers["interviewd"]; !ok || len(claude.MCPServers) != 1 || s.Command != "npx" || !slices.Equal(s.Args, wantArgs) {
		t.Fatalf("Claude Desktop snippet %+v, want npx %q", claude, wantArgs)
	}
	if s, ok := vscode.Servers["interviewd"]; !ok || len(vscode.Servers) != 1 || s.Type != "http" || s.URL != mcpURL {
		t.Fatalf("VS Code snippet %+v, want an http server at %s", vscode, mcpURL)
	}
	if s, ok := cursor.MCPServers["interviewd"]; !ok || len(cursor.MCPServers) != 1 || s.URL != mcpURL {
		t.Fatalf("Cursor snippet %+v, want %s", cursor, mcpURL)
	}
}

// TestAppConnectAssistant: Settings → Connected apps gives the MCP address the
// server's discovery names (the --base-url, whatever Host the page was asked under),
// with a copyable configuration for Claude Desktop, VS Code and Cursor, to people with
// and without connections; it lists the scopes discovery offers, and which of them
// the person's role may grant.
func TestAppConnectAssistant(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	e.mustConnect(t, owner, pipeline.ResourceMCP, e.orgA.ID, kv.EnvLive, "studies:read")

	r := e.do("GET", "/.well-known/oauth-protected-resource/v1/mcp", "", "")
	var prm struct {
		Resource string   `json:"resource"`
		Scopes   []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal(r.body, &prm); err != nil || prm.Resource != testBaseURL+"/v1/mcp" {
		t.Fatalf("protected-resource metadata: %d %s", r.status, r.body)
	}

	for _, tc := range []struct {
		name, host string
		as         *appClient
		conns      int
	}{
		{"OwnerWithConnection", "", owner, 1},
		{"MemberWithout", "", member, 0},
		{"ForeignHost", "elsewhere.example", owner, 1},
		{"LoopbackHost", "localhost:" + port(t, e.url), member, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := tc.as.getAs(t, "/app/settings/apps", tc.host)
			if n := strings.Count(page, "data-connection="); n != tc.conns {
				t.Fatalf("%d connections listed, want %d", n, tc.conns)
			}
			// https is not needed by mcp-remote for a name it trusts; interviewd.test is
			// plain http and not loopback, so mcp-remote must be told to allow it.
			wantSnippets(t, readConnect(t, page), prm.Resource, "--allow-http")
			if !strings.Contains(page, "Use exactly this address") {
				t.Fatal("the page does not say the --base-url is the only address")
			}
			var listed []string
			for _, m := range scopeIn.FindAllStringSubmatch(page, -1) {
				listed = append(listed, m[1])
			}
			if !slices.Equal(listed, prm.Scopes) {
				t.Fatalf("scopes listed %v, discovery offers %v", listed, prm.Scopes)
			}
			for _, sc := range prm.Scopes {
				line := regexp.MustCompile(`<li><code>` + regexp.QuoteMeta(sc) + `</code>.*?</li>`).FindString(page)
				limited := strings.Contains(line, "owners and admins only")
				if want := tc.as == member && !kv.RoleMember.MayHoldScope(sc); limited != want {
					t.Fatalf("%s line %q: marked for owners and admins %v, want %v", sc, line, limited, want)
				}
			}
		})
	}
}

// TestAppConnectAssistantEscaped: a base URL with characters HTML gives meaning to is
// shown escaped, and reads back as the very URL in every snippet; https needs no
// --allow-http.
func TestAppConnectAssistantEscaped(t *testing.T) {
	const base = "https://research.example/r&d<1>"
	e := mustServe(t, func(c *Config, _ *kv.Options) { c.BaseURL = base })
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	page := owner.getAs(t, "/app/settings/apps", "")
	if strings.Contains(page, "r&d") || strings.Contains(page, "<1>") {
		t.Fatal("the base URL reaches the page unescaped")
	}
	if !strings.Contains(page, "r&amp;d&lt;1&gt;/v1/mcp") {
		t.Fatal("the page does not show the base URL, escaped")
	}
	wantSnippets(t, readConnect(t, page), base+"/v1/mcp")
}

// TestAppConnectAssistantDerived: without --base-url the page gives the address
// discovery answers the browser's Host with: the loopback name it used on the
// listening port (mcp-remote trusts plain http only for localhost and 127.0.0.1), or
// the derived base URL for any other name.
func TestAppConnectAssistantDerived(t *testing.T) {
	e := mustServe(t, withDerivedBaseURL())
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	p := port(t, e.url)
	for _, tc := range []struct {
		name, host, want string
		remoteArgs       []string
	}{
		{"Listener", "", "http://127.0.0.1:" + p + "/v1/mcp", nil},
		{"Localhost", "localhost:" + p, "http://localhost:" + p + "/v1/mcp", nil},
		{"IPv6Loopback", "[::1]:" + p, "http://[::1]:" + p + "/v1/mcp", []string{"--allow-http"}},
		{"OtherPort", "localhost:1", "http://localhost:" + p + "/v1/mcp", nil},
		{"LANName", "192.0.2.7:" + p, "http://localhost:" + p + "/v1/mcp", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := owner.getAs(t, "/app/settings/apps", tc.host)
			wantSnippets(t, readConnect(t, page), tc.want, tc.remoteArgs...)
			// The address is one discovery names for that Host: the document a client
			// reads after its first 401 says so.
			req, _ := http.NewRequest("GET", e.url+"/.well-known/oauth-protected-resource/v1/mcp", nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var prm struct {
				Resource string `json:"resource"`
			}
			err = json.NewDecoder(resp.Body).Decode(&prm)
			resp.Body.Close()
			if err != nil || prm.Resource != tc.want {
				t.Fatalf("discovery names %q for Host %q, the page %q (%v)", prm.Resource, tc.host, tc.want, err)
			}
			if !strings.Contains(page, "This server has no <code>--base-url</code>") {
				t.Fatal("the page does not say the address follows the listener")
			}
		})
	}
}

// port is the port of the server at rawURL (http://host:port).
func port(t *testing.T, rawURL string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(rawURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
