package server

import (
	"bufio"
	"context"
	stdjson "encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
)

// TestMCPTypeScriptSDKAtLoopbackOrigin: the MCP TypeScript SDK's client (what
// mcp-remote runs) given http://127.0.0.1:PORT/v1/mcp while the server's base URL
// follows its listen address (http://localhost:PORT). The SDK refuses protected-resource
// metadata whose resource is not the URL it was given ("Protected resource … does not
// match expected …"); here it discovers, registers, is authorized at the origin it used
// and calls a tool with the token. The person's approval is made over HTTP as the app's
// consent page takes it (no browser needed: the code is read from the redirect).
func TestMCPTypeScriptSDKAtLoopbackOrigin(t *testing.T) {
	node, dir := tsSDKClient(t)
	e := mustServe(t, withDerivedBaseURL())
	if !strings.HasPrefix(e.url, "http://127.0.0.1:") {
		t.Fatalf("the test server is at %s, want 127.0.0.1", e.url)
	}
	u := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "loopback_ts_client.cjs"), e.url+"/v1/mcp", testRedirect)
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
			t.Fatalf("no %q from the SDK client in time: %s", want, stderr.String())
		}
		return tsEvent{}
	}
	reg := next("registered")
	authz := next("authorize")
	au, err := url.Parse(authz.URL)
	if err != nil || au.Scheme+"://"+au.Host != e.url || au.Path != "/v1/oauth/authorize" {
		t.Fatalf("authorize URL %s: want it at %s, the origin the client was given", authz.URL, e.url)
	}
	q := au.Query()
	if q.Get("resource") != e.url+"/v1/mcp" || q.Get("client_id") != reg.ClientID {
		t.Fatalf("authorize URL %s: resource %q", authz.URL, q.Get("resource"))
	}
	back := e.mustApprove(t, u, q, e.orgA.ID, kv.EnvLive, nil)
	if back.Get("iss") != e.url || back.Get("state") != "loopback-state" || back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
	if _, err := io.WriteString(stdin, back.Get("code")+"\n"); err != nil {
		t.Fatal(err)
	}
	if tok := next("tokens"); tok.AccessPrefix != "svca_" {
		t.Fatalf("tokens %+v", tok)
	}
	called := next("called")
	if called.Whoami["credential_type"] != "oauth" || called.Whoami["client_id"] != reg.ClientID {
		t.Fatalf("whoami %+v", called.Whoami)
	}
	next("done")
}
