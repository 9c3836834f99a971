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
// # Sandbox
//
// All plugins share one wazero runtime with a compilation cache (on disk when
// Config.CacheDir is set), and every run gets a fresh module instance: no state
// survives between runs. An instance sees its arguments, stdin, stdout and stderr, and
// nothing else: no files, no environment variables, no sockets; its clocks and random
// source are wazero's deterministic defaults, so it cannot learn the host's time or
// entropy. Memory is capped by Config.MemoryLimitPages, output by Config.MaxOutput, and
// time by Config.Timeout: wazero checks the run's context at function entries and loop
// headers and stops the instance when the deadline passes.
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
