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
// generate.go) and compressed with zstd: unpacked only when first used, they cost the
// binary a sixth of their size and an idle server nothing. csv is a patch from
// redactor (redactor's unpacked bytes are its dictionary): the two share most of
// their code.
var (
	//go:embed builtin/redactor.wasm.zst
	builtinRedactorZst []byte
	//go:embed builtin/csv.wasm.zst
	builtinCSVZst []byte
)

// builtinWasm returns the module bytes of the built-in plugin named name, or an error
// for another name or bytes that do not unpack.
func builtinWasm(name string) ([]byte, error) {
	var wasm []byte
	var err error
	switch name {
	case BuiltinRedactor:
		wasm, err = unzstd(builtinRedactorZst, nil)
	case BuiltinCSV:
		var base []byte
		if base, err = unzstd(builtinRedactorZst, nil); err == nil {
			wasm, err = unzstd(builtinCSVZst, base)
		}
	default:
		return nil, fmt.Errorf("plugins: no built-in plugin %q", name)
	}
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

// unzstd unpacks one zstd frame; dict, when not nil, is the content the frame was
// compressed against (zstd --patch-from, a frame without a dictionary ID). The decoder
// is the one fasthttp already links for compressed requests, so the format costs the
// binary no code.
func unzstd(packed, dict []byte) ([]byte, error) {
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBuiltinBytes)}
	if dict != nil {
		opts = append(opts, zstd.WithDecoderDictRaw(0, dict))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(packed, nil)
}
