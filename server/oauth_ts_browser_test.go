package server

import (
	"bufio"
	"context"
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The MCP TypeScript SDK's client (npm @modelcontextprotocol/sdk, pinned in .ci/node)
// with its own OAuth provider, run by node, and a person in Chromium: the SDK
// discovers the server from the 401, registers, and hands over the authorize URL; the
// person signs in, chooses the workspace and approves in the browser, which is sent to
// the SDK's own loopback redirect URI; the SDK exchanges the code, lists and calls
// tools, refreshes, and after the person ends the connection in Settings → Connected
// apps, is refused and asks to authorize again.
//
// Without node, the SDK or Chromium the test skips, unless INTERVIEWD_REQUIRE_OAUTH_CLIENTS=1
// (CI) makes that a failure.

// tsSDKClient returns node and the folder holding the SDK, or skips.
func tsSDKClient(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(msg string) {
		if os.Getenv("INTERVIEWD_REQUIRE_OAUTH_CLIENTS") == "1" {
			t.Fatal(msg)
		}
		skipMissing(t, msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found; the MCP TypeScript SDK OAuth test skipped")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, ".ci", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("MCP TypeScript SDK not installed (npm ci --prefix .ci/node); its OAuth test skipped")
	}
	return node, dir
}

// tsEvent is one line the script reports.
type tsEvent struct {
	Event        string         `json:"event"`
	URL          string         `json:"url"`
	ClientID     string         `json:"client_id"`
	AccessPrefix string         `json:"access_prefix"`
	RefreshPfx   string         `json:"refresh_prefix"`
	ExpiresIn    int            `json:"expires_in"`
	Iss          string         `json:"iss"`
	HasCode      bool           `json:"has_code"`
	Tools        []string       `json:"tools"`
	Whoami       map[string]any `json:"whoami"`
	Rotated      bool           `json:"rotated"`
	Unauthorized bool           `json:"unauthorized"`
	Message      string         `json:"message"`
}

func TestOAuthMCPTypeScriptSDK(t *testing.T) {
	node, dir := tsSDKClient(t)
	e := mustServeApp(t, withListenerBaseURL())
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "oauth_ts_client.cjs"), e.url+"/v1/mcp")
	cmd.Env = append(os.Environ(), "INTERVIEWD_NODE_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan tsEvent, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev tsEvent
			if stdjson.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	next := func(want string) tsEvent {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the SDK client stopped before %q: %s", want, stderr.String())
			}
			if ev.Event != want {
				t.Fatalf("the SDK client reported %+v, want %q\n%s", ev, want, stderr.String())
			}
			return ev
		case <-ctx.Done():
			t.Fatalf("no %q from the SDK client within %v: %s", want, browserTimeout, stderr.String())
		}
		return tsEvent{}
	}

	reg := next("registered")
	if !strings.HasPrefix(reg.ClientID, "svcc_") {
		t.Fatalf("client id %q", reg.ClientID)
	}
	authz := next("authorize")
	if !strings.HasPrefix(authz.URL, e.url+"/v1/oauth/authorize?") || !strings.Contains(authz.URL, "code_challenge_method=S256") ||
		!strings.Contains(authz.URL, "resource=") {
		t.Fatalf("authorize URL %s", authz.URL)
	}

	// The person: signed out, so sign in first; then consent (in their one workspace).
	tab := e.browser(t)
	tab.do("open the authorize URL", chromedp.Navigate(authz.URL))
	tab.waitPath("/app/signin")
	tab.fill("#email", "a@example.com")
	tab.submit("form[action='/app/signin'] button[type=submit]", "/app/signin")
	tab.waitFor("the code page", `!!document.querySelector('#code')`)
	tab.fill("#code", e.smtp.Next(t, "a@example.com").Code())
	// One workspace: straight back to the consent page.
	tab.submit("form[action='/app/signin/code'] button[type=submit]", "/app/oauth/authorize")
	if got := tab.text("h1"); !strings.Contains(got, "MCP TypeScript SDK") {
		t.Fatalf("consent heading %q", got)
	}
	// Beside the name, the host the approval goes back to: the SDK's loopback listener.
	if got := tab.text(".client-host"); !strings.HasPrefix(got, "(127.0.0.1:") {
		t.Fatalf("the client's host beside its name: %q", got)
	}
	checkAxe(t, tab)
	// Fewer than asked: untick going live.
	tab.do("untick studies:golive", chromedp.Click(chromedp.CSS(`input[value="studies:golive"]`)))
	tab.do("approve", chromedp.Click(chromedp.CSS("#consent-approve")))
	tab.waitFor("the SDK's redirect page", `!!document.querySelector('#connected')`)

	back := next("callback")
	if back.Iss != e.url || !back.HasCode {
		t.Fatalf("callback %+v", back)
	}
	tok := next("tokens")
	if tok.AccessPrefix != "svca_" || tok.RefreshPfx != "svcr_" || tok.ExpiresIn <= 0 || tok.ExpiresIn > 600 {
		t.Fatalf("tokens %+v", tok)
	}
	called := next("called")
	if len(called.Tools) < 10 || called.Whoami["credential_type"] != "oauth" || called.Whoami["client_id"] != reg.ClientID {
		t.Fatalf("called %+v", called)
	}
	if fmt.Sprint(called.Whoami["scopes"]) != "[export:read links:read links:write studies:read studies:write]" {
		t.Fatalf("granted scopes %v", called.Whoami["scopes"])
	}
	next("tokens") // the refresh
	if ref := next("refreshed"); !ref.Rotated || ref.Whoami["grant_id"] != called.Whoami["grant_id"] {
		t.Fatalf("refreshed %+v", ref)
	}
	next("waiting")

	// The person ends the connection in Settings → Connected apps.
	tab.open("/app/settings/apps")
	if got := tab.text("table"); !strings.Contains(got, "MCP TypeScript SDK") {
		t.Fatalf("connected apps: %q", got)
	}
	checkAxe(t, tab)
	tab.acceptConfirms()
	tab.submit(`button[aria-label="End MCP TypeScript SDK"]`, "/app/settings/apps")
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	next("reauthorize")
	if ev := next("refused"); !ev.Unauthorized {
		t.Fatalf("refused %+v", ev)
	}
	next("done")
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	select {
	case err := <-waitDone:
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
	case <-time.After(browserTimeout):
		t.Fatal("node did not exit")
	}
}
