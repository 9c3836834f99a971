package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionOf: the toolchain's record (module version, VCS revision, a modified tree)
// is read, and -ldflags -X values win over it.
func TestVersionOf(t *testing.T) {
	recorded := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	cases := []struct {
		name             string
		info             *debug.BuildInfo
		ok               bool
		stampV, stampR   string
		wantVer, wantRev string
	}{
		{"OK_Recorded", recorded, true, "", "", "v1.2.3", "abc123+dirty"},
		{"OK_NothingRecorded", nil, false, "", "", "(devel)", "unknown"},
		{"OK_NoVCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "", "", "(devel)", "unknown"},
		{"OK_StampedWins", recorded, true, "v2.0.0", "def456", "v2.0.0", "def456"},
		{"OK_StampedWithoutBuildInfo", nil, false, "v2.0.0", "def456", "v2.0.0", "def456"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			version, revision = c.stampV, c.stampR
			t.Cleanup(func() { version, revision = "", "" })
			v := versionOf(c.info, c.ok)
			if v.Version != c.wantVer || v.Revision != c.wantRev || v.Go != runtime.Version() {
				t.Fatalf("got %+v, want %s %s", v, c.wantVer, c.wantRev)
			}
		})
	}
}

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
	if st, err := os.Stat(".git"); err != nil || !st.IsDir() {
		t.Skip("not a git checkout with a .git folder: the toolchain records no revision")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
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
