package wholebinary

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"interviewd/kv"
)

// The crash suite: the real binary, under concurrent link creation, participant
// sessions and messages, authoring and simulation jobs, is killed with SIGKILL at
// random moments and restarted on the same data folder. After every kill the bbolt file
// passes tx.Check; after every restart every acknowledged write is there (and replays
// identically under its Idempotency-Key); at the end every acknowledged job has
// finished (ready or failed), none is stuck.
//
// Reproducing a failure: the seed is logged; run with -crash.seed=N (and the same
// -crash.cycles). The kill moments are drawn from the seed as a number of acknowledged
// writes to wait for plus a short extra delay, so a busy machine changes how much
// happens between kills, never what is asserted.

var (
	crashCycles = flag.Int("crash.cycles", 20, "crash suite: kill -9 and restart cycles")
	crashSeed   = flag.Uint64("crash.seed", 0, "crash suite: seed of the random kill moments (0 picks one and logs it)")
)

// crashDeadline bounds every wait of the suite: start-up, readiness, job completion.
// Generous on purpose: CI machines are busy.
const crashDeadline = 120 * time.Second

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash suite skipped in -short mode (it builds and kills the real binary)")
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash suite: seed %d, %d cycles (reproduce with -crash.seed=%d -crash.cycles=%d)", seed, *crashCycles, seed, *crashCycles)
	rng := rand.New(rand.NewPCG(seed, 0x1e))

	start := time.Now()
	bin := buildCrashBinary(t)
	t.Logf("built in %v", time.Since(start).Round(time.Millisecond))
	data := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	crashAdmin(t, bin, &org, "setup", "--data", data, "--org", "Crash Research", "--email", "crash@example.test")
	var key struct {
		Secret string `json:"secret"`
	}
	crashAdmin(t, bin, &key, "keys", "create", "--data", data, "--org", org.OrgID, "--name", "crash", "--env", "live",
		"--scopes", strings.Join(kv.AllScopes, ","))

	c := &crashClient{key: key.Secret, http: &http.Client{Timeout: 60 * time.Second}}
	srv := startCrashBinary(t, bin, data)
	c.base = srv.url
	t.Logf("set up and started in %v", time.Since(start).Round(time.Millisecond))
	studyID := c.mustAuthor(t, "Learn how small teams plan their week and which tools they abandon.")
	t.Logf("study authored at %v", time.Since(start).Round(time.Millisecond))
	ledger := &crashLedger{}
	resumed := 0

	for cycle := 1; cycle <= *crashCycles; cycle++ {
		// A random number of acknowledged writes to wait for, then a random extra delay
		// so the kill lands in the middle of requests rather than between them.
		waitAcks := 3 + rng.IntN(40)
		extra := time.Duration(rng.IntN(30)) * time.Millisecond
		workers := make([]uint64, 4)
		for i := range workers {
			workers[i] = rng.Uint64()
		}
		cycleStart := time.Now()

		ctx, stopLoad := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		before := ledger.acks()
		for i, ws := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.load(ctx, rand.New(rand.NewPCG(ws, uint64(i))), ledger, studyID, fmt.Sprintf("c%dw%d", cycle, i))
			}()
		}
		crashWait(t, srv, "acknowledged writes", func() bool { return ledger.acks()-before >= waitAcks })
		time.Sleep(extra)
		srv.kill(t)
		stopLoad()
		wg.Wait()
		mustCheckBolt(t, filepath.Join(data, kv.FileName))

		killed := time.Now()
		srv = startCrashBinary(t, bin, data)
		c.base = srv.url
		restarted := time.Now()
		c.verify(t, ledger, false)
		n := strings.Count(srv.logs.String(), "resuming job left unfinished")
		resumed += n
		t.Logf("cycle %d: killed after %d acknowledged writes + %v; %d jobs resumed (load %v, restart %v, verify %v)", cycle, waitAcks, extra, n,
			killed.Sub(cycleStart).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	}
	verifyStart := time.Now()

	c.verify(t, ledger, true)
	c.waitJobs(t, ledger)
	links, sessions, messages, jobs := ledger.counts()
	t.Logf("final check and jobs finished in %v", time.Since(verifyStart).Round(time.Millisecond))
	t.Logf("crash suite: %d cycles; verified %d links, %d participant sessions with %d messages, %d jobs all finished (%d resumes after a kill)",
		*crashCycles, links, sessions, messages, jobs, resumed)
	if *crashCycles > 0 && (links == 0 || messages == 0 || jobs == 0) {
		t.Fatalf("the load acknowledged too little to prove anything: %d links, %d messages, %d jobs", links, messages, jobs)
	}
	stopStart := time.Now()
	srv.stop(t)
	mustCheckBolt(t, filepath.Join(data, kv.FileName))
	t.Logf("stopped in %v", time.Since(stopStart).Round(time.Millisecond))
}

// buildCrashBinary builds the program once, normally (not with -race: the suite tests the
// binary, not the detector).
func buildCrashBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "interviewd")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// crashAdmin runs one admin command of the binary and decodes its JSON output.
func crashAdmin(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("interviewd %v: %v\n%s", args, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("interviewd %v printed %q: %v", args, stdout.String(), err)
	}
}

// crashLog keeps a process's log lines for the checks and failure messages.
type crashLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *crashLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line)
	l.b.WriteByte('\n')
}

func (l *crashLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// crashProcess is one run of the binary.
type crashProcess struct {
	cmd    *exec.Cmd
	url    string
	logs   *crashLog
	exited chan struct{}
}

var crashListening = regexp.MustCompile(`"addr":"([^"]+)"`)

// startCrashBinary starts the server on a free loopback port, reads its address from the
// "listening" log line and waits until it answers.
func startCrashBinary(t *testing.T, bin, data string, extra ...string) *crashProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--rate-limits", "off", "--log-format", "json"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &crashProcess{cmd: cmd, logs: &crashLog{}, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.logs.add(line)
			if m := crashListening.FindStringSubmatch(line); m != nil && strings.Contains(line, `"listening"`) {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.exited:
		t.Fatalf("server exited before listening:\n%s", p.logs.String())
	case <-time.After(crashDeadline):
		t.Fatalf("server did not log its address within %v:\n%s", crashDeadline, p.logs.String())
	}
	crashWait(t, p, "readiness", func() bool {
		resp, err := http.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *crashProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(crashDeadline):
		t.Fatal("the killed server did not exit")
	}
}

// stop asks for a graceful stop and expects a clean exit.
func (p *crashProcess) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(crashDeadline):
		t.Fatal("the server did not stop on SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("graceful stop exited %d:\n%s", code, logTail(p.logs.String(), 20))
	}
}

// crashWait polls cond with the suite's deadline; it fails early if the server exits.
func crashWait(t *testing.T, p *crashProcess, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(crashDeadline)
	for !cond() {
		select {
		case <-p.exited:
			t.Fatalf("server exited while waiting for %s:\n%s", what, logTail(p.logs.String(), 30))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v:\n%s", what, crashDeadline, logTail(p.logs.String(), 30))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func logTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// mustCheckBolt opens the data file with bbolt itself, as nothing else holds it, and
// runs its consistency check.
func mustCheckBolt(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("open %s after the kill: %v", path, err)
	}
	defer db.Close()
	var problems []string
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			problems = append(problems, err.Error())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("tx.Check after the kill: %s", strings.Join(problems, "; "))
	}
}

// crashLedger records every write the server acknowledged with a 2xx.
type crashLedger struct {
	mu       sync.Mutex
	n        int
	links    []ackedWrite // participant links
	sessions []*ackedSession
	jobs     []ackedJob
	// verified marks how far each list was checked after a restart.
	verifiedLinks, verifiedSessions, verifiedJobs int
}

type ackedSession struct {
	token, session string
	texts          []string // acknowledged answers, in order
}

// ackedWrite is an acknowledged idempotent write: replaying its Idempotency-Key and
// body after any number of kills must answer the same.
type ackedWrite struct {
	path, key, body string
	answer          []byte
}

type ackedJob struct {
	kind, id string // kind: authoring or simulation
	write    ackedWrite
}

func (l *crashLedger) acks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *crashLedger) counts() (links, sessions, messages, jobs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.sessions {
		messages += len(s.texts)
	}
	return len(l.links), len(l.sessions), messages, len(l.jobs)
}

func (l *crashLedger) addLink(w ackedWrite) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.links = append(l.links, w)
	l.n++
}

func (l *crashLedger) addSession(s *ackedSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sessions = append(l.sessions, s)
	l.n++
}

func (l *crashLedger) addText(s *ackedSession, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.texts = append(s.texts, text)
	l.n++
}

func (l *crashLedger) addJob(j ackedJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs = append(l.jobs, j)
	l.n++
}

// crashClient talks to whichever crashProcess currently serves, or spreads its
// requests over several (nodes, when set: base is then ignored).
type crashClient struct {
	base  string
	key   string
	http  *http.Client
	nodes *spread
}

// call sends one request; err is a transport failure (the server died mid-request).
func (c *crashClient) call(ctx context.Context, method, path, body string, headers ...string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	base := c.base
	if c.nodes != nil {
		base = c.nodes.next()
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if strings.HasPrefix(path, "/v1/") {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err // a response cut short is not an acknowledgement
	}
	return resp.StatusCode, raw, nil
}

// mustCall is call for the checks, where the server must answer.
func (c *crashClient) mustCall(t *testing.T, method, path, body string, headers ...string) (int, []byte) {
	t.Helper()
	status, raw, err := c.call(context.Background(), method, path, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, raw
}

func crashDecode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// mustAuthor creates a study through the API and waits for its authoring job.
func (c *crashClient) mustAuthor(t *testing.T, guidance string) string {
	t.Helper()
	status, raw := c.mustCall(t, "POST", "/v1/api/studies", fmt.Sprintf(`{"guidance":%q}`, guidance))
	if status != 202 {
		t.Fatalf("create study: %d %s", status, raw)
	}
	var handle struct {
		JobID string `json:"job_id"`
	}
	crashDecode(t, raw, &handle)
	var studyID string
	deadline := time.Now().Add(crashDeadline)
	for studyID == "" {
		status, raw := c.mustCall(t, "GET", "/v1/api/studies/jobs/"+handle.JobID, "")
		var st struct {
			Status  string `json:"status"`
			StudyID string `json:"study_id"`
		}
		if status == 200 {
			crashDecode(t, raw, &st)
		}
		switch {
		case status == 200 && st.Status == "ready":
			studyID = st.StudyID
		case status != 200 || st.Status == "failed":
			t.Fatalf("authoring: %d %s", status, raw)
		case time.Now().After(deadline):
			t.Fatalf("authoring not ready within %v", crashDeadline)
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	return studyID
}

// load writes until ctx ends or the server goes away, recording every acknowledged
// write. Requests that fail in transport are simply not acknowledged.
func (c *crashClient) load(ctx context.Context, rng *rand.Rand, l *crashLedger, studyID, tag string) {
	for n := 0; ctx.Err() == nil; n++ {
		ref := fmt.Sprintf("%s-%d", tag, n)
		switch r := rng.IntN(10); {
		case r < 3:
			if _, err := c.createLink(ctx, l, studyID, ref, []string{"group", "person"}[rng.IntN(2)]); err != nil {
				return
			}
		case r < 8:
			if err := c.participate(ctx, rng, l, studyID, ref); err != nil {
				return
			}
		case r < 9:
			w := ackedWrite{path: "/v1/api/studies", key: ref, body: fmt.Sprintf(`{"guidance":"Crash %s: learn how people choose a bicycle shop."}`, ref)}
			if err := c.startJob(ctx, l, "authoring", w); err != nil {
				return
			}
		default:
			w := ackedWrite{path: "/v1/api/studies/" + studyID + ":simulate", key: ref, body: fmt.Sprintf(`{"max_turns":%d}`, 2+rng.IntN(30))}
			if err := c.startJob(ctx, l, "simulation", w); err != nil {
				return
			}
		}
	}
}

// startJob starts a job with an Idempotency-Key and records it when acknowledged.
func (c *crashClient) startJob(ctx context.Context, l *crashLedger, kind string, w ackedWrite) error {
	status, raw, err := c.call(ctx, "POST", w.path, w.body, "Idempotency-Key", w.key)
	if err != nil || status/100 != 2 {
		return err // refused (a full queue, the simulation limit): not acknowledged
	}
	var handle struct {
		JobID string `json:"job_id"`
	}
	if json.Unmarshal(raw, &handle) == nil && handle.JobID != "" {
		w.answer = raw
		l.addJob(ackedJob{kind: kind, id: handle.JobID, write: w})
	}
	return nil
}

// createLink mints a participant link and records its token when acknowledged.
func (c *crashClient) createLink(ctx context.Context, l *crashLedger, studyID, ref, audience string) (string, error) {
	w := ackedWrite{path: "/v1/api/studies/" + studyID + "/participant-links", key: ref,
		body: fmt.Sprintf(`{"context":{"ref":%q},"audience":%q,"note":"crash suite"}`, ref, audience)}
	status, raw, err := c.call(ctx, "POST", w.path, w.body, "Idempotency-Key", w.key)
	if err != nil || status != 200 {
		return "", err
	}
	var link struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &link) != nil {
		return "", nil
	}
	i := strings.LastIndex(link.URL, "/i/")
	if i < 0 {
		return "", nil
	}
	token := link.URL[i+3:]
	w.answer = raw
	l.addLink(w)
	return token, nil
}

// participate opens a fresh group link as a participant and answers a few questions.
func (c *crashClient) participate(ctx context.Context, rng *rand.Rand, l *crashLedger, studyID, ref string) error {
	token, err := c.createLink(ctx, l, studyID, ref, "group")
	if err != nil || token == "" {
		return err
	}
	status, raw, err := c.call(ctx, "POST", "/i/"+token+"/session", "")
	if err != nil || status != 200 {
		return err
	}
	var opened struct {
		Session *string `json:"session"`
	}
	if json.Unmarshal(raw, &opened) != nil || opened.Session == nil {
		return nil
	}
	s := &ackedSession{token: token, session: *opened.Session}
	l.addSession(s)
	for i := range 1 + rng.IntN(4) {
		text := fmt.Sprintf("Answer %d of %s: I plan on Sundays with paper.", i, ref)
		status, _, err := c.call(ctx, "POST", "/i/"+token+"/messages", fmt.Sprintf(`{"text":%q}`, text), "X-Interview-Session", s.session)
		if err != nil {
			return err
		}
		if status != 200 {
			return nil // the interview finished: nothing more to say
		}
		l.addText(s, text)
	}
	return nil
}

// verify checks, on the restarted server, that every acknowledged write is present:
// the writes acknowledged since the last check, or all of them.
func (c *crashClient) verify(t *testing.T, l *crashLedger, all bool) {
	t.Helper()
	l.mu.Lock()
	links, sessions, jobs := l.links[l.verifiedLinks:], l.sessions[l.verifiedSessions:], l.jobs[l.verifiedJobs:]
	if all {
		links, sessions, jobs = l.links, l.sessions, l.jobs
	}
	l.verifiedLinks, l.verifiedSessions, l.verifiedJobs = len(l.links), len(l.sessions), len(l.jobs)
	l.mu.Unlock()

	for _, w := range links {
		var link struct {
			URL string `json:"url"`
		}
		crashDecode(t, w.answer, &link)
		token := link.URL[strings.LastIndex(link.URL, "/i/")+3:]
		if status, raw := c.mustCall(t, "GET", "/i/"+token, ""); status != 200 {
			t.Fatalf("acknowledged link %s is gone after the restart: %d %s", token, status, logTail(string(raw), 3))
		}
		c.mustReplay(t, w)
	}
	for _, s := range sessions {
		status, raw := c.mustCall(t, "POST", "/i/"+s.token+"/session", "", "X-Interview-Session", s.session)
		if status != 200 {
			t.Fatalf("acknowledged session on link %s: %d %s", s.token, status, raw)
		}
		var got struct {
			Session  *string `json:"session"`
			Messages []struct {
				Speaker string `json:"speaker"`
				Text    string `json:"text"`
			} `json:"messages"`
		}
		crashDecode(t, raw, &got)
		if got.Session == nil || *got.Session != s.session {
			t.Fatalf("acknowledged session on link %s was not recognised after the restart: %s", s.token, raw)
		}
		var said []string
		for _, m := range got.Messages {
			if m.Speaker == "participant" {
				said = append(said, m.Text)
			}
		}
		// Every acknowledged answer, in order; at most one more (sent as the server
		// died: stored, but its answer never arrived).
		if len(said) < len(s.texts) || len(said) > len(s.texts)+1 || !slices.Equal(said[:len(s.texts)], s.texts) {
			t.Fatalf("link %s: transcript has participant messages %q, acknowledged %q", s.token, said, s.texts)
		}
		if len(got.Messages) == 0 || got.Messages[0].Speaker != "interviewer" {
			t.Fatalf("link %s: transcript lost its opening: %s", s.token, raw)
		}
	}
	for _, j := range jobs {
		if status, raw := c.mustCall(t, "GET", crashJobPath(j), ""); status != 200 && !(status == 409 && j.kind == "authoring") {
			t.Fatalf("acknowledged %s job %s after the restart: %d %s", j.kind, j.id, status, raw)
		}
		c.mustReplay(t, j.write)
	}
}

// mustReplay sends an acknowledged write again with its Idempotency-Key: the record
// was committed with the write, so the answer is the first one, replayed.
func (c *crashClient) mustReplay(t *testing.T, w ackedWrite) {
	t.Helper()
	status, raw := c.mustCall(t, "POST", w.path, w.body, "Idempotency-Key", w.key)
	if status/100 != 2 || !bytes.Equal(raw, w.answer) {
		t.Fatalf("replaying acknowledged %s (Idempotency-Key %s) after the restart: %d %s, first answer %s", w.path, w.key, status, raw, w.answer)
	}
}

func crashJobPath(j ackedJob) string {
	if j.kind == "authoring" {
		return "/v1/api/studies/jobs/" + j.id
	}
	return "/v1/api/simulations/" + j.id
}

// waitJobs polls every acknowledged job until it has finished: ready or failed
// (authoring), completed or failed (simulation). A failed authoring job with no study
// answers 409 authoring_unconfirmed, which is finished too.
func (c *crashClient) waitJobs(t *testing.T, l *crashLedger) {
	t.Helper()
	deadline := time.Now().Add(crashDeadline)
	for _, j := range l.jobs {
		for {
			status, raw := c.mustCall(t, "GET", crashJobPath(j), "")
			var st struct {
				Status string `json:"status"`
				Code   string `json:"code"`
			}
			_ = json.Unmarshal(raw, &st)
			done, err := crashJobFinished(j.kind, status, st.Status, st.Code)
			if err != nil {
				t.Fatalf("%s job %s: %v: %s", j.kind, j.id, err, raw)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s job %s is stuck in %q after the last restart (%v)", j.kind, j.id, st.Status, crashDeadline)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func crashJobFinished(kind string, status int, state, code string) (bool, error) {
	switch {
	case kind == "authoring" && status == 409 && code == "authoring_unconfirmed":
		return true, nil
	case status != 200:
		return false, errors.New("unexpected status " + fmt.Sprint(status))
	case kind == "authoring":
		return state == "ready" || state == "failed", nil
	default:
		return state == "completed" || state == "failed", nil
	}
}
