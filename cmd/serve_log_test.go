package cmd

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBaseURLFollowsAddr(t *testing.T) {
	cases := []struct {
		addr  string
		bound int
		want  string
	}{
		{":8099", 8099, "http://localhost:8099"},
		{"0.0.0.0:8099", 8099, "http://localhost:8099"},
		{"[::]:8099", 8099, "http://localhost:8099"},
		{"127.0.0.1:0", 40123, "http://127.0.0.1:40123"},
		{"[::1]:8099", 8099, "http://[::1]:8099"},
		{"research.lan:80", 80, "http://research.lan:80"},
	}
	for _, c := range cases {
		if got := baseURLFor(c.addr, &net.TCPAddr{Port: c.bound}); got != c.want {
			t.Errorf("%s → %s, want %s", c.addr, got, c.want)
		}
	}

	t.Run("OK_EndToEnd", func(t *testing.T) {
		// A --model-url carrying a password (user:pass@host) is logged with it masked.
		srv := mustBoot(t, "--data", t.TempDir(), "--model-url", "http://ops:s3cret-pass@127.0.0.1:9/v1", "--model", "m")
		status, body := get(t, srv.URL+"/.well-known/oauth-protected-resource/v1/api", "")
		if status != 200 || !strings.Contains(body, `"resource":"`+srv.URL+`/v1/api"`) {
			t.Fatalf("links do not follow the bound address %s: %d %s", srv.URL, status, body)
		}
		logs := srv.Logs.String()
		if line, _ := startLine(t, logs); strings.Contains(logs, "s3cret-pass") || line["model_url"] != "http://ops:xxxxx@127.0.0.1:9/v1" {
			t.Fatalf("model_url %v in:\n%s", line["model_url"], logs)
		}
	})
}

// startLine returns the decoded "listening" line and its position in the log.
func startLine(t *testing.T, logs string) (map[string]any, int) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["message"] == "listening" {
			return m, i
		}
	}
	t.Fatalf("no start line:\n%s", logs)
	return nil, 0
}

func TestStartLineAndProbes(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := mustBoot(t, "--data", "data")
	wd, _ := os.Getwd()
	if status, body := get(t, srv.URL+"/healthz", ""); status != 200 || body != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", status, body)
	}
	if status, body := get(t, srv.URL+"/readyz", ""); status != 200 || body != `{"status":"ready"}` {
		t.Fatalf("readyz: %d %s", status, body)
	}
	if status, _ := get(t, srv.URL+"/v1/api/studies", ""); status != 401 {
		t.Fatalf("studies without a key: %d", status)
	}
	// The first-run hint follows the listener's start, on serve's own goroutine: a stop
	// before it is logged would leave it out.
	for deadline := time.Now().Add(bootWait); !strings.Contains(srv.Logs.String(), "no organisation yet"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no first-run hint within %s:\n%s", bootWait, srv.Logs.String())
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	logs := srv.Logs.String()
	line, at := startLine(t, logs)
	v := readVersion()
	for k, want := range map[string]string{"version": v.Version, "revision": v.Revision, "go": v.Go, "engine": "builtin",
		"data": filepath.Join(wd, "data"), "base_url": srv.URL, "admin_socket": filepath.Join(wd, "data", "admin.sock")} {
		if line[k] != want {
			t.Errorf("start line %s = %v, want %s", k, line[k], want)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	hint := -1
	for i, l := range lines {
		if strings.Contains(l, "no organisation yet") {
			hint = i
		}
	}
	if hint <= at {
		t.Errorf("the first-run hint (line %d) is not after the listener is up (line %d):\n%s", hint, at, logs)
	}
	if strings.Contains(logs, "/healthz") || strings.Contains(logs, "/readyz") {
		t.Errorf("health probes in the access log at info:\n%s", logs)
	}
	if !strings.Contains(logs, `"route":"/v1/api/studies","status":401,"duration_ms":`) || !strings.Contains(logs, `"code":"missing_token"`) {
		t.Errorf("the 401 is not logged with its duration and code:\n%s", logs)
	}
	if !strings.Contains(lines[len(lines)-1], `"message":"stopped"`) || !strings.Contains(lines[len(lines)-1], `"duration_ms":`) {
		t.Errorf("last line: %s", lines[len(lines)-1])
	}
}

// TestConsoleColoursOnlyATerminal: console output written to a file or a pipe (here a
// regular file and a buffer) carries no colour codes.
func TestConsoleColoursOnlyATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, w := range []interface{ Write([]byte) (int, error) }{f, &buf} {
		log, err := newLogger(w, isTerminal(w), "info", "console")
		if err != nil {
			t.Fatal(err)
		}
		log.Info().Str("k", "v").Msg("hello")
	}
	raw, _ := os.ReadFile(f.Name())
	for name, out := range map[string]string{"file": string(raw), "buffer": buf.String()} {
		if !strings.Contains(out, "hello") || strings.Contains(out, "\x1b[") {
			t.Errorf("%s got %q", name, out)
		}
	}
	if isTerminal(f) {
		t.Error("a regular file counts as a terminal")
	}
}
