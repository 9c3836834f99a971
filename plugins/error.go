package plugins

import (
	"strconv"
	"strings"
)

// Reason classifies why a plugin failed.
type Reason string

// The reasons a plugin fails.
const (
	// ReasonInvalid: not a usable plugin (not WebAssembly, forbidden imports, missing
	// exports, a bad descriptor, or the wrong kind for the call).
	ReasonInvalid Reason = "invalid"
	// ReasonExit: the plugin exited with a non-zero code.
	ReasonExit Reason = "exit"
	// ReasonTrap: the plugin trapped (unreachable, out-of-bounds access, stack
	// overflow, ...).
	ReasonTrap Reason = "trap"
	// ReasonMemory: the plugin failed with its memory at or near the limit.
	ReasonMemory Reason = "memory"
	// ReasonTimeout: the plugin was still running at the deadline.
	ReasonTimeout Reason = "timeout"
	// ReasonOutput: the plugin wrote more than allowed, or output that breaks the ABI.
	ReasonOutput Reason = "output"
	// ReasonCanceled: the caller's context ended the run; not the plugin's fault.
	ReasonCanceled Reason = "canceled"
	// ReasonWrite: writing the artifact to the caller's writer failed; not the
	// plugin's fault either.
	ReasonWrite Reason = "write"
)

// Error reports a plugin failure. The host is unaffected by it.
type Error struct {
	// Plugin is the plugin's descriptor name, or "sha256:" and the start of its hash
	// before the descriptor is known.
	Plugin string
	// Op is what the host was doing: "load", "describe", "redact" or "format".
	Op     string
	Reason Reason
	// Message says what happened, in words.
	Message string
	// ExitCode is the plugin's exit code when Reason is ReasonExit or ReasonMemory.
	ExitCode uint32
	// Stderr is the start of what the plugin wrote to stderr, trimmed.
	Stderr string
	// Err is the underlying error, if any.
	Err error
}

// Error returns "plugin NAME: OP: MESSAGE", followed by the plugin's stderr if it wrote
// any.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("plugin ")
	b.WriteString(e.Plugin)
	b.WriteString(": ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Stderr != "" {
		b.WriteString("; stderr: ")
		b.WriteString(strconv.Quote(e.Stderr))
	}
	return b.String()
}

// Unwrap returns the underlying error, so errors.Is(err, context.Canceled) works.
func (e *Error) Unwrap() error { return e.Err }

// stderrExcerpt trims what a plugin wrote to stderr to its first few lines, which is
// where Go, Rust and C runtimes put the reason (a panic message, "fatal error: ...").
func stderrExcerpt(b []byte) string {
	const maxLines, maxBytes = 4, 512
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	lines := strings.SplitN(s, "\n", maxLines+1)
	if len(lines) > maxLines {
		lines = append(lines[:maxLines], "...")
	}
	s = strings.Join(lines, "\n")
	if len(s) > maxBytes {
		s = strings.ToValidUTF8(s[:maxBytes], "") + "..."
	}
	return s
}
