package cmd

import "testing"

// TestStartedByGoRun: only a binary under go run's build folder counts as started by
// go run; go test's binary and installed binaries do not.
func TestStartedByGoRun(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/go-build2771/b001/exe/interviewd":           true,
		"/home/me/.cache/tmp/go-build99/b001/exe/intervd": true,
		"/usr/local/bin/interviewd":                       false,
		"/home/me/src/interviewd/interviewd":              false,
		"/tmp/go-build2771/b001/interviewd.test":          false, // go test's binary
		"/srv/exe/interviewd":                             false,
	} {
		if got := startedByGoRun(path); got != want {
			t.Errorf("startedByGoRun(%q) = %v, want %v", path, got, want)
		}
	}
}
