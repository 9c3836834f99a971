package wholebinary

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helpers for the tests that build the real binary and run it as a person or a
// service manager would: `go build`, `go run .`, a systemd unit's or a Dockerfile's
// command line.

// goBuild runs `go build` with args (flags, then "-o", out and the package) in the
// module's root, CGO off as the release build has it.
func goBuild(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = moduleRoot
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS="), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// loggedProcess is a running command whose stderr is kept, line by line.
type loggedProcess struct {
	cmd    *exec.Cmd
	logs   *crashLog
	exited chan struct{}
}

// startLogged starts cmd in a process group of its own (so that a `go run` and the
// binary it starts are signalled together) and keeps its stderr. The group is killed
// when the test ends, if it is still there.
func startLogged(t *testing.T, cmd *exec.Cmd) *loggedProcess {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &loggedProcess{cmd: cmd, logs: &crashLog{}, exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.logs.add(sc.Text())
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	})
	return p
}

// waitLog polls the log until it holds every one of want; it fails if the process
// exits first or the suite's deadline passes (building the binary counts: `go run`).
func (p *loggedProcess) waitLog(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		logs := p.logs.String()
		all := true
		for _, w := range want {
			all = all && strings.Contains(logs, w)
		}
		if all {
			return logs
		}
		select {
		case <-p.exited:
			t.Fatalf("exited before logging %q:\n%s", want, p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log within 5 minutes:\n%s", want, logs)
		}
	}
}

// stop sends SIGTERM to the process group and waits for it to exit; it returns the
// exit code.
func (p *loggedProcess) stop(t *testing.T) int {
	t.Helper()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(crashDeadline):
		t.Fatalf("did not stop within %v of SIGTERM:\n%s", crashDeadline, p.logs.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestGoRunPrintsNextSteps runs `go run .` as a newcomer does: its start lines say
// where the web app is and that the admin commands need `go build` first, and name
// the binary that build makes. The same server started as a built binary (here, the
// test's own) says where the app is but nothing about go run.
func TestGoRunPrintsNextSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary with go run")
	}
	data := t.TempDir()
	cmd := exec.Command("go", "run", ".", "--addr", "127.0.0.1:0", "--data", data)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	p := startLogged(t, cmd)
	logs := p.waitLog(t, `"message":"listening"`, "no organisation yet")
	m := crashListening.FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no address in:\n%s", logs)
	}
	app := "http://" + m[1] + "/app"
	for _, want := range []string{
		"open " + app + " in a browser",
		"started with `go run`: the admin commands (`interviewd setup`, `orgs list`",
		"run `go build`, then `./interviewd setup ...`",
		"create one with `./interviewd setup --data " + data,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("go run's start lines lack %q:\n%s", want, logs)
		}
	}
	p.stop(t)

	srv := mustBoot(t, "--data", t.TempDir())
	_ = srv.Stop()
	built := srv.Logs.String()
	if !strings.Contains(built, "open "+srv.URL+"/app in a browser") || !strings.Contains(built, "create one with `interviewd setup") {
		t.Errorf("a built binary's start lines:\n%s", built)
	}
	if strings.Contains(built, "go run") {
		t.Errorf("a built binary speaks of go run:\n%s", built)
	}
}
