package plugins

import (
	"context"
	"os"
	"testing"
)

// sharedCacheDir is the compilation cache the package's tests share, so each module is
// compiled once per test binary rather than once per host.
var sharedCacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "interviewd-plugins-cache-")
	if err != nil {
		panic(err)
	}
	sharedCacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mustHost returns a Host with cfg (on the shared cache unless cfg names another),
// closed when the test ends.
func mustHost(tb testing.TB, cfg Config) *Host {
	tb.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = sharedCacheDir
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
	p, err := h.Builtin(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// mustLoadFile loads the plugin at path into h.
func mustLoadFile(tb testing.TB, h *Host, path string) *Plugin {
	tb.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := h.Load(context.Background(), wasm)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
