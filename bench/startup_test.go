package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"interviewd/kv"
)

// execTestTimeout bounds a whole exec measurement in tests: builds, a seed and a few
// process lives, each of which has its own deadline besides.
const execTestTimeout = 5 * time.Minute

// TestMeasureExec builds and runs the real binary and the bare one: both answer 200
// from exec, on an empty folder and on a copy of one seeded with studies, interviewd
// stops cleanly on SIGTERM (exit 0, within stopDeadline), and every figure is measured.
func TestMeasureExec(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), execTestTimeout)
	defer cancel()
	f, err := measureExec(ctx, execOptions{Runs: 1, Studies: 200}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.Runs != 1 || f.First200 <= 0 || f.BareFirst <= 0 || f.Stop <= 0 || f.StopMax < f.Stop || f.ratio() <= 0 {
		t.Errorf("timings %+v", f)
	}
	if f.ExistingStudies != 200 || f.First200Existing <= 0 {
		t.Errorf("existing folder: %+v", f)
	}
	if f.IdleRSSAnon <= 0 || f.Binary <= f.BareBinary || f.BareBinary <= 0 {
		t.Errorf("sizes %+v", f)
	}
}

// TestPollPause: a pause between probes lasts at least what was asked (how much longer
// depends on the machine's load, so only the floor is checked).
func TestPollPause(t *testing.T) {
	for _, d := range []time.Duration{100 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		pollPause(d)
		if got := time.Since(start); got < d {
			t.Errorf("pollPause(%s) returned after %s", d, got)
		}
	}
}

// TestMeasureExecBinary: with a prebuilt binary, that binary is the one exec'd and
// sized, and without studies the existing-folder figure is skipped.
func TestMeasureExecBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), execTestTimeout)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "prebuilt-interviewd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "interviewd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	size, err := fileSize(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := measureExec(ctx, execOptions{Runs: 1, Binary: bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.Binary != size || f.First200 <= 0 || f.BareBinary <= 0 {
		t.Errorf("figures %+v, want binary=%d", f, size)
	}
	if f.ExistingStudies != 0 || f.First200Existing != 0 {
		t.Errorf("existing folder measured without studies: %+v", f)
	}
}

// TestSeedFolder: the seeded folder opens as an interviewd data folder holding one
// organisation and exactly the n briefs briefFor makes, each once, although they were
// created concurrently.
func TestSeedFolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), execTestTimeout)
	defer cancel()
	const n = 200
	dst := filepath.Join(t.TempDir(), "data")
	if err := seedFolder(ctx, dst, n); err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(dst, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	orgs, err := db.FindOrgs(ctx)
	if err != nil || len(orgs) != 1 {
		t.Fatalf("organisations %v, %v", orgs, err)
	}
	want := map[string]int{}
	for i := range n {
		want[*briefFor(i).Title]++
	}
	f := kv.StudyFilter{Partition: kv.Partition{Org: orgs[0].ID, Env: kv.EnvLive}, Limit: 100}
	for {
		page, err := db.FindStudies(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Items {
			want[s.Name]--
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	for name, left := range want {
		if left != 0 {
			t.Errorf("study %q: %d missing (negative: extra)", name, left)
		}
	}
}
