package wholebinary

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The files under deploy/ are exercised as the tools that read them would: systemd's
// own checker over the unit, the container engine (or, without one, the Dockerfile's
// build command) over the Dockerfile, and the real binary over each one's command line.

// TestSystemdUnit runs `systemd-analyze verify` over deploy/interviewd.service, its
// ExecStart pointing at a freshly built binary, and requires it to say nothing; checks
// the hardening systemd-analyze security scores; and runs the ExecStart command line
// (on a temporary data folder and port) until it serves.
func TestSystemdUnit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("INTERVIEWD_REQUIRE_SYSTEMD") == "1" {
			t.Fatal("systemd-analyze is not installed and INTERVIEWD_REQUIRE_SYSTEMD=1")
		}
		t.Skip("systemd-analyze is not installed (apt-get install systemd); INTERVIEWD_REQUIRE_SYSTEMD=1 makes this a failure")
	}
	unit := string(mustReadFile(t, inRoot("deploy/interviewd.service")))
	keys := unitKeys(unit)
	for key, want := range map[string]string{
		"User": "interviewd", "StateDirectory": "interviewd", "NoNewPrivileges": "yes",
		"ProtectSystem": "strict", "ReadWritePaths": "/var/lib/interviewd", "Restart": "on-failure",
	} {
		if !slices.Contains(keys[key], want) {
			t.Errorf("%s=%v, want %s", key, keys[key], want)
		}
	}
	if len(keys["ExecStart"]) != 1 {
		t.Fatalf("ExecStart=%v: want one", keys["ExecStart"])
	}
	args := strings.Fields(keys["ExecStart"][0])
	if args[0] != "/usr/local/bin/interviewd" || !slices.Contains(args, "serve") || flagValue(args, "--data") != "/var/lib/interviewd" {
		t.Fatalf("ExecStart=%s: want /usr/local/bin/interviewd serve with --data /var/lib/interviewd (the StateDirectory)", keys["ExecStart"][0])
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "interviewd")
	goBuild(t, nil, "-o", bin, ".")
	copyPath := filepath.Join(dir, "interviewd.service")
	if err := os.WriteFile(copyPath, []byte(strings.Replace(unit, "ExecStart="+args[0], "ExecStart="+bin, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", copyPath).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The exposure score of the hardening options (0 is the most locked down, 10 the
	// least); --offline reads the unit file without a running systemd (systemd 252+).
	out, err = exec.Command(analyze, "security", "--offline=yes", "--no-pager", copyPath).CombinedOutput()
	if m := regexp.MustCompile(`Overall exposure level for [^:]+: ([0-9.]+)`).FindSubmatch(out); err == nil && m != nil {
		score, _ := strconv.ParseFloat(string(m[1]), 64)
		t.Logf("systemd-analyze security: exposure %.1f", score)
		if score > 3 {
			t.Errorf("the unit's exposure is %.1f, more than 3: hardening options were lost\n%s", score, out)
		}
	} else {
		t.Logf("systemd-analyze security --offline is not available here (%v)", err)
	}

	serveCommandLine(t, bin, args[1:])
}

// TestDockerfile builds deploy/Dockerfile's image when a container engine works here,
// and otherwise runs its build stage's go build line as it is written; either way the
// binary must be static, stamped with the build arguments, and serve with the image's
// command.
func TestDockerfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	stages := parseDockerfile(t, string(mustReadFile(t, inRoot("deploy/Dockerfile"))))
	if len(stages) != 2 {
		t.Fatalf("%d stages: want a build stage and the image", len(stages))
	}
	build, final := stages[0], stages[1]
	goMod := string(mustReadFile(t, inRoot("go.mod")))
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if goVersion == nil || !strings.HasPrefix(build.from, "golang:"+goVersion[1]) {
		t.Errorf("build stage FROM %s: want golang:%s (go.mod's)", build.from, goVersion)
	}
	if !strings.Contains(final.from, "distroless/static") && final.from != "scratch" {
		t.Errorf("image FROM %s: want distroless static or scratch", final.from)
	}
	user := final.last("USER")
	if user == "" || user == "root" || user == "0" || strings.HasPrefix(user, "0:") {
		t.Errorf("image USER %q: want a non-root user", user)
	}
	if v := final.last("VOLUME"); v != "/data" {
		t.Errorf("VOLUME %q, want /data", v)
	}
	if p := final.last("EXPOSE"); p != "8080" {
		t.Errorf("EXPOSE %q, want 8080", p)
	}
	var cmd []string
	if err := jsonArray(final.last("CMD"), &cmd); err != nil || !slices.Contains(cmd, "serve") || flagValue(cmd, "--data") != "/data" {
		t.Fatalf("CMD %s: want serve --data /data (%v)", final.last("CMD"), err)
	}
	var run string
	for _, r := range build.all("RUN") {
		if strings.Contains(r, "go build") {
			run = r
		}
	}
	if !strings.Contains(run, "CGO_ENABLED=0") {
		t.Fatalf("the build stage's go build line %q does not set CGO_ENABLED=0", run)
	}

	if exec.Command("docker", "info").Run() == nil {
		dockerBuild(t, cmd)
		return
	}
	t.Log("no working container engine (docker info failed): running the Dockerfile's build line instead")
	out := t.TempDir()
	shell := strings.ReplaceAll(run, "/out/", out+"/")
	if strings.Contains(shell, "/out") {
		t.Fatalf("the build line writes outside /out/: %s", run)
	}
	c := exec.Command("sh", "-c", shell)
	c.Dir = moduleRoot // the build stage's WORKDIR holds the module
	c.Env = append(os.Environ(), "GOFLAGS=", "VERSION=v0.0.0-docker", "REVISION=feedface")
	if msg, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", shell, err, msg)
	}
	bin := filepath.Join(out, "interviewd")
	if st, err := os.Stat(filepath.Join(out, "data")); err != nil || !st.IsDir() {
		t.Errorf("the build stage makes no data folder for the volume: %v", err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader: it would not start on distroless static")
		}
	}
	f.Close()
	if got, want := runVersion(t, bin), "interviewd v0.0.0-docker (revision feedface, "+runtime.Version()+")"; got != want {
		t.Errorf("version: %q, want %q", got, want)
	}
	serveCommandLine(t, bin, cmd)
}

// dockerBuild builds the image, runs `version` in it and starts it with its command.
func dockerBuild(t *testing.T, cmd []string) {
	tag := fmt.Sprintf("interviewd-test:%d", os.Getpid())
	build := exec.Command("docker", "build", "-f", filepath.Join("deploy", "Dockerfile"), "-t", tag,
		"--build-arg", "VERSION=v0.0.0-docker", "--build-arg", "REVISION=feedface", ".")
	build.Dir = moduleRoot // the build context
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })
	out, err := exec.Command("docker", "run", "--rm", tag, "version").Output()
	if got, want := strings.TrimSpace(string(out)), "interviewd v0.0.0-docker (revision feedface, "; err != nil || !strings.HasPrefix(got, want) {
		t.Fatalf("docker run %s version: %q, %v; want %s...", tag, got, err, want)
	}
	p := startLogged(t, exec.Command("docker", "run", "--rm", "--init", tag))
	p.waitLog(t, `"message":"listening"`, `"data":"/data"`)
}

// serveCommandLine runs bin with a deployment's serve arguments, its --data and --addr
// moved to a temporary folder and a free loopback port, until it serves, then stops it
// with SIGTERM, which must end it cleanly.
func serveCommandLine(t *testing.T, bin string, args []string) {
	t.Helper()
	args = append([]string(nil), args...)
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--data":
			args[i+1] = t.TempDir()
		case "--addr":
			args[i+1] = "127.0.0.1:0"
		}
	}
	p := startLogged(t, exec.Command(bin, args...))
	p.waitLog(t, `"message":"listening"`)
	if code := p.stop(t); code != 0 {
		t.Fatalf("%s %v exited %d on SIGTERM:\n%s", bin, args, code, p.logs.String())
	}
}

// unitKeys returns every Key=value of a systemd unit, values in file order.
func unitKeys(unit string) map[string][]string {
	keys := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(unit))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[k] = append(keys[k], v)
		}
	}
	return keys
}

// dockerStage is one FROM of a Dockerfile and its instructions.
type dockerStage struct {
	from  string
	instr [][2]string // instruction (upper case), arguments
}

func (s dockerStage) all(name string) []string {
	var out []string
	for _, in := range s.instr {
		if in[0] == name {
			out = append(out, in[1])
		}
	}
	return out
}

func (s dockerStage) last(name string) string {
	all := s.all(name)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// parseDockerfile splits a Dockerfile into stages, joining continued lines.
func parseDockerfile(t *testing.T, text string) []dockerStage {
	t.Helper()
	var stages []dockerStage
	var line string
	for _, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSpace(raw)
		if line == "" && (raw == "" || strings.HasPrefix(raw, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(raw, "\\"); ok {
			line += cont + " "
			continue
		}
		line += raw
		name, args, _ := strings.Cut(line, " ")
		name, args, line = strings.ToUpper(name), strings.TrimSpace(args), ""
		if name == "FROM" {
			image, _, _ := strings.Cut(args, " ")
			stages = append(stages, dockerStage{from: image})
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("%s before FROM", name)
		}
		stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, [2]string{name, args})
	}
	return stages
}

// jsonArray decodes an instruction's exec form (["a", "b"]).
func jsonArray(s string, v *[]string) error {
	if !strings.HasPrefix(s, "[") {
		return fmt.Errorf("%q is not in exec form", s)
	}
	return json.Unmarshal([]byte(s), v)
}

// flagValue returns the argument after flag in args, or "".
func flagValue(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
