package cmd

import "testing"

// TestStartedByGoRun: only a binary under go run's build folder, or go run's entry in
// the build cache, counts as started by go run; go test's binary and installed binaries
// do not.
func TestStartedByGoRun(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/go-build2771/b001/exe/interviewd":           true,
		"/home/me/.cache/tmp/go-build99/b001/exe/intervd": true,
		// The same build run again, from the build cache.
		"/root/.cache/go-build/3e/3e44bc38c9fd3cf8b3011753c380ad557c7acf5f0aaec46d4b295c00f06e0f07-d/interviewd": true,
		"/root/.cache/go-build/3e/3e44bc38c9fd3cf8b3011753c380ad557c7acf5f0aaec46d4b295c00f06e0f07-a/interviewd": false,
		"/srv/3e/interviewd-d/interviewd":        false,
		"/usr/local/bin/interviewd":              false,
		"/home/me/src/interviewd/interviewd":     false,
		"/tmp/go-build2771/b001/interviewd.test": false, // go test's binary
		"/srv/exe/interviewd":                    false,
	} {
		if got := startedByGoRun(path); got != want {
			t.Errorf("startedByGoRun(%q) = %v, want %v", path, got, want)
		}
	}
}
