package boltengine

import (
	"path/filepath"
	"testing"

	"interviewd/kv/internal/engine"
	"interviewd/kv/internal/engine/enginetest"
)

// openTest opens an engine on a fresh file in tb's temp folder, closed with tb.
func openTest(tb testing.TB, opts Options) *Engine {
	tb.Helper()
	e, err := Open(filepath.Join(tb.TempDir(), "test.db"), opts, func(engine.Tx) error { return nil })
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	return e
}

func openEngine(tb testing.TB) engine.Engine { return openTest(tb, Options{}) }

func TestConformance(t *testing.T) { enginetest.Run(t, openEngine) }

// Solo commits keep the same contract.
func TestConformance_Solo(t *testing.T) {
	enginetest.Run(t, func(tb testing.TB) engine.Engine { return openTest(tb, Options{Solo: true}) })
}

func BenchmarkView(b *testing.B) { enginetest.BenchmarkView(b, openEngine) }
