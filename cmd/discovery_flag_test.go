package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// requestAt sends method path to srv under the Host name host, with headers (name,
// value pairs), and returns the answer.
func requestAt(t *testing.T, srv *booted, method, host, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// resourceAt is the resource the MCP endpoint's protected-resource metadata names to a
// client that reached srv under host.
func resourceAt(t *testing.T, srv *booted, host string) string {
	t.Helper()
	resp, body := requestAt(t, srv, "GET", host, "/.well-known/oauth-protected-resource/v1/mcp")
	var doc struct{ Resource string }
	if err := json.Unmarshal([]byte(body), &doc); resp.StatusCode != 200 || err != nil {
		t.Fatalf("metadata at %s: %d %s", host, resp.StatusCode, body)
	}
	return doc.Resource
}

// TestMCPURLAtStart: the start line says which URL MCP clients must use. Without
// --base-url (the base follows --addr), discovery answers a client at another loopback
// name of the port for the origin it used; with --base-url it names that URL whatever
// the Host.
func TestMCPURLAtStart(t *testing.T) {
	t.Run("OK_Derived", func(t *testing.T) {
		srv := mustBoot(t, "--data", t.TempDir())
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
		line, _ := startLine(t, srv.Logs.String())
		if line["mcp_url"] != srv.URL+"/v1/mcp" || !strings.Contains(line["mcp_clients"].(string), "127.0.0.1") {
			t.Fatalf("start line: mcp_url %v, mcp_clients %v", line["mcp_url"], line["mcp_clients"])
		}
		for host, want := range map[string]string{
			"localhost:" + port:        "http://localhost:" + port + "/v1/mcp",
			"[::1]:" + port:            "http://[::1]:" + port + "/v1/mcp",
			"127.0.0.1:" + port:        srv.URL + "/v1/mcp",
			"research.example:" + port: srv.URL + "/v1/mcp",
		} {
			if got := resourceAt(t, srv, host); got != want {
				t.Errorf("resource at %s: %s, want %s", host, got, want)
			}
		}
	})
	t.Run("OK_Configured", func(t *testing.T) {
		const base = "https://research.example.com"
		srv := mustBoot(t, "--data", t.TempDir(), "--base-url", base)
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
		line, _ := startLine(t, srv.Logs.String())
		if line["mcp_url"] != base+"/v1/mcp" || !strings.Contains(line["mcp_clients"].(string), "exactly "+base+"/v1/mcp") {
			t.Fatalf("start line: mcp_url %v, mcp_clients %v", line["mcp_url"], line["mcp_clients"])
		}
		for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
			if got := resourceAt(t, srv, host); got != base+"/v1/mcp" {
				t.Errorf("resource at %s: %s, want the base URL's", host, got)
			}
		}
	})
}

// TestRunCORSOriginsFlag: --cors-origins (or INTERVIEWD_CORS_ORIGINS) lists the
// browser origins the MCP endpoint answers with CORS; anything but origins is refused
// before the server starts.
func TestRunCORSOriginsFlag(t *testing.T) {
	err := Run(context.Background(), []string{"serve", "--data", t.TempDir(), "--cors-origins", "*"}, io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), `--cors-origins: "*": wildcards are not accepted`) {
		t.Fatalf("got %v", err)
	}
	err = Run(context.Background(), []string{"serve", "--data", t.TempDir(), "--cors-origins", "http://localhost:6274/app"}, io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "is not an origin") {
		t.Fatalf("got %v", err)
	}
	const listed = "http://localhost:6274"
	env := func(k string) (string, bool) {
		if k == "INTERVIEWD_CORS_ORIGINS" {
			return listed + ",https://inspector.example.com", true
		}
		return "", false
	}
	for name, srv := range map[string]*booted{
		"Flag": mustBoot(t, "--data", t.TempDir(), "--cors-origins", listed),
		"Env":  mustBootEnv(t, env, "--data", t.TempDir()),
	} {
		t.Run("OK_"+name, func(t *testing.T) {
			host := strings.TrimPrefix(srv.URL, "http://")
			resp, body := requestAt(t, srv, "OPTIONS", host, "/v1/mcp", "Origin", listed, "Access-Control-Request-Method", "POST")
			if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != listed {
				t.Fatalf("preflight: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			resp, _ = requestAt(t, srv, "OPTIONS", host, "/v1/mcp", "Origin", "http://localhost:6275", "Access-Control-Request-Method", "POST")
			if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("unlisted preflight: %d %v", resp.StatusCode, resp.Header)
			}
			if line, _ := startLine(t, srv.Logs.String()); !strings.Contains(strings.Join(anyStrings(line["cors_origins"]), ","), listed) {
				t.Fatalf("start line cors_origins %v", line["cors_origins"])
			}
		})
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}
