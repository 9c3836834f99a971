package main

import (
	"context"
	"io"
	"testing"
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
