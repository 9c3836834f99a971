package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const tinyDescriptor = `{"kind":"formatter","name":"tiny","media_type":"text/plain","abi_version":1}`

func TestLoadRefuses(t *testing.T) {
	h := mustHost(t, Config{})
	tests := []struct {
		name    string
		wasm    []byte
		reason  Reason
		wantMsg string
	}{
		{"ErrNotWasm", []byte("#!/bin/sh\necho hi\n"), ReasonInvalid, "not a valid WebAssembly module"},
		{"ErrEnvImport", wasmModule{
			imports: []wasmImport{{"env", "foo", typeVoid}},
			code:    callFunc(0),
		}.bytes(), ReasonInvalid, "imports env.foo; a plugin may import only wasi_snapshot_preview1"},
		{"ErrEnvImportBesideWASI", wasmModule{
			imports: []wasmImport{{"wasi_snapshot_preview1", "proc_exit", typeI32}, {"env", "now", typeVoid}},
		}.bytes(), ReasonInvalid, "imports env.now"},
		{"ErrUnknownWASIFunction", wasmModule{
			imports: []wasmImport{{"wasi_snapshot_preview1", "not_a_function", typeVoid}},
		}.bytes(), ReasonInvalid, "not a WASI preview 1 function"},
		{"ErrMemoryImport", wasmModule{memImport: true, noMemExport: true}.bytes(), ReasonInvalid, "imports memory env.memory"},
		{"ErrNoStart", wasmModule{noStart: true}.bytes(), ReasonInvalid, `does not export "_start"`},
		{"ErrNoMemoryExport", wasmModule{noMemExport: true}.bytes(), ReasonInvalid, `does not export "memory"`},
		{"ErrMemoryOverLimit", wasmModule{memPages: 2000}.bytes(), ReasonInvalid, "over limit"},
		{"ErrTrapInDescribe", wasmModule{code: []byte{opUnreachable}}.bytes(), ReasonTrap, "unreachable"},
		{"ErrExitInDescribe", wasmModule{
			imports: []wasmImport{{"wasi_snapshot_preview1", "proc_exit", typeI32}},
			code:    append(i32Const(3), callFunc(0)...),
		}.bytes(), ReasonExit, "exited with code 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := h.Load(context.Background(), tc.wasm)
			if p != nil {
				t.Fatalf("Load returned a plugin %+v", p.Descriptor())
			}
			pe := wantPluginError(t, err, tc.reason, tc.wantMsg)
			if pe.Op != "load" && pe.Op != "describe" {
				t.Errorf("Op = %q, want load or describe", pe.Op)
			}
		})
	}
	// The host still works.
	if _, err := h.Load(context.Background(), printer(tinyDescriptor)); err != nil {
		t.Fatalf("Load after refusals: %v", err)
	}
}

func TestLoadSameBytesShareCode(t *testing.T) {
	h := mustHost(t, Config{})
	ctx := context.Background()
	wasm := printer(tinyDescriptor)
	a, err := h.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	n := len(h.compiled.byHash)
	h.mu.Unlock()
	if n != 1 || a.Hash() != b.Hash() || a.Descriptor() != b.Descriptor() {
		t.Fatalf("two loads of the same bytes: %d compiled entries, hashes %s %s", n, a.Hash(), b.Hash())
	}
	wasm[len(wasm)-1] ^= 0xff // the caller's slice is not the plugin's
	var out bytes.Buffer
	if err := a.Format(ctx, nil, nil, &out); err != nil || out.String() != tinyDescriptor {
		t.Fatalf("Format after the caller changed its bytes = %q, %v", out.String(), err)
	}
}

// cacheFiles returns name, size and modification time of every file under dir.
func cacheFiles(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files[path] = fmt.Sprint(info.ModTime(), info.Size())
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func TestCompilationCacheOnDisk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	wasm := printer(tinyDescriptor)

	first := mustHost(t, Config{CacheDir: dir})
	if _, err := first.Load(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	written := cacheFiles(t, dir)
	if len(written) == 0 {
		t.Fatalf("the cache folder %s is empty after a compilation", dir)
	}

	second := mustHost(t, Config{CacheDir: dir})
	p, err := second.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Format(ctx, nil, nil, &out); err != nil || out.String() != tinyDescriptor {
		t.Fatalf("Format = %q, %v", out.String(), err)
	}
	// A cache miss would have compiled again and written the entry anew.
	if again := cacheFiles(t, dir); len(again) != len(written) {
		t.Fatalf("cache folder changed from %v to %v: the second host recompiled", written, again)
	} else {
		for path, stamp := range written {
			if again[path] != stamp {
				t.Fatalf("cache entry %s was rewritten: the second host recompiled", path)
			}
		}
	}
}

func TestEvictedPluginStillRuns(t *testing.T) {
	h := mustHost(t, Config{MaxLoaded: 1})
	ctx := context.Background()
	descA := `{"kind":"formatter","name":"tiny-a","media_type":"text/plain","abi_version":1}`
	a, err := h.Load(ctx, printer(descA))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Load(ctx, printer(tinyDescriptor)); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	_, kept := h.compiled.byHash[a.hash]
	n := h.compiled.recency.Len()
	h.mu.Unlock()
	if kept || n != 1 {
		t.Fatalf("after loading two plugins with MaxLoaded 1: first kept=%v, %d entries", kept, n)
	}
	var out bytes.Buffer
	if err := a.Format(ctx, nil, nil, &out); err != nil || out.String() != descA {
		t.Fatalf("Format of the evicted plugin = %q, %v", out.String(), err)
	}
}

func TestBuiltinsStayLoaded(t *testing.T) {
	h := mustHost(t, Config{MaxLoaded: 1})
	ctx := context.Background()
	red := mustBuiltin(t, h, BuiltinRedactor)
	csv := mustBuiltin(t, h, BuiltinCSV)
	if _, err := h.Load(ctx, printer(tinyDescriptor)); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	_, redKept := h.compiled.byHash[red.hash]
	_, csvKept := h.compiled.byHash[csv.hash]
	h.mu.Unlock()
	if !redKept || !csvKept {
		t.Fatalf("built-ins evicted: redactor kept %v, csv kept %v", redKept, csvKept)
	}
	if again := mustBuiltin(t, h, BuiltinRedactor); again != red {
		t.Fatal("Builtin returned a different plugin the second time")
	}
	if _, err := h.Builtin(ctx, "pdf"); err == nil || !strings.Contains(err.Error(), `no built-in plugin "pdf"`) {
		t.Fatalf("Builtin(pdf) = %v, want an error", err)
	}
}

func TestConcurrentRuns(t *testing.T) {
	h := mustHost(t, Config{})
	red := mustBuiltin(t, h, BuiltinRedactor)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rec := json.RawMessage(`{"id":"` + string(rune('a'+g)) + `","cells":{"t":"mail g` + string(rune('a'+g)) + `@example.com"}}`)
			out, err := red.Redact(context.Background(), nil, []json.RawMessage{rec})
			switch {
			case err != nil:
				errs <- err
			case string(out[0]) != `{"id":"`+string(rune('a'+g))+`","cells":{"t":"mail [EMAIL]"}}`:
				errs <- errors.New("wrong output " + string(out[0]))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRedactInput(t *testing.T) {
	h := mustHost(t, Config{})
	red := mustBuiltin(t, h, BuiltinRedactor)
	csv := mustBuiltin(t, h, BuiltinCSV)
	ctx := context.Background()
	t.Run("OKPrettyRecordCompacted", func(t *testing.T) {
		rec := json.RawMessage("{\n  \"id\": \"1\",\n  \"cells\": {\"t\": \"a@b.io\"}\n}")
		out, err := red.Redact(ctx, json.RawMessage(`{"phone":false}`), []json.RawMessage{rec})
		if err != nil || len(out) != 1 || string(out[0]) != `{"id":"1","cells":{"t":"[EMAIL]"}}` {
			t.Fatalf("Redact = %s, %v", out, err)
		}
	})
	t.Run("OKNoRecords", func(t *testing.T) {
		out, err := red.Redact(ctx, nil, nil)
		if err != nil || len(out) != 0 {
			t.Fatalf("Redact = %s, %v", out, err)
		}
	})
	for _, tc := range []struct {
		name    string
		config  any
		records []json.RawMessage
		wantErr string
	}{
		{"ErrConfigArray", []int{1}, nil, "config is not a JSON object"},
		{"ErrConfigUnencodable", map[string]any{"f": func() {}}, nil, "config"},
		{"ErrRecordArray", nil, []json.RawMessage{json.RawMessage(`[1]`)}, "record 1: not a JSON object"},
		{"ErrRecordInvalid", nil, []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"a":}`)}, "record 2: not a JSON object"},
		{"ErrRecordNotUTF8", nil, []json.RawMessage{json.RawMessage("{\"a\":\"\xff\"}")}, "record 1: not valid UTF-8"},
		{"ErrRecordTrailing", nil, []json.RawMessage{json.RawMessage(`{"a":1} {"b":2}`)}, "record 1: not a JSON object (invalid JSON at offset 8: want end of line after the value"},
		{"ErrRecordBadEscape", nil, []json.RawMessage{json.RawMessage(`{"a":"\x"}`)}, "record 1: not a JSON object"},
		{"ErrRecordTooDeep", nil, []json.RawMessage{json.RawMessage(`{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`)}, "nested deeper than 512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := red.Redact(ctx, tc.config, tc.records)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Redact = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
	t.Run("ErrFormatOnRedactor", func(t *testing.T) {
		wantPluginError(t, red.Format(ctx, nil, nil, &bytes.Buffer{}), ReasonInvalid, "is a redactor, not a formatter")
	})
	t.Run("ErrRedactOnFormatter", func(t *testing.T) {
		_, err := csv.Redact(ctx, nil, nil)
		wantPluginError(t, err, ReasonInvalid, "is a formatter, not a redactor")
	})
}

// failingWriter refuses every write, like a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFormatWriterFails(t *testing.T) {
	h := mustHost(t, Config{})
	csv := mustBuiltin(t, h, BuiltinCSV)
	err := csv.Format(context.Background(), nil, []json.RawMessage{json.RawMessage(`{"cells":["a"]}`)}, failingWriter{})
	pe := wantPluginError(t, err, ReasonWrite, "disk full")
	if !strings.Contains(pe.Err.Error(), "disk full") {
		t.Fatalf("Err = %v, want the writer's error", pe.Err)
	}
}

func TestClosedHost(t *testing.T) {
	ctx := context.Background()
	h, err := NewHost(ctx, Config{Cache: sharedCache})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Load(ctx, printer(tinyDescriptor))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := h.Load(ctx, printer(tinyDescriptor)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Load after Close = %v, want ErrClosed", err)
	}
	if err := p.Format(ctx, nil, nil, &bytes.Buffer{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Format after Close = %v, want ErrClosed", err)
	}
}

func TestNewHostConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := NewHost(ctx, Config{MemoryLimitPages: 70000}); err == nil {
		t.Fatal("NewHost accepted a memory limit over 4 GiB")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The cache folder is made with the runtime, by the first load: an idle server
	// touches nothing under DATA/cache. One that cannot be made fails that load, and the
	// next, with the reason.
	bad := mustHost(t, Config{CacheDir: filepath.Join(file, "cache")})
	for range 2 {
		if _, err := bad.Builtin(ctx, BuiltinRedactor); err == nil || !strings.Contains(err.Error(), "compilation cache") {
			t.Fatalf("load with a cache folder inside a file: %v, want a compilation cache error", err)
		}
	}
	lazy := filepath.Join(t.TempDir(), "cache")
	idle := mustHost(t, Config{CacheDir: lazy})
	if _, err := os.Stat(lazy); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a new host made its cache folder before any load: %v", err)
	}
	mustBuiltin(t, idle, BuiltinRedactor)
	if st, err := os.Stat(lazy); err != nil || !st.IsDir() {
		t.Fatalf("cache folder after the first load: %v", err)
	}
	h := mustHost(t, Config{Timeout: time.Second})
	got := h.Config()
	if got.Timeout != time.Second || got.MemoryLimitPages != DefaultConfig().MemoryLimitPages || got.MaxOutput != DefaultConfig().MaxOutput {
		t.Fatalf("Config() = %+v, want defaults with the 1s timeout", got)
	}
}
