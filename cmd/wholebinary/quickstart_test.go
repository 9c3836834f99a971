//go:build unix

package wholebinary

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's Quickstart, run as written: every fenced block the README marks with
// quickstartMarker on the line before it is run, in order, by one bash, in a fresh
// folder holding a freshly built binary. The only change made to the blocks is the
// address: the README's localhost:8080 becomes a free loopback port, which the server
// also gets through INTERVIEWD_ADDR. The Quickstart must end with an exported
// interview, so the test reads the CSV it downloaded.

// quickstartMarker is the HTML comment that marks a README block for this test.
const quickstartMarker = "<!-- quickstart -->"

// quickstartDeadline bounds the whole script: a build of the plugins' compiled code and
// a few background jobs on a busy machine take seconds, never minutes, when all is well.
const quickstartDeadline = 5 * time.Minute

// quickstartBlocks returns the bodies of the README's marked ```sh blocks, in order.
func quickstartBlocks(t *testing.T, readme string) []string {
	t.Helper()
	var blocks []string
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != quickstartMarker {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
			t.Fatalf("README.md line %d: %s must come right before a ```sh block", i+1, quickstartMarker)
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("README.md line %d: the marked block never closes", i+2)
		}
		blocks = append(blocks, strings.Join(body, "\n"))
		i = j
	}
	return blocks
}

// freeLoopbackPort returns a port nothing listens on at the moment.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// curlHasJSON reports whether curl takes --json (curl 7.82 and later), which the
// Quickstart uses.
func curlHasJSON() bool {
	out, err := exec.Command("curl", "--help", "all").Output()
	return err == nil && bytes.Contains(out, []byte("--json"))
}

func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's Quickstart; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "sed", "grep", "head"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the Quickstart needs %s on PATH", tool)
		}
	}
	if !curlHasJSON() {
		t.Skip("the Quickstart needs curl 7.82 or later (--json)")
	}
	readme, err := os.ReadFile(inRoot("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := quickstartBlocks(t, string(readme))
	if len(blocks) < 5 {
		t.Fatalf("README.md marks %d blocks with %s; the Quickstart has at least five", len(blocks), quickstartMarker)
	}
	script := strings.Join(blocks, "\n")
	for _, want := range []string{"localhost:8080", "./interviewd setup", "/download"} {
		if !strings.Contains(script, want) {
			t.Fatalf("the marked Quickstart blocks never mention %q:\n%s", want, script)
		}
	}

	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "interviewd"), ".")
	build.Dir = moduleRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	port := strconv.Itoa(freeLoopbackPort(t))
	script = strings.ReplaceAll(script, "localhost:8080", "127.0.0.1:"+port)
	ctx, cancel := context.WithTimeout(context.Background(), quickstartDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-x", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(quickstartEnv(), "INTERVIEWD_ADDR=127.0.0.1:"+port)
	// Its own process group, so the server the script starts in the background is
	// stopped with it whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // nothing, when the script stopped its server
	}
	serverLog, _ := os.ReadFile(filepath.Join(dir, "interviewd.log"))
	if runErr != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("the Quickstart did not finish within %s", quickstartDeadline)
		}
		t.Fatalf("the Quickstart failed: %v\n--- script output\n%s\n--- server log\n%s", runErr, out.String(), serverLog)
	}

	// It ends with an exported interview: one row, the interview the script answered.
	f, err := os.Open(filepath.Join(dir, "interviews.csv"))
	if err != nil {
		t.Fatalf("no export downloaded: %v\n%s", err, out.String())
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("interviews.csv: %v", err)
	}
	if len(rows) != 2 || rows[0][0] != "interview_id" || rows[0][len(rows[0])-1] != "transcript" {
		t.Fatalf("interviews.csv: want a header and one interview, got %d rows: %q", len(rows), rows)
	}
	answer := regexp.MustCompile(`"text":"([^"]+)"`).FindStringSubmatch(script)
	if answer == nil {
		t.Fatal("the Quickstart's participant never answers with a text")
	}
	row := strings.Join(rows[1], "\n")
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(rows[1][0]) || !strings.Contains(row, answer[1]) {
		t.Fatalf("the exported row is not the interview the Quickstart answered (%q): %q", answer[1], rows[1])
	}
	// The analysis ran, and the server it started was stopped cleanly by its last block.
	for _, want := range []string{"export finished", "analysis finished", "stopped"} {
		if !strings.Contains(string(serverLog), want) {
			t.Fatalf("server log lacks %q:\n%s", want, serverLog)
		}
	}
}

// quickstartEnv is this process's environment without INTERVIEWD_* settings, so the
// Quickstart runs on its defaults as a newcomer's shell would.
func quickstartEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "INTERVIEWD_") {
			env = append(env, e)
		}
	}
	return env
}
