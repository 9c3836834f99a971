// Package plugintest builds the test plugins under plugins/testdata (jsonl, an example
// export formatter, and sandbox, a module that tries to escape its sandbox) for the
// tests of any package. They are compiled from their sources with the Go toolchain, as
// an organisation would build its own plugin, so no built module is kept in the tree.
package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Names of the test plugins: folders under plugins/testdata.
const (
	JSONL   = "jsonl"
	Sandbox = "sandbox"
)

// built is one test plugin's build, done once per test binary.
type built struct {
	once sync.Once
	path string
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*built{}
)

// Path returns the path of the test plugin name (JSONL or Sandbox) compiled for
// wasip1. The first call in a test binary builds it; later calls, from any test or
// goroutine, return the same file. It fails tb when the plugin does not build.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	mu.Lock()
	b := builds[name]
	if b == nil {
		b = &built{}
		builds[name] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.path, b.err = build(name) })
	if b.err != nil {
		tb.Fatalf("build the test plugin %s: %v", name, b.err)
	}
	return b.path
}

// Wasm returns the bytes of the test plugin name, as Path builds it.
func Wasm(tb testing.TB, name string) []byte {
	tb.Helper()
	wasm, err := os.ReadFile(Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return wasm
}

// build compiles plugins/testdata/name and returns where the module is. Modules are
// kept in one folder of the system's temporary folder under a name carrying a hash of
// their bytes: test binaries running side by side (of this tree or another checkout
// with other sources) each get the module they built, and an unchanged plugin adds no
// file run after run. Go's build cache makes every build after the first a link.
func build(name string) (string, error) {
	if name != JSONL && name != Sandbox {
		return "", fmt.Errorf("no test plugin %q (want %s or %s)", name, JSONL, Sandbox)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the Go toolchain is not on PATH: %w", err)
	}
	dir := filepath.Join(os.TempDir(), "interviewd-test-plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, name+"-*.building")
	if err != nil {
		return "", err
	}
	out := tmp.Name()
	_ = tmp.Close()
	defer os.Remove(out) // left only when something below failed
	cmd := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-o", out, "interviewd/plugins/testdata/"+name)
	// GOFLAGS is cleared so that flags meant for the test binary (-race, -cover) do not
	// reach a wasip1 build that cannot take them.
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWASM=", "GOFLAGS=", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("GOOS=wasip1 GOARCH=wasm go build interviewd/plugins/testdata/%s: %v\n%s", name, err, strings.TrimSpace(string(msg)))
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(wasm)
	path := filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:8])+".wasm")
	if err := os.Rename(out, path); err != nil {
		return "", err
	}
	return path, nil
}
