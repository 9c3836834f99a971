package wholebinary

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"interviewd/cmd"
	"interviewd/cmd/cmdtest"
	"interviewd/kv/pgtest"
)

// moduleRoot is the folder holding go.mod: where the binary is built from (`go build .`,
// `go run .`, `docker build .`) and where README.md, deploy/ and .git are.
var moduleRoot string

// TestMain finds the module's root, and stops the PostgreSQL server the suite started,
// if any.
func TestMain(m *testing.M) {
	root, err := findModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	moduleRoot = root
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// findModuleRoot walks up from the test's working folder (this package's) to go.mod.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the test's working folder")
		}
		dir = up
	}
}

// inRoot is path (slash-separated) inside the module's root.
func inRoot(path string) string {
	return filepath.Join(moduleRoot, filepath.FromSlash(path))
}

// program is the command line booted in the test's own process (package cmdtest).
var program = cmdtest.Program(cmd.Run)

type booted = cmdtest.Booted

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
