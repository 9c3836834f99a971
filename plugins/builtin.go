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
	// BuiltinAnalysisMarkdown writes a study's analysis as a Markdown report
	// (text/markdown; charset=utf-8).
	BuiltinAnalysisMarkdown = "analysis-md"
	// BuiltinAnalysisHTML writes a study's analysis as one standalone, printable HTML
	// page (text/html; charset=utf-8): inline CSS, no scripts.
	BuiltinAnalysisHTML = "analysis-html"
	// BuiltinQDPX writes a study's analysis and its redacted transcripts as a
	// REFI-QDA project (.qdpx, a zip), the exchange format of NVivo, ATLAS.ti and
	// MAXQDA.
	BuiltinQDPX = "qdpx"
)

// The analysis formatters (BuiltinAnalysisMarkdown, BuiltinAnalysisHTML, BuiltinQDPX)
// read the records package plugins/internal/analysisdoc describes: after the
// configuration line, {"study": {"id", "title"}, "analysis": {...}} (the analysis as
// get_analysis returns it), then, for qdpx, one {"interview": {"id", "started_at",
// "completed_at", "context", "messages": [{"speaker", "text"}]}} per interview the
// analysis includes, its whole transcript redacted as the analysis's quotes were.

// The built-in plugins, compiled from builtin/*/main.go by go generate (see
// generate.go) and compressed with zstd, each on its own: unpacked only when first
// used, they cost an idle server nothing.
var (
	//go:embed builtin/redactor.wasm.zst
	builtinRedactorZst []byte
	//go:embed builtin/csv.wasm.zst
	builtinCSVZst []byte
	//go:embed builtin/qdpx.wasm.zst
	builtinQDPXZst []byte
	//go:embed builtin/analysis-md.wasm.zst
	builtinAnalysisMarkdownZst []byte
	//go:embed builtin/analysis-html.wasm.zst
	builtinAnalysisHTMLZst []byte
)

// builtinPacked returns the zstd-packed bytes of the built-in plugin named name; ok is
// false for another name.
func builtinPacked(name string) (packed []byte, ok bool) {
	switch name {
	case BuiltinRedactor:
		return builtinRedactorZst, true
	case BuiltinCSV:
		return builtinCSVZst, true
	case BuiltinQDPX:
		return builtinQDPXZst, true
	case BuiltinAnalysisMarkdown:
		return builtinAnalysisMarkdownZst, true
	case BuiltinAnalysisHTML:
		return builtinAnalysisHTMLZst, true
	}
	return nil, false
}

// builtinWasm returns the module bytes of the built-in plugin named name, or an error
// for another name or bytes that do not unpack.
func builtinWasm(name string) ([]byte, error) {
	packed, ok := builtinPacked(name)
	if !ok {
		return nil, fmt.Errorf("plugins: no built-in plugin %q", name)
	}
	wasm, err := unzstd(packed)
	if err != nil {
		return nil, fmt.Errorf("plugins: built-in %q: %w", name, err)
	}
	return wasm, nil
}

// Builtin returns the built-in plugin named name (one of the Builtin constants),
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

// maxBuiltinBytes bounds an unpacked built-in (they are 2.5 to 7 MB).
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
