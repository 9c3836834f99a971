package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestMeasureExec builds and runs the real binary and the bare one: both answer 200
// from exec, interviewd stops cleanly on SIGTERM (exit 0, within stopDeadline), and
// every figure is measured.
func TestMeasureExec(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	f, err := measureExec(context.Background(), 1, 0, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.Runs != 1 || f.First200 <= 0 || f.BareFirst <= 0 || f.Stop <= 0 || f.StopMax < f.Stop || f.ratio() <= 0 {
		t.Errorf("timings %+v", f)
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
