package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/logbatch"
	"interviewd/moderator"
	"interviewd/server"
)

// benchOwner is the in-process organisation's owner: the person the app scenarios sign in.
const benchOwner = "research@bench.example.com"

// target is the server under load: booted in-process, or a running one (--url).
type target struct {
	baseURL  string // scheme://host:port, what request URIs start with
	addr     string // host:port to dial
	tls      bool
	key      string   // API key every scenario request carries
	agentKey string   // API key with agent:run, for the A2A scenarios (--url: --agent-key, else --key)
	studyIDs []string // studies get_study picks from
	local    bool     // booted here: the ceiling and start-up are measured too
	logPath  string   // in-process: the server's JSON log, access log included
	db       *kv.DB   // in-process: the store, for its commit counters
	close    func() error

	org          kv.ID  // in-process: the organisation everything is seeded in
	ownerEmail   string // in-process: its owner, who signs in to the app
	appSession   string // --url: --app-session
	appInterview string // --url: --app-interview
	app          appPages
}

// shutdownGrace bounds how long closing an in-process server may wait for connections.
const shutdownGrace = 5 * time.Second

// serverConfig is the one place the bench configures interviewd. Limits that would
// throttle a load test (per-key rate limits, once server.Config has them) are switched
// off here and nowhere else, so every in-process server the bench boots measures the
// request path, not the limiter. runner is the background work and the interviewer:
// the built-in engine, as a default instance runs it.
func serverConfig(db *kv.DB, runner *jobs.Runner, log, access zerolog.Logger, baseURL string, limits server.RateLimits) server.Config {
	return server.Config{DB: db, Jobs: runner, Log: log, AccessLog: true, AccessLogger: &access, BaseURL: baseURL, RateLimits: &limits}
}

// benchScopes is every scope but agent:run: what a research integration holds.
func benchScopes() []string {
	return slices.DeleteFunc(slices.Clone(kv.AllScopes), func(s string) bool { return s == kv.ScopeAgentRun })
}

// instance is an in-process interviewd on a temporary folder: its store, its access log
// file and, once started, its server.
type instance struct {
	dir     string
	db      *kv.DB
	logFile *os.File
	logOut  *logbatch.Writer // batches the access log's lines, as `interviewd serve` does
	log     zerolog.Logger
	access  zerolog.Logger // the access log's routine lines
	key     string
	agent   string // a key holding agent:run as well, for the A2A scenarios
	org     kv.Org
	limits  server.RateLimits // off unless --rate-limits asks otherwise
}

// newInstance creates a temporary folder holding a data folder with one organisation and
// one live key, and a JSON log file. It returns an error if any of them cannot be made.
func newInstance(ctx context.Context) (*instance, error) {
	return newInstanceWith(ctx, kv.Options{})
}

// newInstanceWith is newInstance with the store opened with opts.
func newInstanceWith(ctx context.Context, opts kv.Options) (*instance, error) {
	dir, err := os.MkdirTemp("", "interviewd-bench-")
	if err != nil {
		return nil, err
	}
	in := &instance{dir: dir, limits: server.RateLimits{Off: true}}
	fail := func(err error) (*instance, error) {
		_ = in.close()
		return nil, err
	}
	if in.logFile, err = os.Create(filepath.Join(dir, "server.log")); err != nil {
		return fail(err)
	}
	pprof.Do(ctx, serverSide, func(context.Context) { // its goroutines inherit the label
		in.logOut = logbatch.New(in.logFile, logbatch.DefaultDelay)
		in.db, err = kv.Open(filepath.Join(dir, "data"), opts)
	})
	in.log = zerolog.New(in.logOut).With().Timestamp().Logger()
	in.access = zerolog.New(in.logOut.Batched()).With().Timestamp().Logger()
	if err != nil {
		return fail(err)
	}
	if in.org, _, err = in.db.CreateOrg(ctx, kv.OrgInput{Name: "Fieldwork Bench Ltd", Email: benchOwner}); err != nil {
		return fail(fmt.Errorf("create organisation: %w", err))
	}
	if _, in.key, err = in.db.CreateKey(ctx, kv.KeyInput{OrgID: in.org.ID, Name: "bench", Environment: kv.EnvLive, Scopes: benchScopes()}); err != nil {
		return fail(fmt.Errorf("create key: %w", err))
	}
	agentScopes := append(benchScopes(), kv.ScopeAgentRun)
	if _, in.agent, err = in.db.CreateKey(ctx, kv.KeyInput{OrgID: in.org.ID, Name: "bench agent", Environment: kv.EnvLive, Scopes: agentScopes}); err != nil {
		return fail(fmt.Errorf("create agent key: %w", err))
	}
	return in, nil
}

// serverSide labels the in-process server's goroutines (its connections, its store's
// committer, its jobs) in a --cpuprofile, so `go tool pprof -tagfocus side=server` shows
// the server's CPU apart from the load generator's in the same process.
var serverSide = pprof.Labels("side", "server")

// serve boots the server on a fresh 127.0.0.1 port. stop shuts it down and waits for
// Serve to return; it returns Serve's or Shutdown's error.
func (in *instance) serve() (baseURL string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	baseURL = "http://" + ln.Addr().String()
	var (
		runner *jobs.Runner
		srv    *server.Server
	)
	served := make(chan error, 1)
	pprof.Do(context.Background(), serverSide, func(context.Context) {
		runner = jobs.NewRunner(jobs.Config{DB: in.db, Moderator: moderator.NewBuiltin(), Log: in.log})
		srv = server.New(serverConfig(in.db, runner, in.log, in.access, baseURL, in.limits))
		go func() { served <- srv.Serve(ln) }()
	})
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err := srv.Shutdown(ctx)
		return errors.Join(err, <-served, runner.Close(ctx))
	}
	return baseURL, stop, nil
}

// close releases the store and the log and removes the folder.
func (in *instance) close() error {
	var errs []error
	if in.db != nil {
		errs = append(errs, in.db.Close())
	}
	if in.logOut != nil {
		errs = append(errs, in.logOut.Close())
	}
	if in.logFile != nil {
		errs = append(errs, in.logFile.Close())
	}
	errs = append(errs, os.RemoveAll(in.dir))
	return errors.Join(errs...)
}

// openLocal boots interviewd in-process with studies seeded studies, its store opened
// with dbOpts. It returns an error if the folder, store, seed or listener cannot be made.
func openLocal(ctx context.Context, studies int, progress io.Writer, limits server.RateLimits, dbOpts kv.Options) (*target, error) {
	in, err := newInstanceWith(ctx, dbOpts)
	if err != nil {
		return nil, err
	}
	in.limits = limits
	start := time.Now()
	ids, err := seedStudies(ctx, in.db, kv.Partition{Org: in.org.ID, Env: kv.EnvLive}, studies)
	if err != nil {
		_ = in.close()
		return nil, err
	}
	fmt.Fprintf(progress, "seeded %d studies in %s (data and server.log in %s)\n", len(ids), time.Since(start).Round(time.Millisecond), in.dir)
	baseURL, stop, err := in.serve()
	if err != nil {
		_ = in.close()
		return nil, err
	}
	return &target{
		baseURL: baseURL, addr: baseURL[len("http://"):], key: in.key, agentKey: in.agent, studyIDs: ids, local: true,
		logPath: in.logFile.Name(), db: in.db, org: in.org.ID, ownerEmail: benchOwner,
		close: func() error { return errors.Join(stop(), in.close()) },
	}, nil
}

// openRemote targets the running server at rawURL, collecting up to studies study ids
// through the API. It returns an error if the URL is malformed or the listing fails.
func openRemote(ctx context.Context, rawURL, key string, studies int) (*target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	t := &target{baseURL: u.Scheme + "://" + u.Host, addr: u.Host, tls: u.Scheme == "https", key: key, agentKey: key, close: func() error { return nil }}
	if u.Port() == "" {
		port := "80"
		if t.tls {
			port = "443"
		}
		t.addr = net.JoinHostPort(u.Hostname(), port)
	}
	if t.studyIDs, err = listStudyIDs(ctx, t, studies); err != nil {
		return nil, err
	}
	return t, nil
}
