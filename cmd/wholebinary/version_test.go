package wholebinary

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionStamped builds the binary as a packager without VCS information does
// (-buildvcs=false, version and revision given with -ldflags -X) and as a developer
// does in a checkout (plain go build), and runs `version` on each.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	stamped := filepath.Join(dir, "stamped")
	goBuild(t, nil, "-buildvcs=false", "-ldflags", "-X main.version=v9.8.7-test -X main.revision=0123456789abcdef", "-o", stamped, ".")
	if got, want := runVersion(t, stamped), "interviewd v9.8.7-test (revision 0123456789abcdef, "+runtime.Version()+")"; got != want {
		t.Errorf("stamped build: %q, want %q", got, want)
	}

	// The Go toolchain records the revision of a checkout whose .git is a folder (not a
	// worktree's .git file) when git is there to ask.
	if st, err := os.Stat(inRoot(".git")); err != nil || !st.IsDir() {
		t.Skip("not a git checkout with a .git folder: the toolchain records no revision")
	}
	git := exec.Command("git", "rev-parse", "HEAD")
	git.Dir = moduleRoot
	head, err := git.Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v", err)
	}
	plain := filepath.Join(dir, "plain")
	goBuild(t, nil, "-buildvcs=true", "-o", plain, ".")
	got := runVersion(t, plain)
	rev := strings.TrimSpace(string(head))
	if !strings.Contains(got, "(revision "+rev+", ") && !strings.Contains(got, "(revision "+rev+"+dirty, ") {
		t.Errorf("a build in a checkout of %s says %q", rev, got)
	}
	if strings.HasPrefix(got, "interviewd (devel) ") && strings.Contains(got, "unknown") {
		t.Errorf("a build in a checkout recorded nothing: %q", got)
	}
}

// runVersion runs `bin version` and returns its one line.
func runVersion(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}
