package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// maxStrippedBytes is the goal for `go build -trimpath -ldflags='-s -w'` on
// linux/amd64 (the binary is about 25.2 MB, 2.4 MB of it the Prometheus client with
// its protobuf data model). What keeps it there: templates call no methods (a
// reachable method lookup by name alone adds about 6.5 MB), the PostgreSQL engine runs
// on pgx's wire layer without its type system (2.8 MB), and the CSV plugin is
// embedded as a patch from the redactor.
const maxStrippedBytes = 26_000_000

// TestBinarySize builds the server as the README measures it. It fails when a function
// that looks methods up by a name known only at run time (reflect's Method or
// MethodByName; text/template's field evaluation is one) is reachable outside package
// reflect: the linker then keeps every exported method of every type that may reach an
// interface. And it fails when the stripped binary outgrows maxStrippedBytes.
func TestBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the bound is for linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	dir := t.TempDir()

	dump := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -dumpdep", "-o", filepath.Join(dir, "dumpdep"), ".")
	dump.Env = append(os.Environ(), "GOFLAGS=")
	out, err := dump.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -dumpdep: %v\n%.2000s", err, out)
	}
	lookups := map[string]bool{}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines++
		from, _, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		if fn, marked := strings.CutSuffix(from, " <ReflectMethod>"); marked && !strings.HasPrefix(fn, "reflect.") {
			lookups[fn] = true
		}
	}
	if lines < 10000 {
		t.Fatalf("the linker dumped %d lines: -dumpdep no longer lists dependencies", lines)
	}
	for fn := range lookups {
		t.Errorf("%s looks methods up by a run-time name: every exported method stays linked", fn)
	}

	bin := filepath.Join(dir, "interviewd")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stripped binary: %d bytes", fi.Size())
	if fi.Size() > maxStrippedBytes {
		t.Errorf("stripped binary is %d bytes, more than %d: see what was linked with `go tool nm -size -sort size`", fi.Size(), maxStrippedBytes)
	}
}
