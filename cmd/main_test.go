package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/cmd/cmdtest"
	"interviewd/kv/pgtest"
	"interviewd/plugins/plugintest"
)

// TestMain stops the PostgreSQL server the suite started, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// program is the command line booted in the test's own process (package cmdtest).
var program = cmdtest.Program(Run)

type (
	booted     = cmdtest.Booted
	syncBuffer = cmdtest.SyncBuffer
)

const bootWait = cmdtest.BootWait

var noEnv = cmdtest.NoEnv

// admin runs one admin command and decodes its JSON output.
func admin(t *testing.T, v any, args ...string) {
	t.Helper()
	program.Admin(t, v, args...)
}

// mustBoot serves on 127.0.0.1:0 until the test ends (cmdtest.Program.Boot).
func mustBoot(t *testing.T, args ...string) *booted {
	t.Helper()
	return program.Boot(t, args...)
}

// mustBootEnv is mustBoot with the environment env.
func mustBootEnv(t *testing.T, env func(string) (string, bool), args ...string) *booted {
	t.Helper()
	return program.BootEnv(t, env, args...)
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	return cmdtest.Get(t, url, key)
}

func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var org struct {
		OrgID  string `json:"org_id"`
		UserID string `json:"user_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Acme Research", "--email", "owner@acme.test", "--credits", "5")
	var key struct {
		KeyID       string   `json:"key_id"`
		Name        string   `json:"name"`
		Environment string   `json:"environment"`
		Scopes      []string `json:"scopes"`
		ExpiresAt   *string  `json:"expires_at"`
		Secret      string   `json:"secret"`
	}
	admin(t, &key, "keys", "create", "--data", dir, "--org", org.OrgID, "--name", "ci", "--env", "live",
		"--scopes", "studies:read,links:read", "--expires-days", "90")
	if !strings.HasPrefix(key.Secret, "jsk_live_") || key.ExpiresAt == nil || strings.Join(key.Scopes, ",") != "links:read,studies:read" {
		t.Fatalf("key %+v", key)
	}
	var listed []map[string]any
	admin(t, &listed, "keys", "list", "--data", dir, "--org", org.OrgID)
	if len(listed) != 1 || listed[0]["secret"] != nil || strings.Contains(strings.Join(mapValues(listed[0]), " "), key.Secret) {
		t.Fatalf("keys list shows a secret or wrong keys: %v", listed)
	}

	srv := mustBoot(t, "--data", dir, "--base-url", "https://research.example")
	status, body := get(t, srv.URL+"/v1/api/me", key.Secret)
	if status != 200 || !strings.Contains(body, `"org_name":"Acme Research"`) {
		t.Fatalf("whoami: %d %s", status, body)
	}
	status, body = get(t, srv.URL+"/v1/api/me", "")
	if status != 401 || !strings.Contains(body, "missing_token") {
		t.Fatalf("no key: %d %s", status, body)
	}

	t.Run("OK_AdminOnHeldFolder", func(t *testing.T) { // through DATA/admin.sock
		var keys []map[string]any
		admin(t, &keys, "keys", "list", "--data", dir, "--org", org.OrgID)
		if len(keys) != 1 || keys[0]["key_id"] != key.KeyID {
			t.Fatalf("keys through the socket: %v", keys)
		}
	})
	t.Run("ErrSecondServerOnHeldFolder", func(t *testing.T) {
		err := Run(context.Background(), []string{"--addr", "127.0.0.1:0", "--data", dir}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "in use by another interviewd") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrHeldFolderBeforeBusyPort", func(t *testing.T) {
		// The folder is opened before the port: its error is the one reported.
		addr := strings.TrimPrefix(srv.URL, "http://")
		err := Run(context.Background(), []string{"--addr", addr, "--data", dir}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "in use by another interviewd") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrBusyPortLeavesFolderFree", func(t *testing.T) {
		// A listener that fails lets go of the folder opened before it: the next start
		// opens it.
		other := filepath.Join(t.TempDir(), "data")
		addr := strings.TrimPrefix(srv.URL, "http://")
		err := Run(context.Background(), []string{"--addr", addr, "--data", other}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "listen on "+addr) {
			t.Fatalf("got %v", err)
		}
		again := mustBoot(t, "--data", other)
		if err := again.Stop(); err != nil {
			t.Fatalf("start after the failed one: %v", err)
		}
	})

	if err := srv.Stop(); err != nil {
		t.Fatalf("clean shutdown returned %v", err)
	}
	logs := srv.Logs.String()
	for _, want := range []string{`"route":"/v1/api/me"`, `"status":200`, `"request_id":"req_`, `"org_id":"` + org.OrgID + `"`, `"message":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Fatalf("log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, key.Secret) || strings.Contains(logs, key.Secret[9:20]) {
		t.Fatal("the access log contains the key secret")
	}

	// After the server stops, admin commands work again and revocation sticks.
	var revoked map[string]any
	admin(t, &revoked, "keys", "revoke", "--data", dir, "--key", key.KeyID)
	srv2 := mustBoot(t, "--data", dir)
	if status, _ := get(t, srv2.URL+"/v1/api/me", key.Secret); status != 401 {
		t.Fatalf("revoked key: %d", status)
	}
}

func mapValues(m map[string]any) []string {
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestRunEmptyFolderHint(t *testing.T) {
	srv := mustBoot(t, "--data", t.TempDir(), "--log-format", "json")
	if status, _ := get(t, srv.URL+"/v1/api/openapi.json", ""); status != 200 {
		t.Fatalf("openapi: %d", status)
	}
	_ = srv.Stop()
	if !strings.Contains(srv.Logs.String(), "no organisation yet: create one with `interviewd setup") ||
		!strings.Contains(srv.Logs.String(), "signs in at "+srv.URL+"/app") {
		t.Fatalf("no first-run hint:\n%s", srv.Logs.String())
	}
}

func TestRunFlagsAndEnv(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"ErrUnknownCommand", []string{"launch"}, nil, `unknown command "launch"`},
		{"ErrBadLogLevel", []string{"--log-level", "loud"}, nil, `--log-level "loud"`},
		{"ErrBadLogFormat", []string{"--data", "", "--log-format", "xml"}, nil, `--log-format "xml"`},
		{"ErrEnvLogFormat", nil, map[string]string{"INTERVIEWD_LOG_FORMAT": "yaml"}, `--log-format "yaml"`},
		{"ErrUnknownFlag", []string{"--port", "1"}, nil, "unknown flag --port"},
		{"ErrSetupMissing", []string{"setup", "--data", "DIR"}, nil, "missing --org, --email"},
		{"ErrKeysNoSub", []string{"keys"}, nil, "want create, list or revoke"},
		{"ErrKeysBadOrg", []string{"keys", "list", "--data", "DIR", "--org", "acme"}, nil, `--org "acme" is not a UUID`},
		{"ErrKeysBadScope", []string{"keys", "create", "--data", "DIR", "--org", "0190aa00-0000-7000-8000-000000000000", "--name", "x", "--env", "live", "--scopes", "root"}, nil, `unknown scope "root" (known: studies:read,`},
		{"ErrCreditsAmount", []string{"credits", "add", "--data", "DIR", "--org", "0190aa00-0000-7000-8000-000000000000"}, nil, "--amount must be a positive number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			env := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			err := Run(context.Background(), args, io.Discard, io.Discard, env)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	t.Run("OK_CreditsAdd", func(t *testing.T) {
		dir := t.TempDir()
		var org struct {
			OrgID string `json:"org_id"`
		}
		admin(t, &org, "setup", "--data", dir, "--org", "A", "--email", "a@a.test", "--credits", "2")
		var out struct {
			Credits int `json:"credits"`
		}
		admin(t, &out, "credits", "add", "--data", dir, "--org", org.OrgID, "--amount", "3")
		if out.Credits != 5 {
			t.Fatalf("credits %d", out.Credits)
		}
	})
	t.Run("OK_EnvDataFolder", func(t *testing.T) {
		dir := t.TempDir()
		env := func(k string) (string, bool) {
			if k == "INTERVIEWD_DATA" {
				return dir, true
			}
			return "", false
		}
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"setup", "--org", "E", "--email", "e@e.test"}, &out, io.Discard, env); err != nil {
			t.Fatal(err)
		}
		var keys []any
		admin(t, &keys, "keys", "list", "--data", dir, "--org", strings.Split(strings.Split(out.String(), `"org_id": "`)[1], `"`)[0])
		if len(keys) != 0 {
			t.Fatalf("keys %v", keys)
		}
	})
}

func TestOrgRedactionCommand(t *testing.T) {
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "R", "--email", "r@r.test")
	var got struct {
		Email    bool `json:"email"`
		Phone    bool `json:"phone"`
		Card     bool `json:"card"`
		IP       bool `json:"ip"`
		Patterns []struct {
			Name  string `json:"name"`
			Regex string `json:"regex"`
		} `json:"patterns"`
	}
	admin(t, &got, "org", "redaction", "--data", dir, "--org", org.OrgID, "--phone", "off", "--pattern", `EMPLOYEE_ID=E\d{6}`)
	if !got.Email || got.Phone || !got.Card || !got.IP || len(got.Patterns) != 1 || got.Patterns[0].Name != "EMPLOYEE_ID" {
		t.Fatalf("settings %+v", got)
	}
	admin(t, &got, "org", "redaction", "--data", dir, "--org", org.OrgID, "--pattern", `EMPLOYEE_ID=EMP-\d+`, "--pattern", `TICKET=T-\d+`)
	if got.Phone || len(got.Patterns) != 2 || got.Patterns[0].Regex != `EMP-\d+` {
		t.Fatalf("settings after update %+v", got)
	}
	for _, bad := range [][]string{{"--pattern", "lower=x"}, {"--pattern", "BAD=("}, {"--email", "maybe"}} {
		args := append([]string{"org", "redaction", "--data", dir, "--org", org.OrgID}, bad...)
		if err := Run(context.Background(), args, io.Discard, io.Discard, noEnv); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

func TestPluginsCommands(t *testing.T) {
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "P", "--email", "p@p.test")
	var added struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		MediaType string `json:"media_type"`
		Blob      string `json:"blob"`
	}
	admin(t, &added, "plugins", "add", "--data", dir, "--org", org.OrgID, "--file", plugintest.Path(t, plugintest.JSONL))
	if added.Kind != "formatter" || added.Name != "jsonl" || added.MediaType == "" {
		t.Fatalf("added %+v", added)
	}
	var list []map[string]any
	admin(t, &list, "plugins", "list", "--data", dir, "--org", org.OrgID)
	if len(list) != 1 || list[0]["name"] != "jsonl" {
		t.Fatalf("list %v", list)
	}
	var removed map[string]any
	admin(t, &removed, "plugins", "remove", "--data", dir, "--org", org.OrgID, "--kind", "formatter", "--name", "jsonl")
	admin(t, &list, "plugins", "list", "--data", dir, "--org", org.OrgID)
	if len(list) != 0 {
		t.Fatalf("after remove: %v", list)
	}
	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	os.WriteFile(notWasm, []byte("not a module"), 0o600)
	if err := Run(context.Background(), []string{"plugins", "add", "--data", dir, "--org", org.OrgID, "--file", notWasm}, io.Discard, io.Discard, noEnv); err == nil {
		t.Fatal("a file that is not a module was added")
	}
}
