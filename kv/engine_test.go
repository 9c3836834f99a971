package kv

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"interviewd/kv/pgtest"
)

// testPostgres is set for the second round of the suite: the same tests over the
// PostgreSQL engine (one conformance suite for every engine).
var testPostgres bool

func TestMain(m *testing.M) {
	code := m.Run()
	if pgtest.Available("kv: the round against PostgreSQL") {
		testPostgres = true
		fmt.Fprintln(os.Stderr, "kv: the same suite against PostgreSQL")
		if c := m.Run(); c != 0 {
			code = c
		}
		pgtest.StopShared()
	}
	os.Exit(code)
}

// testOptions returns opts for the round's engine: on PostgreSQL a fresh database,
// dropped with tb.
func testOptions(tb testing.TB, opts Options) Options {
	tb.Helper()
	if testPostgres {
		opts.Store = pgtest.URL(tb)
	}
	return opts
}

// boltOnly skips tb in the PostgreSQL round: it tests what only bbolt has (the file, its
// lock and backups, the group commit, the per-process credential cache).
func boltOnly(tb testing.TB) {
	tb.Helper()
	if testPostgres {
		tb.Skip("bbolt engine only")
	}
}

// testStores maps a data folder to its PostgreSQL database in that round, so a test that
// closes and reopens a folder reopens the same store.
var testStores sync.Map

// testOptionsAt is testOptions for a store a test reopens at dir.
func testOptionsAt(tb testing.TB, dir string, opts Options) Options {
	tb.Helper()
	if testPostgres {
		u, ok := testStores.Load(dir)
		if !ok {
			u = pgtest.URL(tb)
			testStores.Store(dir, u)
		}
		opts.Store = u.(string)
	}
	return opts
}
