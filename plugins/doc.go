// Package plugins is the wazero host for WebAssembly redaction and export-format
// plugins, and holds the built-in plugins.
//
// # ABI (version 1)
//
// A plugin is a WASI preview 1 command module: it exports "_start" and "memory" and
// imports nothing but functions of "wasi_snapshot_preview1"; anything else is refused
// when it is loaded.
//
//   - Run with the single argument "describe" (argv[1]; argv[0] is "plugin"), it prints
//     one JSON object, {"kind":"redactor"|"formatter","name":...,"media_type":...,
//     "abi_version":1}, and exits 0. The name is 1 to 32 characters of a-z, 0-9, "_"
//     and "-", starting with a letter; a formatter's name is the export format it adds
//     and its media_type (required for formatters, absent for redactors) is the
//     artifact's Content-Type.
//   - Run with no argument, it reads newline-delimited JSON on stdin: first a line
//     {"config": {...}} holding the organisation's settings for it, then one JSON
//     object per line, one per record. A redactor prints one JSON object per line on
//     stdout, one per input record and in the same order; a formatter prints the
//     artifact's bytes. Either exits 0 on success; a non-zero exit fails the run, and
//     what it printed on stderr is reported.
//
// # Use
//
//	h, err := plugins.NewHost(ctx, plugins.Config{CacheDir: "data/cache"})
//	red, err := h.Builtin(ctx, plugins.BuiltinRedactor) // or h.Load(ctx, uploadedWasm)
//	clean, err := red.Redact(ctx, settings, records)   // []json.RawMessage in and out
//	csv, err := h.Builtin(ctx, plugins.BuiltinCSV)
//	err = csv.Format(ctx, nil, rows, file)               // rows: {"cells": [...]}, header first
//
// Load compiles once per distinct module (by SHA-256) and keeps up to Config.MaxLoaded
// compiled modules in memory, so a run costs an instantiation (a few milliseconds for
// a Go-built plugin). The first Builtin call unpacks and compiles the built-in (about
// half a second, or tens of milliseconds from a warm CacheDir). The server does not do
// this at start-up: an idle server stays small, and Close cancels a compile in flight
// rather than wait for it, so stopping is never held up by one. Records going in, and
// a redactor's records coming out, must be JSON objects in valid UTF-8.
//
// # Sandbox
//
// All plugins share one wazero runtime with a compilation cache (on disk when
// Config.CacheDir is set), and every run gets a fresh module instance: no state
// survives between runs. An instance sees its arguments, stdin, stdout and stderr, and
// nothing else: no files, no environment variables, no sockets; its clocks and random
// source are wazero's deterministic defaults, so it cannot learn the host's time or
// entropy. Memory is capped by Config.MemoryLimitPages, output by Config.MaxOutput, and
// time by Config.Timeout: wazero checks the run's context at every loop header and
// stops the instance when the deadline passes.
//
// That check is not free: each one leaves the compiled code for Go and comes back,
// about 30 ns, and Go's WebAssembly routes every taken jump through its function's
// dispatch loop, so branchy Go code pays it often. The built-in plugins are written for
// it (their scans look at 32 bytes per loop iteration and decide most bytes without a
// branch; see plugins/internal/bytescan), and still run two to three times slower than
// without it. The check stays on for them too: it is what lets a runaway plugin be
// stopped, and the built-ins take the same path as an organisation's.
//
// Behind that, a watchdog waits Config.Grace more after the deadline, then gives up
// on the run and returns an error. That is the only thing it can do: Go cannot stop a
// goroutine from outside, so a run stuck where wazero does not look (inside a host
// function that blocks) stays abandoned in the background until it returns, holding
// its memory. With the host functions configured here (in-memory stdin, no-op sleep)
// no such place is known; the watchdog is there so that a wazero bug costs a goroutine,
// not a stuck export.
//
// A plugin that exits non-zero, traps, exhausts its memory or time, writes too much or
// prints output that breaks the ABI makes the call return an *Error naming the plugin
// and what happened; the host and its other runs carry on.
package plugins
