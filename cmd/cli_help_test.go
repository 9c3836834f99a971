package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// envData is an environment whose only variable points --data at dir.
func envData(dir string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "INTERVIEWD_DATA" {
			return dir, true
		}
		return "", false
	}
}

// TestHelpEveryCommand walks the command table, so a command added later is covered.
func TestHelpEveryCommand(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	help := func(t *testing.T, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := Run(context.Background(), args, &out, io.Discard, envData(data)); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return out.String()
	}
	for _, c := range commands() {
		words := strings.Fields(c.name)
		forms := [][]string{
			append(append([]string{}, words...), "--help"),
			append(append([]string{}, words...), "-h"),
			append([]string{"help"}, words...),
		}
		for _, args := range forms {
			t.Run(strings.Join(args, "_"), func(t *testing.T) {
				out := help(t, args...)
				if !strings.HasPrefix(out, "usage: interviewd "+c.name) {
					t.Fatalf("%q printed:\n%s", args, out)
				}
				if c.define != nil && !strings.Contains(out, "--data") {
					t.Fatalf("admin command %q lists no --data:\n%s", c.name, out)
				}
				// No trailing blanks (a command without flags in its synopsis) and no
				// "flags:" heading over nothing (version).
				if strings.Contains(out, " \n") || strings.HasSuffix(out, "flags:\n") {
					t.Fatalf("%q printed a ragged usage:\n%q", args, out)
				}
			})
		}
	}
	t.Run("OK_TopLevel", func(t *testing.T) {
		for _, arg := range []string{"--help", "-h", "help"} {
			out := help(t, arg)
			for _, c := range commands() {
				if !strings.Contains(out, "interviewd "+c.name+" ") {
					t.Fatalf("%s does not list %q:\n%s", arg, c.name, out)
				}
			}
		}
	})
	t.Run("OK_Groups", func(t *testing.T) {
		for _, group := range []string{"keys", "credits", "orgs", "org", "plugins"} {
			out := help(t, group, "--help")
			for _, c := range commands() {
				if strings.HasPrefix(c.name, group+" ") != strings.Contains(out, "interviewd "+c.name+" ") {
					t.Fatalf("%s --help and %q:\n%s", group, c.name, out)
				}
			}
		}
	})
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("help created the data folder: %v", err)
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"version"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	v := readVersion()
	if out.String() != v.String()+"\n" || !strings.HasPrefix(out.String(), "interviewd ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Fatalf("version printed %q", out.String())
	}
}

// TestMainExitStatus runs the real Main in a child process: help exits 0, mistakes 1.
func TestMainExitStatus(t *testing.T) {
	if args, ok := os.LookupEnv("IVD_TEST_MAIN_ARGS"); ok {
		os.Exit(Main(strings.Split(args, "\x1f"), Stamp{}))
	}
	data := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		args     []string
		code     int
		stdout   string
		stderr   string
		wantData bool
	}{
		{[]string{"--help"}, 0, "interviewd keys create ", "", false},
		{[]string{"-h"}, 0, "usage:", "", false},
		{[]string{"help"}, 0, "usage:", "", false},
		{[]string{"serve", "--help"}, 0, "usage: interviewd serve", "", false},
		{[]string{"keys", "create", "--help"}, 0, "usage: interviewd keys create", "", false},
		{[]string{"version"}, 0, runtime.Version(), "", false},
		{[]string{"--version"}, 0, runtime.Version(), "", false},
		{[]string{"launch"}, 1, "", `interviewd: unknown command "launch"`, false},
		{[]string{"keys", "create", "--data", data, "--org", "acme"}, 1, "", "interviewd: keys create: missing --name, --env, --scopes", false},
		{[]string{"--data", data, "--log-level", "loud"}, 1, "", `interviewd: --log-level "loud"`, false},
		{[]string{"setup", "--data", data, "--org", "A", "--email", "a@a.test"}, 0, `"org_id"`, "", true},
		// The Quickstart pasted a second time: the organisation is there; say where to look.
		{[]string{"setup", "--data", data, "--org", "A", "--email", "a@a.test"}, 1, "", "interviewd: setup: an organisation named \"A\" already exists with id ", true},
		{[]string{"setup", "--data", data, "--org", "A", "--email", "a@a.test"}, 1, "", "use that id (`interviewd orgs list` lists every organisation)", true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
			cmd.Env = append(os.Environ(), "IVD_TEST_MAIN_ARGS="+strings.Join(c.args, "\x1f"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
			}
			if _, err := os.Stat(data); c.wantData != (err == nil) {
				t.Fatalf("data folder exists=%v after %q", err == nil, c.args)
			}
		})
	}
}

// TestHelpEveryFlag reads every command's --help: each flag's line names its argument
// with a real name (never a Go type, nor words lifted from its help), the name the
// command's synopsis gives it where the synopsis shows it; every flag the synopsis
// shows exists; and no default reads "(default default)".
func TestHelpEveryFlag(t *testing.T) {
	flagLine := regexp.MustCompile(`^  --([a-z0-9-]+)(?: (\S+))?$`)
	synopsisFlag := regexp.MustCompile(`--([a-z0-9-]+)(?: ([^\s\[\]()-][^\s\[\]()]*))?`)
	generic := map[string]bool{"string": true, "int": true, "value": true, "VALUE": true, "bool": true, "duration": true, "float": true, "uint": true}
	checked := 0
	for _, c := range commands() {
		var out bytes.Buffer
		if err := Run(context.Background(), append(strings.Fields(c.name), "--help"), &out, io.Discard, noEnv); err != nil {
			t.Fatalf("%s --help: %v", c.name, err)
		}
		usage, rest, _ := strings.Cut(out.String(), "\n")
		synopsis := strings.TrimPrefix(usage, "usage: interviewd "+c.name)
		shown := map[string]string{} // flag → argument, as the synopsis shows them
		for _, m := range synopsisFlag.FindAllStringSubmatch(synopsis, -1) {
			shown[m[1]] = m[2]
		}
		listed := map[string]bool{}
		_, flags, _ := strings.Cut(rest, "\nflags:\n")
		lines := strings.Split(flags, "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "  --") {
				continue
			}
			m := flagLine.FindStringSubmatch(lines[i])
			if m == nil {
				t.Errorf("%s: flag line %q is not --NAME [ARG]", c.name, lines[i])
				continue
			}
			name, arg := m[1], m[2]
			listed[name] = true
			checked++
			if generic[arg] {
				t.Errorf("%s --%s: argument named %q, a type, not what to give", c.name, name, arg)
			}
			if want, ok := shown[name]; ok && want != "" && arg != want {
				t.Errorf("%s --%s: argument %q, but the synopsis says %q", c.name, name, arg, want)
			}
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "      ") || strings.TrimSpace(lines[i+1]) == "" {
				t.Errorf("%s --%s: no help line", c.name, name)
				continue
			}
			if help := lines[i+1]; strings.Contains(help, "(default default)") || strings.Contains(help, "(default )") {
				t.Errorf("%s --%s: %s", c.name, name, help)
			}
		}
		for name := range shown {
			if !listed[name] {
				t.Errorf("%s: the synopsis shows --%s, which the command does not have", c.name, name)
			}
		}
	}
	if checked < 60 {
		t.Fatalf("checked %d flag lines: the usage format changed under this test", checked)
	}
}

// TestUnknownFlagSuggests: a misspelt flag or command is answered with the one meant.
func TestUnknownFlagSuggests(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--adr", ":9"}, "serve: unknown flag --adr; did you mean --addr?"},
		{[]string{"serve", "-adr", ":9"}, "serve: unknown flag --adr; did you mean --addr?"},
		{[]string{"--smtp", "smtp://x"}, "serve: unknown flag --smtp; did you mean --smtp-url?"},
		{[]string{"--log-levle", "debug"}, "serve: unknown flag --log-levle; did you mean --log-level?"},
		{[]string{"keys", "create", "--scope", "x"}, "keys create: unknown flag --scope; did you mean --scopes?"},
		{[]string{"setup", "--orgs", "x"}, "setup: unknown flag --orgs; did you mean --org?"},
		{[]string{"--frobnicate"}, "serve: unknown flag --frobnicate (try: interviewd serve --help)"},
		{[]string{"setpu"}, `unknown command "setpu"; did you mean setup?`},
		{[]string{"key", "list"}, `unknown command "key"; did you mean keys?`},
		{[]string{"launch"}, `unknown command "launch" (try: interviewd help)`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			err := Run(context.Background(), append(c.args, "--data", data), io.Discard, io.Discard, noEnv)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a mistyped command touched the data folder: %v", err)
	}
}
