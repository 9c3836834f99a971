package plugins

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// The built-in plugins' names, as their descriptors give them.
const (
	// BuiltinRedactor removes email addresses, phone numbers, payment card numbers, IP
	// addresses and custom patterns from cells. Its configuration is
	// {"email":bool,"phone":bool,"card":bool,"ip":bool,"patterns":[{"name","regex"}]},
	// every class on when absent. Input and output records are
	// {"id": ..., "cells": {...}}; every string under "cells" is redacted.
	BuiltinRedactor = "redactor"
	// BuiltinCSV writes RFC 4180 CSV (text/csv; charset=utf-8) from records
	// {"cells": [...]}, the first being the header row, with formula triggers
	// (= + - @ tab CR) at the start of a cell neutralised by a leading apostrophe.
	BuiltinCSV = "csv"
)

// The built-in plugins, compiled from builtin/*/main.go by go generate (see
// generate.go) and compressed with zstd, each on its own: unpacked only when first
// used, they cost an idle server nothing.
var (
	//go:embed builtin/redactor.wasm.zst
	builtinRedactorZst []byte
	//go:embed builtin/csv.wasm.zst
	builtinCSVZst []byte
)

// builtinWasm returns the module bytes of the built-in plugin named name, or an error
// for another name or bytes that do not unpack.
func builtinWasm(name string) ([]byte, error) {
	var packed []byte
	switch name {
	case BuiltinRedactor:
		packed = builtinRedactorZst
	case BuiltinCSV:
		packed = builtinCSVZst
	default:
		return nil, fmt.Errorf("plugins: no built-in plugin %q", name)
	}
	wasm, err := unzstd(packed)
	if err != nil {
		return nil, fmt.Errorf("plugins: built-in %q: %w", name, err)
	}
	return wasm, nil
}

// Builtin returns the built-in plugin named name (BuiltinRedactor or BuiltinCSV),
// loading it on first use; it is never evicted from memory. It returns an error for
// another name, and Load's errors.
func (h *Host) Builtin(ctx context.Context, name string) (*Plugin, error) {
	h.mu.Lock()
	p := h.builtins[name]
	h.mu.Unlock()
	if p != nil {
		return p, nil
	}
	wasm, err := builtinWasm(name)
	if err != nil {
		return nil, err
	}
	p, err = h.load(ctx, wasm, true)
	if err != nil {
		return nil, err
	}
	if p.desc.Name != name {
		return nil, fmt.Errorf("plugins: built-in %q describes itself as %q", name, p.desc.Name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev := h.builtins[name]; prev != nil {
		return prev, nil
	}
	h.builtins[name] = p
	return p, nil
}

// maxBuiltinBytes bounds an unpacked built-in (they are 3 to 4 MB).
const maxBuiltinBytes = 64 << 20

// unzstd unpacks a zstd stream, with the decoder fasthttp already uses for compressed
// requests.
func unzstd(packed []byte) ([]byte, error) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBuiltinBytes))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(packed, nil)
}
