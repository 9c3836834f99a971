package server

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"interviewd/kv"
)

// inspectorPath finds the MCP Inspector CLI: $INTERVIEWD_MCP_INSPECTOR, else the copy
// .ci/node installs (npm install --prefix .ci/node). It skips the test when there is
// none, or fails it when $INTERVIEWD_REQUIRE_MCP_INSPECTOR is 1 (as CI sets).
func inspectorPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("INTERVIEWD_MCP_INSPECTOR")
	if path == "" {
		if root, err := repoRoot(); err == nil {
			path = filepath.Join(root, ".ci", "node", "node_modules", ".bin", "mcp-inspector")
		}
	}
	if _, err := os.Stat(path); path == "" || err != nil {
		msg := "MCP Inspector CLI not found (install it with `npm ci --prefix .ci/node`, or set INTERVIEWD_MCP_INSPECTOR)"
		if os.Getenv("INTERVIEWD_REQUIRE_MCP_INSPECTOR") == "1" {
			t.Fatal(msg)
		}
		skipMissing(t, msg)
	}
	return path
}

// repoRoot is the nearest folder above the working directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// inspectorRun is one Inspector CLI invocation: its exit code and its JSON output.
type inspectorRun struct {
	exit   int
	result map[string]any
	stderr string
}

// TestMCPInspector drives the server with a third-party client, the MCP Inspector CLI
// (a Node.js program on the TypeScript SDK), in both protocol eras over loopback.
func TestMCPInspector(t *testing.T) {
	bin := inspectorPath(t)
	e := mustServe(t)
	older := e.mustStudy(e.orgA.ID, kv.EnvLive, "Older")
	newer := e.mustStudy(e.orgA.ID, kv.EnvLive, "Newer")
	home := t.TempDir() // the Inspector keeps a catalog and settings under $HOME

	run := func(t *testing.T, era string, args ...string) inspectorRun {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		full := append([]string{"--cli", e.url + "/v1/mcp", "--transport", "http",
			"--header", "Authorization: Bearer " + e.keys["a_live"],
			"--protocol-era", era, "--format", "json"}, args...)
		cmd := exec.CommandContext(ctx, bin, full...)
		cmd.Env = append(os.Environ(), "HOME="+home, "NO_COLOR=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		r := inspectorRun{stderr: stderr.String()}
		switch {
		case errors.As(err, &exitErr):
			r.exit = exitErr.ExitCode()
		case err != nil:
			t.Fatalf("run inspector: %v\n%s", err, stderr.String())
		}
		var out struct {
			Result map[string]any `json:"result"`
		}
		if err := stdjson.Unmarshal(stdout.Bytes(), &out); err != nil || out.Result == nil {
			t.Fatalf("inspector %v: exit %d, output %q, stderr %s", args, r.exit, stdout.String(), stderr.String())
		}
		r.result = out.Result
		return r
	}

	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			// A modern (2026-07-28) result names the server in _meta; a legacy one
			// never does: this is how the test knows which era the Inspector spoke.
			wantServerInfo := era == "modern"
			checkEra := func(t *testing.T, r inspectorRun) {
				t.Helper()
				meta, _ := r.result["_meta"].(map[string]any)
				if _, got := meta["io.modelcontextprotocol/serverInfo"]; got != wantServerInfo {
					t.Fatalf("result _meta %v: not a %s-era exchange", meta, era)
				}
			}
			t.Run("OK_ToolsList", func(t *testing.T) {
				// --strict fails (exit 6) on any schema problem of error severity.
				r := run(t, era, "--method", "tools/list", "--strict")
				if r.exit != 0 {
					t.Fatalf("exit %d: %s", r.exit, r.stderr)
				}
				tools, _ := r.result["tools"].([]any)
				names := map[string]bool{}
				for _, tool := range tools {
					names[tool.(map[string]any)["name"].(string)] = true
				}
				for _, o := range e.srv.Operations() {
					if !names[o.Name] {
						t.Fatalf("tool %s missing from %v", o.Name, names)
					}
				}
				if len(tools) != len(e.srv.Operations()) {
					t.Fatalf("%d tools for %d operations", len(tools), len(e.srv.Operations()))
				}
			})
			t.Run("OK_Whoami", func(t *testing.T) {
				r := run(t, era, "--method", "tools/call", "--tool-name", "whoami")
				sc, _ := r.result["structuredContent"].(map[string]any)
				if r.exit != 0 || sc["key_name"] != "a_live" || sc["org_id"] != e.orgA.ID.String() {
					t.Fatalf("exit %d, result %v, stderr %s", r.exit, r.result, r.stderr)
				}
				checkEra(t, r)
			})
			t.Run("OK_ListStudiesPaged", func(t *testing.T) {
				first := run(t, era, "--method", "tools/call", "--tool-name", "list_studies", "--tool-args-json", `{"limit":1}`)
				sc, _ := first.result["structuredContent"].(map[string]any)
				items, _ := sc["items"].([]any)
				next, _ := sc["next_cursor"].(string)
				if first.exit != 0 || len(items) != 1 || items[0].(map[string]any)["id"] != newer.ID.String() || next == "" {
					t.Fatalf("first page: exit %d, %v, stderr %s", first.exit, first.result, first.stderr)
				}
				checkEra(t, first)
				second := run(t, era, "--method", "tools/call", "--tool-name", "list_studies", "--tool-args-json", fmt.Sprintf(`{"limit":1,"cursor":%q}`, next))
				sc, _ = second.result["structuredContent"].(map[string]any)
				items, _ = sc["items"].([]any)
				if second.exit != 0 || len(items) != 1 || items[0].(map[string]any)["id"] != older.ID.String() {
					t.Fatalf("second page: exit %d, %v, stderr %s", second.exit, second.result, second.stderr)
				}
			})
			t.Run("ErrValidationIsAToolError", func(t *testing.T) {
				// The Inspector checks structuredContent against the output schema even
				// for error results; it must see our error, not a schema mismatch.
				r := run(t, era, "--method", "tools/call", "--tool-name", "get_study", "--tool-arg", "study_id=nope")
				sc, _ := r.result["structuredContent"].(map[string]any)
				if r.result["isError"] != true || sc["code"] != "validation_error" {
					t.Fatalf("exit %d, result %v, stderr %s", r.exit, r.result, r.stderr)
				}
				if r.exit != 5 { // the CLI's "tool returned isError" exit code
					t.Fatalf("exit %d, want 5 (tool error): %s", r.exit, r.stderr)
				}
			})
		})
	}
}
