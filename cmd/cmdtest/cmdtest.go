// Package cmdtest boots interviewd's command line inside the test's own process, for the
// tests of package cmd and for the whole-binary suites (cmd/wholebinary): serve on a
// loopback port, waited for until it logs its address and stopped when the test ends,
// and admin commands whose JSON output is decoded. It is handed the program to run
// (cmd.Run) rather than importing it, so that package cmd's own tests can use it.
package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Program is the command line with its outputs and environment injected: cmd.Run.
type Program func(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) error

// SyncBuffer is a bytes.Buffer safe for the server's log goroutines and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NoEnv is an environment with no variable set.
func NoEnv(string) (string, bool) { return "", false }

// Admin runs one admin command and decodes its JSON output into v.
func (p Program) Admin(t testing.TB, v any, args ...string) {
	t.Helper()
	var out bytes.Buffer
	if err := p(context.Background(), args, &out, io.Discard, NoEnv); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("%v printed %q: %v", args, out.String(), err)
	}
}

// Booted is a running program.
type Booted struct {
	URL  string // http://127.0.0.1:PORT
	Logs *SyncBuffer
	// Stop ends the run and waits for it; it may be called more than once.
	Stop func() error
}

// BootWait bounds the waits around a booted program: its address appearing and its
// stop. It is generous because the suite runs on loaded machines under the race
// detector; a healthy run never comes near it.
const BootWait = 2 * time.Minute

// Boot runs the real program's serve command on 127.0.0.1:0 and waits for it to log
// its address. However the test ends, the program is stopped and waited for before the
// next test starts, so no server outlives its test.
func (p Program) Boot(t testing.TB, args ...string) *Booted {
	t.Helper()
	return p.BootEnv(t, NoEnv, args...)
}

// BootEnv is Boot with the environment env.
func (p Program) BootEnv(t testing.TB, env func(string) (string, bool), args ...string) *Booted {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- p(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, logs, env)
	}()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(BootWait):
				stopErr = fmt.Errorf("server did not stop within %s of its stop signal", BootWait)
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil && !errors.Is(err, errExitedEarly) {
			t.Errorf("stopping the server: %v", err)
		}
	})
	addrRe := regexp.MustCompile(`"addr":"([^"]+)"`)
	deadline := time.Now().Add(BootWait)
	for {
		if m := addrRe.FindStringSubmatch(logs.String()); m != nil {
			return &Booted{URL: "http://" + m[1], Logs: logs, Stop: stop}
		}
		select {
		case err := <-done:
			stopErr = errExitedEarly
			once.Do(func() {})
			t.Fatalf("server exited early: %v\n%s", err, logs.String())
		case <-time.After(5 * time.Millisecond): // poll the log for the address
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never logged its address within %s:\n%s", BootWait, logs.String())
		}
	}
}

// errExitedEarly marks a server that exited before logging its address: nothing is
// left to stop.
var errExitedEarly = errors.New("server exited early")

// Get fetches url, with key as the bearer token when it is not empty, and returns the
// status and the body.
func Get(t testing.TB, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
