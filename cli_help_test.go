package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
		if err := runWith(context.Background(), args, &out, io.Discard, envData(data)); err != nil {
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
	if err := runWith(context.Background(), []string{"version"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	v := readVersion()
	if out.String() != v.String()+"\n" || !strings.HasPrefix(out.String(), "interviewd ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Fatalf("version printed %q", out.String())
	}
}

// TestMainExitStatus runs the real main in a child process: help exits 0, mistakes 1.
func TestMainExitStatus(t *testing.T) {
	if args, ok := os.LookupEnv("IVD_TEST_MAIN_ARGS"); ok {
		os.Args = append([]string{"interviewd"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
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
