package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/plugins/plugintest"
)

// runOut runs one command and returns what it printed and its error text.
func runOut(t *testing.T, env func(string) (string, bool), args ...string) (string, string) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), args, &out, io.Discard, env)
	if err != nil {
		return out.String(), err.Error()
	}
	return out.String(), ""
}

const unknownID = "0190aa00-0000-7000-8000-000000000000"

// TestAdminThroughSocket runs admin commands against a running server and then against
// the stopped folder: the same commands print the same bytes and fail the same way,
// and what they change takes effect in the running server at once.
func TestAdminThroughSocket(t *testing.T) {
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Acme Research", "--email", "owner@acme.test", "--credits", "3")
	srv := mustBoot(t, "--data", dir)

	sock := filepath.Join(dir, "admin.sock")
	t.Run("OK_SocketOwnerOnly", func(t *testing.T) {
		st, err := os.Lstat(sock)
		if err != nil || st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
			t.Fatalf("admin socket: %v %v", st, err)
		}
	})

	t.Run("ErrUnknownOrGarbledRequest", func(t *testing.T) {
		for req, want := range map[string]string{
			`{"args":["serve"]}` + "\n":            `the running server has no admin command "serve"`,
			`{"args":["frobnicate","now"]}` + "\n": `the running server has no admin command "frobnicate now"`,
			"not json\n":                           "unreadable admin request",
		} {
			conn, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(conn, req)
			raw, _ := io.ReadAll(conn)
			conn.Close()
			var f adminFrame
			if err := json.Unmarshal(raw, &f); err != nil || !f.Done || !strings.Contains(f.Error, want) {
				t.Fatalf("%s → %s (%v)", req, raw, err)
			}
		}
	})

	// Changes through the socket reach the server's own database at once.
	var key struct {
		KeyID  string `json:"key_id"`
		Secret string `json:"secret"`
	}
	admin(t, &key, "keys", "create", "--data", dir, "--org", org.OrgID, "--name", "ci", "--env", "live", "--scopes", "studies:read")
	if status, body := get(t, srv.URL+"/v1/api/me", key.Secret); status != 200 || !strings.Contains(body, `"org_name":"Acme Research"`) {
		t.Fatalf("key made through the socket: %d %s", status, body)
	}
	var credits struct {
		Credits int `json:"credits"`
	}
	admin(t, &credits, "credits", "add", "--data", dir, "--org", org.OrgID, "--amount", "4")
	if credits.Credits != 7 {
		t.Fatalf("credits %d", credits.Credits)
	}
	var plugin struct {
		Name string `json:"name"`
	}
	// A relative --file: the client makes it absolute before the server reads it.
	admin(t, &plugin, "plugins", "add", "--data", dir, "--org", org.OrgID, "--file", plugintest.Path(t, plugintest.JSONL))
	if plugin.Name != "jsonl" {
		t.Fatalf("plugin %+v", plugin)
	}
	var revoked map[string]any
	admin(t, &revoked, "keys", "revoke", "--data", dir, "--key", key.KeyID)
	if status, _ := get(t, srv.URL+"/v1/api/me", key.Secret); status != 401 {
		t.Fatalf("key revoked through the socket still works: %d", status)
	}
	// INTERVIEWD_DATA finds the socket too, and the server resolves flags with the
	// client's environment, not its own.
	if out, errText := runOut(t, envData(dir), "orgs", "list"); errText != "" || !strings.Contains(out, "Acme Research") {
		t.Fatalf("orgs list with INTERVIEWD_DATA: %q %s", out, errText)
	}

	reads := [][]string{
		{"orgs", "list"},
		{"credits", "show", "--org", org.OrgID},
		{"keys", "list", "--org", org.OrgID},
		{"plugins", "list", "--org", org.OrgID},
		{"org", "redaction", "--org", org.OrgID, "--phone", "off", "--pattern", "TAG=<tag>&"},
	}
	failures := [][]string{
		{"credits", "show", "--org", unknownID},
		{"keys", "revoke", "--key", unknownID},
		{"setup", "--org", "acme research", "--email", "other@acme.test"},
		{"plugins", "remove", "--org", org.OrgID, "--kind", "redactor", "--name", "none"},
	}
	type result struct{ out, err string }
	runAll := func() map[string]result {
		got := map[string]result{}
		for _, args := range append(reads, failures...) {
			out, errText := runOut(t, noEnv, append(args, "--data", dir)...)
			got[strings.Join(args, " ")] = result{out, errText}
		}
		return got
	}
	online := runAll()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after a clean stop: %v", err)
	}
	offline := runAll()
	for _, args := range reads {
		k := strings.Join(args, " ")
		if online[k].err != "" || online[k].out == "" || online[k] != offline[k] {
			t.Fatalf("%s\nthrough the socket: %+v\ndirectly:           %+v", k, online[k], offline[k])
		}
	}
	for _, args := range failures {
		k := strings.Join(args, " ")
		if online[k].err == "" || online[k].out != "" || online[k] != offline[k] {
			t.Fatalf("%s\nthrough the socket: %+v\ndirectly:           %+v", k, online[k], offline[k])
		}
	}
	if r := online["org redaction --org "+org.OrgID+" --phone off --pattern TAG=<tag>&"]; !strings.Contains(r.out, `"regex": "<tag>&"`) {
		t.Fatalf("output escapes characters: %s", r.out)
	}
	if e := online["setup --org acme research --email other@acme.test"].err; !strings.Contains(e, "already exists with id "+org.OrgID) || !strings.Contains(e, "--allow-duplicate") {
		t.Fatalf("duplicate setup through the socket: %s", e)
	}
	logs := srv.Logs.String()
	for _, name := range []string{"keys create", "credits add", "plugins add", "keys revoke", "orgs list", "credits show"} {
		if !strings.Contains(logs, `"command":"`+name+`"`) {
			t.Fatalf("the server did not run %q:\n%s", name, logs)
		}
	}
}

// staleSocket leaves a socket file at path that nothing listens on, as a crash does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := net.Dial("unix", path); err == nil {
		t.Fatal("the stale socket answers")
	}
}

func TestAdminStaleSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "admin.sock")
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Stale", "--email", "s@s.test")

	t.Run("OK_CommandFallsBackAndRemovesIt", func(t *testing.T) {
		staleSocket(t, sock)
		var orgs []map[string]any
		admin(t, &orgs, "orgs", "list", "--data", dir)
		if len(orgs) != 1 || orgs[0]["org_id"] != org.OrgID {
			t.Fatalf("orgs %v", orgs)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stale socket kept: %v", err)
		}
	})
	t.Run("OK_ServerReplacesIt", func(t *testing.T) {
		staleSocket(t, sock)
		srv := mustBoot(t, "--data", dir)
		if !strings.Contains(srv.Logs.String(), "removed a stale admin socket") {
			t.Fatalf("no notice of the stale socket:\n%s", srv.Logs.String())
		}
		var shown struct {
			Credits *int `json:"credits"`
		}
		admin(t, &shown, "credits", "show", "--data", dir, "--org", org.OrgID)
		if shown.Credits == nil || *shown.Credits != 0 {
			t.Fatalf("credits show %+v", shown)
		}
		if !strings.Contains(srv.Logs.String(), `"command":"credits show"`) {
			t.Fatal("credits show did not go through the server")
		}
	})
}

func TestSetupDuplicateAndOrgs(t *testing.T) {
	dir := t.TempDir()
	var first struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &first, "setup", "--data", dir, "--org", "Acme Research", "--email", "a@acme.test", "--credits", "2")
	_, errText := runOut(t, noEnv, "setup", "--data", dir, "--org", "  ACME research ", "--email", "b@acme.test")
	if want := `setup: an organisation named "Acme Research" already exists with id ` + first.OrgID + ": use that id (`interviewd orgs list` lists every organisation), or pass --allow-duplicate to create another anyway"; errText != want {
		t.Fatalf("got  %s\nwant %s", errText, want)
	}
	var orgs []struct {
		OrgID   string `json:"org_id"`
		Name    string `json:"name"`
		Credits int    `json:"credits"`
	}
	admin(t, &orgs, "orgs", "list", "--data", dir)
	if len(orgs) != 1 || orgs[0].OrgID != first.OrgID || orgs[0].Name != "Acme Research" || orgs[0].Credits != 2 {
		t.Fatalf("after a refused duplicate: %+v", orgs)
	}
	var second struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &second, "setup", "--data", dir, "--org", "Acme Research", "--email", "b@acme.test", "--allow-duplicate")
	admin(t, &orgs, "orgs", "list", "--data", dir)
	if len(orgs) != 2 || orgs[1].OrgID != second.OrgID || orgs[1].Credits != 0 {
		t.Fatalf("after --allow-duplicate: %+v", orgs)
	}
	var shown struct {
		OrgID   string `json:"org_id"`
		Credits int    `json:"credits"`
	}
	admin(t, &shown, "credits", "show", "--data", dir, "--org", first.OrgID)
	if shown.OrgID != first.OrgID || shown.Credits != 2 {
		t.Fatalf("credits show %+v", shown)
	}
	// The documented order, org_id first, as orgs list prints it.
	for _, args := range [][]string{{"credits", "show"}, {"credits", "add", "--amount", "1"}} {
		out, errText := runOut(t, noEnv, append(args, "--data", dir, "--org", first.OrgID)...)
		if errText != "" || !strings.HasPrefix(out, "{\n  \"org_id\": \""+first.OrgID+"\",\n  \"credits\": ") {
			t.Fatalf("%v printed %q %s", args, out, errText)
		}
	}
	if _, errText := runOut(t, noEnv, "credits", "show", "--data", dir, "--org", unknownID); errText != "credits show: no organisation with id "+unknownID+" (interviewd orgs list shows them)" {
		t.Fatalf("unknown org: %s", errText)
	}
}

// TestBadArgumentsTouchNothing: a command that fails its argument checks creates no
// data folder, and says what is wrong in the flags' words.
func TestBadArgumentsTouchNothing(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--log-level", "loud"}, `--log-level "loud": want debug, info, warn or error`},
		{[]string{"serve", "--rate-limits", "read=lots"}, "--rate-limits"},
		{[]string{"serve", "--base-url", "localhost:8080"}, `--base-url "localhost:8080": want an absolute http or https URL`},
		{[]string{"serve", "--addr", "8080"}, `--addr "8080": want host:port or :port`},
		{[]string{"serve", "--port", "1"}, "serve: unknown flag --port"},
		{[]string{"setup"}, "setup: missing --org, --email"},
		{[]string{"setup", "--org", "A", "--email", "<a@a>"}, "setup: --email: Email must be an address like name@example.com."},
		{[]string{"setup", "--org", "A", "--email", "a@a.test", "--credits", "-1"}, "setup: --credits: Credits cannot be negative."},
		{[]string{"keys", "create", "--org", unknownID, "--name", "x", "--env", "live", "--scopes", "studies:read,study:write"},
			`keys create: unknown scope "study:write" (known: ` + strings.Join(kv.AllScopes, ", ") + ")"},
		{[]string{"keys", "create", "--org", unknownID, "--name", "x", "--env", "prod", "--scopes", "studies:read"}, `keys create: --env "prod": want test or live`},
		{[]string{"keys", "create", "--org", unknownID, "--name", "x", "--env", "live", "--scopes", "studies:read", "--expires-days", "7"}, "keys create: --expires-days 7: want 30, 90, 180 or 365"},
		{[]string{"keys", "list", "--org", unknownID}, "keys list: no interviewd data in "},
		{[]string{"keys", "frob"}, `keys: unknown subcommand "frob" (want create, list or revoke)`},
		{[]string{"credits", "add", "--org", unknownID, "--amount", "0"}, "credits add: --amount must be a positive number"},
		{[]string{"credits", "add", "--org", unknownID, "--amount", "x"}, `credits add: --amount "x": not a number`},
		{[]string{"credits", "show", "--org", "acme"}, `credits show: --org "acme" is not a UUID`},
		{[]string{"orgs", "list"}, "orgs list: no interviewd data in "},
		{[]string{"org", "redaction", "--org", unknownID, "--pattern", "lower=x"}, "org redaction: --pattern #1: A pattern name is"},
		{[]string{"org", "redaction", "--org", unknownID, "--email", "maybe"}, `org redaction: --email "maybe": want on or off`},
		{[]string{"plugins", "add", "--org", unknownID, "--file", "missing.wasm"}, "plugins add: --file missing.wasm: not a readable file"},
		{[]string{"plugins", "remove", "--org", unknownID, "--kind", "bogus", "--name", "x"}, `plugins remove: --kind "bogus": want redactor or formatter`},
	}
	escaped := regexp.MustCompile(`\\u00[0-9a-f]{2}`)
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			args := append(append([]string{}, c.args...), "--data", data)
			_, errText := runOut(t, noEnv, args...)
			if !strings.Contains(errText, c.want) || escaped.MatchString(errText) {
				t.Fatalf("got  %s\nwant %s", errText, c.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%q created %s", c.args, data)
			}
		})
	}
}

func TestAbsPaths(t *testing.T) {
	wd, _ := os.Getwd()
	got := absPaths([]string{"--org", "x", "--file", "a.wasm", "-file=b.wasm", "--file=/abs/c.wasm", "--name", "file", "--", "--file", "d"}, []string{"file"})
	want := []string{"--org", "x", "--file", filepath.Join(wd, "a.wasm"), "-file=" + filepath.Join(wd, "b.wasm"), "--file=/abs/c.wasm", "--name", "file", "--", "--file", "d"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestAdminCloseCutsOffIdleConnections: a client that connects to the admin socket and
// sends nothing must not hold up the server's stop. The request timeout is made far
// longer than the test's deadline, so only cutting the connection off can pass.
func TestAdminCloseCutsOffIdleConnections(t *testing.T) {
	db, err := kv.Open(t.TempDir(), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := listenAdminTimeout(context.Background(), db, zerolog.Nop(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", a.path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A command that runs still gets its answer: the socket serves before Close.
	var out bytes.Buffer
	busy, err := net.Dial("unix", a.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := remoteAdmin(busy, orgsListRowForTest(t), nil, nil, &out); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Fatalf("orgs list through the socket: %q %v", out.String(), err)
	}
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close waits for a connection that never sends its request")
	}
	raw, _ := io.ReadAll(conn)
	var f adminFrame
	if err := json.Unmarshal(raw, &f); err != nil || !f.Done || f.Error != errAdminStopping.Error() {
		t.Fatalf("the idle connection got %q (%v)", raw, err)
	}
	if _, err := os.Lstat(a.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}
}

func orgsListRowForTest(t *testing.T) *command {
	t.Helper()
	cmd, _ := findCommand(commands(), []string{"orgs", "list"})
	if cmd == nil {
		t.Fatal("no orgs list command")
	}
	return cmd
}

func TestAdminSocketBindAndPeer(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := listenAdminTimeout(context.Background(), db, zerolog.Nop(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The owner-only folder the socket was bound in is gone; the socket is 0600.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".admin-") {
			t.Errorf("bind folder %s left behind", e.Name())
		}
	}
	if st, err := os.Stat(a.path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", st, err)
	}
	// This process's own user passes the peer check and gets its answer.
	conn, err := net.Dial("unix", a.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPeer(conn); err != nil {
		t.Errorf("own user refused: %v", err)
	}
	var out bytes.Buffer
	if err := remoteAdmin(conn, orgsListRowForTest(t), nil, nil, &out); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Fatalf("orgs list through the socket: %q %v", out.String(), err)
	}
	for _, c := range []struct {
		uid, self uint32
		want      bool
	}{{1000, 1000, true}, {0, 1000, true}, {1001, 1000, false}, {1000, 0, false}, {0, 0, true}} {
		if got := peerAllowed(c.uid, c.self); got != c.want {
			t.Errorf("peerAllowed(%d, %d) = %v, want %v", c.uid, c.self, got, c.want)
		}
	}
}
