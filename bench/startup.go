package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// startupDeadline bounds the wait for a freshly booted server's first answer, and
// stopDeadline for a process to exit after SIGTERM: generous, so that only a hang
// fails a run, never a busy machine.
const (
	startupDeadline = time.Minute
	stopDeadline    = time.Minute
)

// measureStartup boots interviewd on a fresh folder holding only an organisation and a
// key, and returns the time from server.New and listen to the first 200 answer of
// GET /v1/api/me (connect, route, authenticate, encode: everything the first caller
// waits for). It returns an error if the instance cannot be made or no 200 comes in
// time.
func measureStartup(ctx context.Context) (d time.Duration, err error) {
	in, err := newInstance(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, in.close()) }()
	start := time.Now()
	baseURL, stop, err := in.serve()
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	t := &target{baseURL: baseURL, addr: baseURL[len("http://"):], key: in.key}
	for {
		resp, err := apiGet(t, "/v1/api/me")
		if err == nil {
			status := resp.StatusCode()
			fasthttp.ReleaseResponse(resp)
			if status == fasthttp.StatusOK {
				return time.Since(start), nil
			}
			err = fmt.Errorf("GET /v1/api/me answered %d", status)
		}
		if ctx.Err() != nil || time.Since(start) > startupDeadline {
			return 0, fmt.Errorf("start-up: no successful answer within %s: %w", startupDeadline, errors.Join(err, ctx.Err()))
		}
	}
}

// The exec figures: start-up and stop as an operator meets them, from exec of the
// stripped binary (package init, the bbolt file and its fsyncs, every surface's set-up)
// to its first 200, against a bare fasthttp binary built and measured the same way in
// the same run.

// execFigures is what measureExec measured. Durations are medians over the runs.
type execFigures struct {
	Runs     int
	First200 time.Duration // interviewd: exec to the first 200, on an empty data folder
	// First200Existing is interviewd's exec to the first 200 on a copy of a data folder
	// already holding ExistingStudies studies; 0 when ExistingStudies is 0.
	First200Existing time.Duration
	ExistingStudies  int
	BareFirst        time.Duration // the bare fasthttp binary, measured the same way
	Stop             time.Duration // interviewd: SIGTERM to exit, idle
	StopMax          time.Duration // the slowest stop over every run
	Idle             time.Duration // how long the server idled before IdleRSSAnon was read
	IdleRSSAnon      int64         // bytes of anonymous resident memory after Idle
	Binary           int64         // bytes of the stripped interviewd binary
	BareBinary       int64
}

// ratio is interviewd's exec-to-first-200 as a multiple of the bare binary's.
func (f execFigures) ratio() float64 {
	if f.BareFirst <= 0 {
		return 0
	}
	return float64(f.First200) / float64(f.BareFirst)
}

// probePath is what the first request asks for: the liveness check, answered 200
// without authentication by a server that is up (the bare binary answers 200 to
// anything).
const probePath = "/healthz"

// execOptions is what measureExec runs.
type execOptions struct {
	Runs int
	Idle time.Duration
	// Studies, when positive, is how many studies the existing data folder holds: each
	// run then also execs interviewd on a copy of it.
	Studies int
	// Binary, when set, is a prebuilt interviewd to exec instead of building one from
	// this tree (the bare binary is built either way).
	Binary string
}

// measureExec builds interviewd (unless o.Binary names one) and bench/bare with
// `go build -ldflags='-s -w'` into a temporary folder, then runs each o.Runs times,
// alternating, on a fresh empty data folder: exec to the first 200 of GET probePath,
// then SIGTERM to exit. With o.Studies, it first seeds a data folder with that many
// studies, and each run also execs interviewd on a fresh copy of it: an idle start-up of
// this tree leaves interviewd.db as it was, but another build (o.Binary) may migrate it
// at open, and a copy per run keeps every run on the same bytes whatever the build. A last interviewd run idles for o.Idle
// before its anonymous resident memory is read from /proc. It returns an error if a
// build or the seed fails, a process does not answer 200 within startupDeadline, or
// interviewd exits non-zero on SIGTERM.
func measureExec(ctx context.Context, o execOptions, progress io.Writer) (f execFigures, err error) {
	dir, err := os.MkdirTemp("", "interviewd-bench-exec-")
	if err != nil {
		return f, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	bin, bare := filepath.Join(dir, "interviewd"), filepath.Join(dir, "bare")
	builds := []struct{ out, pkg string }{{bin, "interviewd"}, {bare, "interviewd/bench/bare"}}
	if o.Binary != "" {
		bin, builds = o.Binary, builds[1:]
		fmt.Fprintf(progress, "exec: timing %s; building bench/bare with -ldflags='-s -w' in %s\n", bin, dir)
	} else {
		fmt.Fprintf(progress, "exec: building interviewd and bench/bare with -ldflags='-s -w' in %s\n", dir)
	}
	for _, b := range builds {
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", b.out, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return f, fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	if f.Binary, err = fileSize(bin); err != nil {
		return f, err
	}
	if f.BareBinary, err = fileSize(bare); err != nil {
		return f, err
	}
	seeded := filepath.Join(dir, "seeded")
	if o.Studies > 0 {
		start := time.Now()
		if err := seedFolder(ctx, seeded, o.Studies); err != nil {
			return f, err
		}
		fmt.Fprintf(progress, "exec: seeded a data folder with %d studies in %s\n", o.Studies, time.Since(start).Round(time.Millisecond))
	}
	runs := max(o.Runs, 1)
	var first, bareFirst, existing, stops []time.Duration
	for i := range runs {
		b, err := execOnce(ctx, bare, nil, 0)
		if err != nil {
			return f, fmt.Errorf("bare: %w", err)
		}
		r, err := execOnce(ctx, bin, []string{"--data", filepath.Join(dir, fmt.Sprintf("data-%d", i))}, 0)
		if err != nil {
			return f, fmt.Errorf("interviewd: %w", err)
		}
		bareFirst, first, stops = append(bareFirst, b.first200), append(first, r.first200), append(stops, r.stop)
		if o.Studies > 0 {
			d, err := execExisting(ctx, bin, seeded, filepath.Join(dir, fmt.Sprintf("existing-%d", i)))
			if err != nil {
				return f, fmt.Errorf("interviewd on %d studies: %w", o.Studies, err)
			}
			existing = append(existing, d)
		}
	}
	fmt.Fprintf(progress, "exec: idling a fresh interviewd for %s to read its memory\n", o.Idle)
	r, err := execOnce(ctx, bin, []string{"--data", filepath.Join(dir, "data-idle")}, o.Idle)
	if err != nil {
		return f, fmt.Errorf("interviewd: %w", err)
	}
	stops = append(stops, r.stop)
	f.Runs, f.Idle, f.IdleRSSAnon = runs, o.Idle, r.rssAnon
	f.First200, f.BareFirst = median(first), median(bareFirst)
	f.First200Existing, f.ExistingStudies = median(existing), o.Studies
	f.Stop, f.StopMax = median(stops), slices.Max(stops)
	return f, nil
}

// seedFolder makes dst a closed interviewd data folder holding an organisation, its keys
// and n studies, seeded through kv as the in-process server's are. Nothing needs it to
// survive a crash, so its commits skip fsync.
func seedFolder(ctx context.Context, dst string, n int) (err error) {
	in, err := newInstanceWith(ctx, kv.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.close()) }()
	if err := seedStudiesConcurrently(ctx, in.db, kv.Partition{Org: in.org.ID, Env: kv.EnvLive}, n); err != nil {
		return err
	}
	db := in.db
	in.db = nil // closed here, so that in.close does not close it again
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(filepath.Join(in.dir, "data"), dst)
}

// execExisting copies the data folder seeded to dst, execs bin on the copy, returns its
// exec to first 200 and removes the copy. The copy is made and synced before the clock
// starts: its pages are in the page cache, as a server restarted on a live machine finds
// them, and no write-back of it is left to slow this run's or the next runs' fsyncs.
func execExisting(ctx context.Context, bin, seeded, dst string) (time.Duration, error) {
	if err := os.CopyFS(dst, os.DirFS(seeded)); err != nil {
		return 0, fmt.Errorf("copy the seeded data folder: %w", err)
	}
	if err := syncFiles(dst); err != nil {
		return 0, errors.Join(fmt.Errorf("sync the copied data folder: %w", err), os.RemoveAll(dst))
	}
	r, err := execOnce(ctx, bin, []string{"--data", dst}, 0)
	return r.first200, errors.Join(err, os.RemoveAll(dst))
}

// syncFiles fsyncs every regular file under dir.
func syncFiles(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		return errors.Join(f.Sync(), f.Close())
	})
}

// execRun is one process's life as execOnce measured it.
type execRun struct {
	first200 time.Duration
	stop     time.Duration
	rssAnon  int64 // bytes, read after the idle wait
}

// execOnce starts bin with --addr on a free loopback port and args, polls GET probePath
// until it answers 200, waits idle, reads the process's RssAnon, then sends SIGTERM and
// waits for it to exit. It returns an error if no 200 comes within startupDeadline, the
// process exits early, non-zero or not within stopDeadline of SIGTERM, or its memory
// cannot be read.
func execOnce(ctx context.Context, bin string, args []string, idle time.Duration) (r execRun, err error) {
	addr, err := freeAddr()
	if err != nil {
		return r, err
	}
	cmd := exec.Command(bin, append([]string{"--addr", addr}, args...)...)
	exited := make(chan error, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if err != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	hc := &fasthttp.HostClient{Addr: addr}
	defer hc.CloseIdleConnections()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + probePath)
	for {
		err := hc.DoTimeout(req, resp, startupDeadline)
		if err == nil && resp.StatusCode() == fasthttp.StatusOK {
			r.first200 = time.Since(start)
			break
		}
		select {
		case werr := <-exited:
			return r, fmt.Errorf("exited before answering 200: %v", werr)
		case <-ctx.Done():
			return r, ctx.Err()
		default:
		}
		if time.Since(start) > startupDeadline {
			return r, fmt.Errorf("no 200 for GET %s within %s (last: %v, status %d)", probePath, startupDeadline, err, resp.StatusCode())
		}
		pollPause(100 * time.Microsecond) // a refused connect returns at once: do not spin
	}
	hc.CloseIdleConnections()
	select {
	case <-time.After(idle): // the bench measures an idle server: waiting is the point
	case <-ctx.Done():
		return r, ctx.Err()
	}
	if r.rssAnon, err = rssAnon(cmd.Process.Pid); err != nil {
		return r, err
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return r, err
	}
	select {
	case err := <-exited:
		if err != nil {
			return r, fmt.Errorf("on SIGTERM: %w", err)
		}
	case <-time.After(stopDeadline):
		return r, fmt.Errorf("still running %s after SIGTERM", stopDeadline)
	}
	r.stop = time.Since(t0)
	return r, nil
}

// freeAddr returns a loopback address with a port nothing listens on right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// rssAnon returns process pid's anonymous resident memory in bytes, from
// /proc/PID/status (Linux), or an error where that cannot be read.
func rssAnon(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read memory: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read memory: RssAnon %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read memory: no RssAnon in /proc/%d/status", pid)
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// median returns the middle value of ds (the upper one for an even count), or 0.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}
