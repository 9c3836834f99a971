package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/plugins/plugintest"
)

// syncBuffer is a bytes.Buffer safe for the server's log goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func noEnv(string) (string, bool) { return "", false }

// admin runs one admin command and decodes its JSON output.
func admin(t *testing.T, v any, args ...string) {
	t.Helper()
	var out bytes.Buffer
	if err := runWith(context.Background(), args, &out, io.Discard, noEnv); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("%v printed %q: %v", args, out.String(), err)
	}
}

// booted is a running program.
type booted struct {
	url  string
	logs *syncBuffer
	stop func() error
}

// bootWait bounds the waits around a booted program: its address appearing and its
// stop. It is generous because the suite runs on loaded machines under the race
// detector; a healthy run never comes near it.
const bootWait = 2 * time.Minute

// mustBoot runs the real program's serve command on 127.0.0.1:0 and waits for it to
// log its address. However the test ends, the program is stopped and waited for before
// the next test starts, so no server outlives its test.
func mustBoot(t *testing.T, args ...string) *booted {
	t.Helper()
	return mustBootEnv(t, noEnv, args...)
}

// mustBootEnv is mustBoot with the environment env.
func mustBootEnv(t *testing.T, env func(string) (string, bool), args ...string) *booted {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runWith(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, logs, env)
	}()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(bootWait):
				stopErr = fmt.Errorf("server did not stop within %s of its stop signal", bootWait)
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil && !errors.Is(err, errExitedEarly) {
			t.Errorf("stopping the server: %v", err)
		}
	})
	addrRe := regexp.MustCompile(`"addr":"([^"]+)"`)
	deadline := time.Now().Add(bootWait)
	for {
		if m := addrRe.FindStringSubmatch(logs.String()); m != nil {
			return &booted{url: "http://" + m[1], logs: logs, stop: stop}
		}
		select {
		case err := <-done:
			stopErr = errExitedEarly
			once.Do(func() {})
			t.Fatalf("server exited early: %v\n%s", err, logs.String())
		case <-time.After(5 * time.Millisecond): // poll the log for the address
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never logged its address within %s:\n%s", bootWait, logs.String())
		}
	}
}

// errExitedEarly marks a server that exited before logging its address: nothing is
// left to stop.
var errExitedEarly = errors.New("server exited early")

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
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
	status, body := get(t, srv.url+"/v1/api/me", key.Secret)
	if status != 200 || !strings.Contains(body, `"org_name":"Acme Research"`) {
		t.Fatalf("whoami: %d %s", status, body)
	}
	status, body = get(t, srv.url+"/v1/api/me", "")
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
		err := runWith(context.Background(), []string{"--addr", "127.0.0.1:0", "--data", dir}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "in use by another interviewd") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrHeldFolderBeforeBusyPort", func(t *testing.T) {
		// The folder is opened before the port: its error is the one reported.
		addr := strings.TrimPrefix(srv.url, "http://")
		err := runWith(context.Background(), []string{"--addr", addr, "--data", dir}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "in use by another interviewd") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrBusyPortLeavesFolderFree", func(t *testing.T) {
		// A listener that fails lets go of the folder opened before it: the next start
		// opens it.
		other := filepath.Join(t.TempDir(), "data")
		addr := strings.TrimPrefix(srv.url, "http://")
		err := runWith(context.Background(), []string{"--addr", addr, "--data", other}, io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), "listen on "+addr) {
			t.Fatalf("got %v", err)
		}
		again := mustBoot(t, "--data", other)
		if err := again.stop(); err != nil {
			t.Fatalf("start after the failed one: %v", err)
		}
	})

	if err := srv.stop(); err != nil {
		t.Fatalf("clean shutdown returned %v", err)
	}
	logs := srv.logs.String()
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
	if status, _ := get(t, srv2.url+"/v1/api/me", key.Secret); status != 401 {
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
	if status, _ := get(t, srv.url+"/v1/api/openapi.json", ""); status != 200 {
		t.Fatalf("openapi: %d", status)
	}
	_ = srv.stop()
	if !strings.Contains(srv.logs.String(), "no organisation yet: create one with `interviewd setup") ||
		!strings.Contains(srv.logs.String(), "signs in at "+srv.url+"/app") {
		t.Fatalf("no first-run hint:\n%s", srv.logs.String())
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
			err := runWith(context.Background(), args, io.Discard, io.Discard, env)
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
		if err := runWith(context.Background(), []string{"setup", "--org", "E", "--email", "e@e.test"}, &out, io.Discard, env); err != nil {
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
		if err := runWith(context.Background(), args, io.Discard, io.Discard, noEnv); err == nil {
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
	if err := runWith(context.Background(), []string{"plugins", "add", "--data", dir, "--org", org.OrgID, "--file", notWasm}, io.Discard, io.Discard, noEnv); err == nil {
		t.Fatal("a file that is not a module was added")
	}
}
