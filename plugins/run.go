package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

const (
	pageSize = 64 << 10
	// stderrKeep is how much of a plugin's stderr is kept for its error.
	stderrKeep = 4 << 10
)

// errOutputClosed is what a late write from an abandoned run gets.
var errOutputClosed = errors.New("plugins: run is over")

// outcome is how one instance's _start call ended, as seen from its goroutine.
type outcome struct {
	err   error  // from instantiation or _start; nil or a zero exit means success
	pages uint32 // memory size when it ended, in pages
}

// run executes p's compiled module e once in a fresh instance with args after argv[0],
// stdin and stdout, under the host's limits and the given timeout. It returns nil when
// the plugin exited 0, and otherwise an *Error saying what happened (or ErrClosed). op
// names the call for the error.
func (h *Host) run(ctx context.Context, p *Plugin, e *entry, op string, timeout time.Duration, args []string, stdin io.Reader, stdout io.Writer) error {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	out := &limitWriter{w: stdout, max: h.cfg.MaxOutput, stop: cancel}
	stderr := &headBuffer{max: stderrKeep}
	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module may run at once
		WithArgs(append([]string{"plugin"}, args...)...).
		WithStdin(stdin).
		WithStdout(out).
		WithStderr(stderr).
		// _start is called below rather than by InstantiateModule, so the instance is
		// still at hand afterwards to read how much memory it had grown to.
		WithStartFunctions()

	done := make(chan outcome, 1)
	go func() { done <- h.instantiateAndStart(runCtx, e.module, mc) }()

	var res outcome
	select {
	case res = <-done:
	case <-runCtx.Done():
		select {
		case res = <-done:
		case <-time.After(h.cfg.Grace):
			// The watchdog: wazero did not stop the call. Cut its output off and leave
			// it behind (see the package comment).
			out.close()
			stderr.close()
			if ctx.Err() != nil {
				return p.fail(op, ReasonCanceled, "canceled, and the run did not stop; abandoned", ctx.Err())
			}
			return p.fail(op, ReasonTimeout, fmt.Sprintf("still running %v after the %v deadline; abandoned", h.cfg.Grace, timeout), nil)
		}
	}
	out.close()
	stderr.close()
	return h.judge(ctx, p, op, timeout, res, out, stderr)
}

// instantiateAndStart runs one fresh instance to the end of its _start.
func (h *Host) instantiateAndStart(ctx context.Context, cm wazero.CompiledModule, mc wazero.ModuleConfig) (res outcome) {
	defer func() {
		// wazero turns guest faults into errors; this only guards against a bug.
		if r := recover(); r != nil {
			res = outcome{err: fmt.Errorf("host panic: %v", r)}
		}
	}()
	mod, err := h.runtime.InstantiateModule(ctx, cm, mc)
	if err != nil {
		return outcome{err: err}
	}
	defer mod.Close(context.Background())
	_, err = mod.ExportedFunction("_start").Call(ctx)
	res.err = err
	if mem := mod.Memory(); mem != nil {
		res.pages = mem.Size() / pageSize
	}
	return res
}

// judge turns how a run ended into nil or an *Error.
func (h *Host) judge(ctx context.Context, p *Plugin, op string, timeout time.Duration, res outcome, out *limitWriter, stderr *headBuffer) error {
	err := res.err
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		err = nil
	}
	fail := func(reason Reason, msg string, cause error) *Error {
		e := p.fail(op, reason, msg, cause)
		e.Stderr = stderrExcerpt(stderr.buf)
		if exit != nil && (reason == ReasonExit || reason == ReasonMemory) {
			e.ExitCode = exit.ExitCode()
		}
		return e
	}
	// Host-side causes first: they explain the exit that follows them.
	switch {
	case out.writeErr != nil:
		return fail(ReasonWrite, "writing its output failed: "+out.writeErr.Error(), out.writeErr)
	case out.over:
		return fail(ReasonOutput, fmt.Sprintf("wrote more than %d bytes", h.cfg.MaxOutput), nil)
	case err == nil:
		return nil
	case h.isClosed():
		return ErrClosed
	case ctx.Err() != nil:
		return fail(ReasonCanceled, "canceled", ctx.Err())
	}
	nearLimit := h.nearMemoryLimit(res.pages) || saysOutOfMemory(stderr.buf)
	if exit != nil {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			return fail(ReasonTimeout, fmt.Sprintf("still running at the %v deadline; stopped", timeout), nil)
		}
		if nearLimit {
			return fail(ReasonMemory, fmt.Sprintf("exited with code %d out of memory (limit %d MiB)", exit.ExitCode(), h.limitMiB()), nil)
		}
		return fail(ReasonExit, fmt.Sprintf("exited with code %d", exit.ExitCode()), nil)
	}
	// Anything else is a trap, or an instantiation failure (a missing import).
	msg := firstLine(err.Error())
	if nearLimit {
		return fail(ReasonMemory, fmt.Sprintf("trapped out of memory (limit %d MiB): %s", h.limitMiB(), msg), err)
	}
	return fail(ReasonTrap, "trapped: "+msg, err)
}

// nearMemoryLimit reports whether an instance that ended with pages of memory most
// likely failed for lack of memory. No runtime tells the host that a memory.grow was
// refused, so this is a heuristic, and so is saysOutOfMemory. Runtimes grow memory in steps (Go's in 4 MiB
// arenas), so the last failed step leaves the size within one step of the limit.
func (h *Host) nearMemoryLimit(pages uint32) bool {
	limit := h.cfg.MemoryLimitPages
	slack := max(limit/8, 64) // 64 pages is one 4 MiB step
	return pages+slack >= limit
}

// saysOutOfMemory reports whether a plugin's stderr carries its runtime's out-of-memory
// message: Go's "fatal error: out of memory" (also printed when one large allocation,
// such as a stack doubling, would pass the limit while the memory is far below it) or
// Rust's "memory allocation of N bytes failed".
func saysOutOfMemory(stderr []byte) bool {
	return bytes.Contains(stderr, []byte("out of memory")) || bytes.Contains(stderr, []byte("memory allocation of"))
}

func (h *Host) limitMiB() uint32 { return h.cfg.MemoryLimitPages * pageSize >> 20 }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// limitWriter passes writes to w until max bytes, then refuses them and stops the run;
// once closed it refuses everything, so an abandoned run cannot write into a caller's
// writer after the call returned.
type limitWriter struct {
	mu       sync.Mutex
	w        io.Writer
	n, max   int64
	over     bool
	closed   bool
	writeErr error
	stop     func()
}

func (lw *limitWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	switch {
	case lw.closed:
		return 0, errOutputClosed
	case lw.writeErr != nil:
		return 0, lw.writeErr
	case lw.n+int64(len(b)) > lw.max:
		lw.over = true
		lw.stop()
		return 0, fmt.Errorf("output over %d bytes", lw.max)
	}
	n, err := lw.w.Write(b)
	lw.n += int64(n)
	if err != nil {
		lw.writeErr = err
		lw.stop()
	}
	return n, err
}

func (lw *limitWriter) close() {
	lw.mu.Lock()
	lw.closed = true
	lw.mu.Unlock()
}

// headBuffer keeps the first max bytes written to it and drops the rest while
// reporting success, so a chatty plugin is not failed for it.
type headBuffer struct {
	mu        sync.Mutex
	buf       []byte
	max       int
	truncated bool
	closed    bool
}

func (hb *headBuffer) Write(b []byte) (int, error) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.closed {
		return 0, errOutputClosed
	}
	room := hb.max - len(hb.buf)
	if len(b) > room {
		hb.truncated = true
		hb.buf = append(hb.buf, b[:max(room, 0)]...)
	} else {
		hb.buf = append(hb.buf, b...)
	}
	return len(b), nil
}

func (hb *headBuffer) close() {
	hb.mu.Lock()
	hb.closed = true
	hb.mu.Unlock()
}

// emptyReader is a stdin with nothing on it.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, io.EOF }
