package server

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"interviewd/kv/pgtest"
)

// skipped collects why tests that need a program from outside Go (Chromium, the MCP
// Inspector) were skipped, so the package can say so once it has run.
var skipped struct {
	sync.Mutex
	why []string
}

// skipMissing records why t cannot run and skips it.
func skipMissing(t *testing.T, why string) {
	t.Helper()
	skipped.Lock()
	if !slices.Contains(skipped.why, why) {
		skipped.why = append(skipped.why, why)
	}
	skipped.Unlock()
	t.Skip(why)
}

// TestMain prints one line when tests were skipped for a missing program, so nobody
// reads a plain `go test ./...` "ok" as a browser suite that passed.
func TestMain(m *testing.M) {
	code := m.Run()
	stopChromium()
	pgtest.StopShared()
	skipped.Lock()
	why := skipped.why
	skipped.Unlock()
	if len(why) > 0 {
		notice(fmt.Sprintf("interviewd/server: SKIPPED tests: %s\n", strings.Join(why, "; ")))
	}
	os.Exit(code)
}

// notice writes line where the person running the tests sees it. Without -v, go test
// keeps a passing package's output to itself, so the line goes to the go command's own
// standard error (Linux: /proc/PPID/fd/2) when that is a terminal or a pipe, falling
// back to the test's. (Into a regular file it would land at the file's end, under the
// go command's own offset, and be overwritten by its next line.)
func notice(line string) {
	parent := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	if st, err := os.Stat(parent); err == nil && !st.Mode().IsRegular() && !testing.Verbose() {
		if f, err := os.OpenFile(parent, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString(line)
			if cerr := f.Close(); err == nil && cerr == nil {
				return
			}
		}
	}
	fmt.Fprint(os.Stderr, line)
}

// postgresURL returns a fresh database on the test PostgreSQL server, skipping t (and
// saying so once) where PostgreSQL is not installed and not required.
func postgresURL(t *testing.T) string {
	t.Helper()
	if _, err := pgtest.Shared(); err != nil && !pgtest.Required() {
		skipMissing(t, "no PostgreSQL (install Debian's postgresql package)")
	}
	return pgtest.URL(t)
}
