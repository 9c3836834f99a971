package pgengine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"interviewd/kv/internal/engine"
	"interviewd/kv/pgtest"
)

// Every test here runs against a real PostgreSQL server (kv/pgtest): skipped when it is
// not installed, failed when INTERVIEWD_REQUIRE_POSTGRES=1.

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// fenceBucket holds the tests' fence records, as kv's auth_epochs holds credential
// epochs.
const fenceBucket = "fences"

var readGroupBucket = []byte("read_group_test")

// openTest opens an engine on url (a fresh database when url is empty) with its schema
// in place, closed with tb.
func openTest(tb testing.TB, url string, opts Options) *Engine {
	tb.Helper()
	if url == "" {
		url = pgtest.URL(tb)
	}
	if opts.Fences.Bucket == "" {
		opts.Fences.Bucket = fenceBucket
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := Open(ctx, url, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	if err := e.Migrate(ctx, func(engine.Tx) error { return nil }); err != nil {
		tb.Fatal(err)
	}
	return e
}

func openEngine(tb testing.TB) engine.Engine { return openTest(tb, "", Options{}) }

// waitFor polls cond until it holds or a generous deadline passes: the suite runs on
// busy machines, so nothing here depends on how fast a goroutine gets scheduled.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// newKey returns a random 16-byte key (an organisation's id, in kv).
func newKey() []byte {
	k := make([]byte, 16)
	_, _ = rand.Read(k)
	return k
}

// counter reads a fence record as kv reads an epoch: 8 big-endian bytes, 0 when absent.
func counter(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
