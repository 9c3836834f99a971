package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/plugins/plugintest"
)

// The limits of the sandbox tests: short, so runaway plugins end quickly.
const (
	sandboxTimeout = time.Second
	sandboxGrace   = time.Second
	// sandboxBound is how long any sandbox run may take before the test fails:
	// deadline, grace and a generous margin for a loaded machine and the race detector.
	sandboxBound = sandboxTimeout + sandboxGrace + time.Minute
)

// mustSandboxHost returns a host with the given timeout and short other limits, the
// sandbox plugin and the built-in redactor.
func mustSandboxHost(tb testing.TB, timeout time.Duration) (h *Host, sandbox, red *Plugin) {
	tb.Helper()
	h = mustHost(tb, Config{Timeout: timeout, Grace: sandboxGrace, MaxOutput: 1 << 20})
	return h, mustLoadFile(tb, h, plugintest.Path(tb, plugintest.Sandbox)), mustBuiltin(tb, h, BuiltinRedactor)
}

// checkRedactorWorks fails unless the built-in redactor still runs correctly on its
// host. A host with a short run timeout may time a run out on a loaded machine: that
// says nothing about the host, so such a run is tried again, for up to a minute.
func checkRedactorWorks(tb testing.TB, red *Plugin) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := red.Redact(context.Background(), nil, []json.RawMessage{json.RawMessage(`{"id":"1","cells":{"t":"a@b.io"}}`)})
		var pe *Error
		if errors.As(err, &pe) && pe.Reason == ReasonTimeout && time.Now().Before(deadline) {
			continue
		}
		if err != nil || len(out) != 1 || string(out[0]) != `{"id":"1","cells":{"t":"[EMAIL]"}}` {
			tb.Fatalf("the built-in redactor no longer works: %s, %v", out, err)
		}
		return
	}
}

func sandboxConfig(mode string) map[string]string { return map[string]string{"mode": mode} }

var twoRecords = []json.RawMessage{json.RawMessage(`{"id":"1"}`), json.RawMessage(`{"id":"2"}`)}

func TestSandboxMisbehaviour(t *testing.T) {
	_, sandbox, red := mustSandboxHost(t, sandboxTimeout)
	// Only the timeout cases run under the short deadline. The others get one far
	// beyond what a loaded machine under the race detector needs (filling memory takes
	// a while there), since time is not what they test.
	_, roomySandbox, roomyRed := mustSandboxHost(t, time.Minute)
	tests := []struct {
		mode       string
		reason     Reason
		wantMsg    string
		wantStderr string
		wantCode   uint32
	}{
		{"loop", ReasonTimeout, "still running at the 1s deadline", "", 0},
		{"recurse", ReasonTimeout, "still running at the 1s deadline", "", 0},
		{"deep", ReasonMemory, "out of memory (limit 64 MiB)", "out of memory", 2},
		{"hog", ReasonMemory, "out of memory (limit 64 MiB)", "out of memory", 2},
		{"open", ReasonExit, "exited with code 3", "no file could be opened: [open /etc/passwd:", 3},
		{"exit", ReasonExit, "exited with code 7", "sandbox: asked to fail", 7},
		{"panic", ReasonExit, "exited with code 2", "panic: asked to panic", 2},
		{"badjson", ReasonOutput, `output line 1 is not a JSON object: "this is not json"`, "", 0},
		{"short", ReasonOutput, "printed 1 records for the 2 it was given", "", 0},
		{"flood", ReasonOutput, "wrote more than 1048576 bytes", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			p, r, bound := sandbox, red, sandboxBound
			if tc.reason != ReasonTimeout {
				p, r, bound = roomySandbox, roomyRed, time.Minute+sandboxGrace
			}
			start := time.Now()
			out, err := p.Redact(context.Background(), sandboxConfig(tc.mode), twoRecords)
			elapsed := time.Since(start)
			if out != nil {
				t.Errorf("Redact returned records %s alongside the failure", out)
			}
			pe := wantPluginError(t, err, tc.reason, tc.wantMsg)
			if !strings.HasPrefix(pe.Error(), "plugin sandbox: redact: ") {
				t.Errorf("error %q does not start with the plugin and the operation", pe)
			}
			if !strings.Contains(pe.Stderr, tc.wantStderr) {
				t.Errorf("Stderr = %q, want it to contain %q", pe.Stderr, tc.wantStderr)
			}
			if pe.ExitCode != tc.wantCode {
				t.Errorf("ExitCode = %d, want %d", pe.ExitCode, tc.wantCode)
			}
			if elapsed > bound {
				t.Errorf("the run took %v, more than %v", elapsed, bound)
			}
			checkRedactorWorks(t, r)
		})
	}
}

func TestSandboxSeesNothingOfTheHost(t *testing.T) {
	_, sandbox, _ := mustSandboxHost(t, time.Minute) // time is not what it tests
	out, err := sandbox.Redact(context.Background(), sandboxConfig("probe"), []json.RawMessage{json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	var probe struct {
		Env  []string `json:"env"`
		Args []string `json:"args"`
		Unix int64    `json:"unix"`
	}
	if err := json.Unmarshal(out[0], &probe); err != nil {
		t.Fatal(err)
	}
	if len(probe.Env) != 0 {
		t.Errorf("the plugin sees environment variables %q", probe.Env)
	}
	if len(probe.Args) != 1 || probe.Args[0] != "plugin" {
		t.Errorf("the plugin's arguments are %q, want [plugin]", probe.Args)
	}
	if now := time.Now().Unix(); probe.Unix > now-86400 {
		t.Errorf("the plugin's clock reads %d, within a day of the host's %d: the wall clock leaks", probe.Unix, now)
	}
}

func TestSandboxEcho(t *testing.T) {
	_, sandbox, _ := mustSandboxHost(t, time.Minute) // time is not what it tests
	out, err := sandbox.Redact(context.Background(), sandboxConfig("echo"), twoRecords)
	if err != nil || len(out) != 2 || string(out[0]) != `{"id":"1"}` || string(out[1]) != `{"id":"2"}` {
		t.Fatalf("Redact = %s, %v", out, err)
	}
}

func TestCallerCancels(t *testing.T) {
	h := mustHost(t, Config{Timeout: time.Minute, Grace: sandboxGrace})
	sandbox := mustLoadFile(t, h, plugintest.Path(t, plugintest.Sandbox))
	red := mustBuiltin(t, h, BuiltinRedactor)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := sandbox.Redact(ctx, sandboxConfig("loop"), twoRecords)
	wantPluginError(t, err, ReasonCanceled, "canceled")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
	}
	if elapsed := time.Since(start); elapsed > sandboxBound {
		t.Errorf("the run took %v after the caller's deadline of 300ms", elapsed)
	}
	checkRedactorWorks(t, red)
}

// blockingReader gives one line, then blocks until release is closed: a host function
// wazero cannot interrupt, the case the watchdog exists for. blocked is closed once the
// plugin is inside that read.
type blockingReader struct {
	first   io.Reader
	release chan struct{}
	blocked chan struct{}
	once    sync.Once
}

func (br *blockingReader) Read(p []byte) (int, error) {
	if n, err := br.first.Read(p); n > 0 || !errors.Is(err, io.EOF) {
		return n, err
	}
	br.once.Do(func() { close(br.blocked) })
	<-br.release
	return 0, io.EOF
}

func TestWatchdogAbandonsStuckRun(t *testing.T) {
	// The watchdog is for a run stuck in a host call when its deadline passes. On a slow
	// machine the plugin may not reach its blocking read before a short deadline (wazero
	// then stops it in guest code, which is not the case under test), so the deadline
	// doubles until the plugin was inside the read; then the run must be abandoned.
	const grace = 300 * time.Millisecond
	for timeout := time.Second; ; timeout *= 2 {
		if watchdogRun(t, timeout, grace) {
			return
		}
		if timeout >= time.Minute {
			t.Fatalf("the plugin never reached its blocking read within a %v deadline", timeout)
		}
		t.Logf("the plugin was stopped before it blocked at a %v deadline; trying a longer one", timeout)
	}
}

// watchdogRun runs the sandbox plugin into a read that never returns, under timeout and
// grace. It reports false when the plugin never got into that read (nothing to judge);
// otherwise it checks the run was abandoned by the watchdog after deadline plus grace.
func watchdogRun(t *testing.T, timeout, grace time.Duration) bool {
	t.Helper()
	h := mustHost(t, Config{Timeout: timeout, Grace: grace})
	sandbox := mustLoadFile(t, h, plugintest.Path(t, plugintest.Sandbox))
	red := mustBuiltin(t, h, BuiltinRedactor)
	ctx := context.Background()
	e, err := h.acquire(ctx, sandbox, false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.release(e)

	stdin := &blockingReader{first: strings.NewReader(`{"config":{"mode":"echo"}}` + "\n"), release: make(chan struct{}), blocked: make(chan struct{})}
	defer close(stdin.release) // lets the abandoned run end with the test
	var out strings.Builder
	start := time.Now()
	err = h.run(ctx, sandbox, e, "redact", timeout, nil, stdin, &out)
	elapsed := time.Since(start)
	select {
	case <-stdin.blocked:
	default:
		wantPluginError(t, err, ReasonTimeout, "stopped")
		return false
	}
	wantPluginError(t, err, ReasonTimeout, fmt.Sprintf("still running %v after the %v deadline; abandoned", grace, timeout))
	if elapsed < timeout+grace || elapsed > timeout+grace+time.Minute {
		t.Errorf("the watchdog fired after %v, want deadline plus grace (%v)", elapsed, timeout+grace)
	}
	checkRedactorWorks(t, red)
	return true
}

func TestDescribeTimesOut(t *testing.T) {
	h := mustHost(t, Config{Timeout: 300 * time.Millisecond, Grace: sandboxGrace})
	loop := wasmModule{code: []byte{0x03, 0x40, 0x0c, 0x00, opEnd}}.bytes() // loop; br 0; end
	start := time.Now()
	_, err := h.Load(context.Background(), loop)
	pe := wantPluginError(t, err, ReasonTimeout, "still running at the 300ms deadline; stopped")
	if pe.Op != "describe" {
		t.Errorf("Op = %q, want describe", pe.Op)
	}
	if elapsed := time.Since(start); elapsed > sandboxBound {
		t.Errorf("Load took %v", elapsed)
	}
}

func TestMemoryLimitWithoutRuntimeMessage(t *testing.T) {
	// A module that grows its memory 64 pages at a time until refused, then traps,
	// as a runtime without an out-of-memory message would.
	// It traps; time is not what it tests, so the run deadline is far off.
	h := mustHost(t, Config{MemoryLimitPages: 256, Timeout: time.Minute, Grace: sandboxGrace})
	code := []byte{0x03, 0x40} // loop
	code = append(code, i32Const(64)...)
	code = append(code, 0x40, 0x00) // memory.grow
	code = append(code, i32Const(-1)...)
	code = append(code, 0x47, 0x0d, 0x00, opEnd, opUnreachable) // i32.ne; br_if 0; end; unreachable
	_, err := h.Load(context.Background(), wasmModule{code: code}.bytes())
	pe := wantPluginError(t, err, ReasonMemory, "trapped out of memory (limit 16 MiB)")
	if pe.Stderr != "" {
		t.Errorf("Stderr = %q, want nothing", pe.Stderr)
	}
}
