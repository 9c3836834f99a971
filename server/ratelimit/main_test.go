package ratelimit

import (
	"os"
	"testing"

	"interviewd/kv/pgtest"
)

// TestMain stops the PostgreSQL server the several-node tests started, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
