package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// sharedCacheDir is where the package's tests keep compiled code, shared with the
// other packages' tests and kept between runs of the suite (wazero writes each entry
// atomically, so test binaries running side by side share it safely). sharedCache is
// one cache on it for every host of the test binary: a module compiled for one test
// is in memory for the next, so each is compiled once per suite, not once per host.
var (
	sharedCacheDir = filepath.Join(os.TempDir(), "interviewd-test-plugin-cache")
	sharedCache    wazero.CompilationCache
)

func TestMain(m *testing.M) {
	var err error
	if sharedCache, err = wazero.NewCompilationCacheWithDir(sharedCacheDir); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = sharedCache.Close(context.Background())
	os.Exit(code)
}

// mustHost returns a Host with cfg (on the shared cache unless cfg names a cache
// folder), closed when the test ends.
func mustHost(tb testing.TB, cfg Config) *Host {
	tb.Helper()
	if cfg.CacheDir == "" {
		cfg.Cache = sharedCache
	}
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return h
}

// mustBuiltin returns the built-in plugin name from h.
func mustBuiltin(tb testing.TB, h *Host, name string) *Plugin {
	tb.Helper()
	return loadPatiently(tb, name, func() (*Plugin, error) { return h.Builtin(context.Background(), name) })
}

// mustLoadFile loads the plugin at path into h.
func mustLoadFile(tb testing.TB, h *Host, path string) *Plugin {
	tb.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return loadPatiently(tb, path, func() (*Plugin, error) { return h.Load(context.Background(), wasm) })
}

// loadPatiently returns what load loads. A host with a short run timeout may time a
// plugin's describe out on a loaded machine: that says nothing about the plugin, so it
// is loaded again, for up to two minutes, as checkRedactorWorks does for runs.
func loadPatiently(tb testing.TB, what string, load func() (*Plugin, error)) *Plugin {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := load()
		var pe *Error
		if errors.As(err, &pe) && pe.Reason == ReasonTimeout && time.Now().Before(deadline) {
			tb.Logf("loading %s timed out on a busy machine; loading it again", what)
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
}
