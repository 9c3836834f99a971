package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/moderator"
	"interviewd/plugins"
	"interviewd/server/pipeline"
)

// testEnv is a real server over a real loopback socket on a real bbolt file.
type testEnv struct {
	t      *testing.T
	db     *kv.DB
	srv    *Server
	runner *jobs.Runner
	url    string
	orgA   kv.Org
	orgB   kv.Org
	keys   map[string]string // name → secret
}

const testBaseURL = "http://interviewd.test"

// baseURLListener, as Config.BaseURL, makes mustServe use the listener's own address
// as the base URL: for clients that follow the URLs the server hands out (OAuth and
// MCP SDKs).
const baseURLListener = "listener"

// withListenerBaseURL serves at the real address the listener gets.
func withListenerBaseURL() serveOption {
	return func(c *Config, _ *kv.Options) { c.BaseURL = baseURLListener }
}

// baseURLDerived, as Config.BaseURL, makes mustServe derive the base URL from the
// listener as serve does without --base-url (an unspecified --addr host becomes
// localhost): http://localhost:PORT, while the test reaches it at 127.0.0.1:PORT.
const baseURLDerived = "derived"

// withDerivedBaseURL serves with no configured base URL, as a local install does.
func withDerivedBaseURL() serveOption {
	return func(c *Config, _ *kv.Options) { c.BaseURL = baseURLDerived }
}

// testStore returns opts with the store the suite runs on: bbolt, or with
// INTERVIEWD_TEST_STORE=postgres a fresh database on the test PostgreSQL server (the
// whole server suite over the shared-store engine). A store the test chose stays.
func testStore(tb testing.TB, opts kv.Options) kv.Options {
	tb.Helper()
	if os.Getenv("INTERVIEWD_TEST_STORE") == "postgres" && opts.Store == "" {
		opts.Store = pgtest.URL(tb)
	}
	return opts
}

func mustOpenDB(tb testing.TB) *kv.DB {
	tb.Helper()
	db, err := kv.Open(tb.TempDir(), testStore(tb, kv.Options{}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// testClock is a settable clock shared by the store and the server.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// serveOption adjusts the server a test boots.
type serveOption func(*Config, *kv.Options)

// withClock makes the store and the server read clock.
func withClock(clock *testClock) serveOption {
	return func(c *Config, o *kv.Options) { c.Now, o.Now = clock.Now, clock.Now }
}

// withRateLimits sets the server's limits (the default for tests is off).
func withRateLimits(l pipeline.RateLimits) serveOption {
	return func(c *Config, _ *kv.Options) { c.RateLimits = &l }
}

// mustServe boots a server with two organisations and a set of named keys. Rate limits
// are off unless a test asks for them, so scenario tables are not limited by volume.
func mustServe(t *testing.T, opts ...serveOption) *testEnv {
	t.Helper()
	return mustServeEngine(t, moderator.NewBuiltin(), opts...)
}

// mustServeEngine is mustServe with background jobs run by engine m.
func mustServeEngine(t *testing.T, m moderator.Engine, opts ...serveOption) *testEnv {
	t.Helper()
	off := pipeline.RateLimits{Off: true}
	// The listener below is bound to 127.0.0.1.
	cfg := Config{Log: zerolog.Nop(), BaseURL: testBaseURL, AccessLog: true, RateLimits: &off, LoopbackListener: true}
	var kopts kv.Options
	for _, o := range opts {
		o(&cfg, &kopts)
	}
	db, err := kv.Open(t.TempDir(), testStore(t, kopts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// Tests ask for analyses when they want them: the analysis a completed live interview
	// asks for stays pending for longer than any test (runner.PendingAnalyses shows it).
	runner := jobs.NewRunner(jobs.Config{DB: db, Moderator: m, Log: cfg.Log, Plugins: mustPluginHost(t), Metrics: cfg.Metrics, AnalysisDelay: time.Hour})
	t.Cleanup(func() { _ = runner.Close(context.Background()) })
	cfg.DB, cfg.Jobs = db, runner
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switch cfg.BaseURL {
	case baseURLListener:
		cfg.BaseURL = "http://" + ln.Addr().String()
	case baseURLDerived:
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		cfg.BaseURL, cfg.DerivedBaseURL = "http://localhost:"+port, true
	}
	srv := New(cfg)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served // the server is gone before the next test starts
	})
	e := &testEnv{t: t, db: db, srv: srv, runner: runner, url: "http://" + ln.Addr().String(), keys: map[string]string{}}
	ctx := context.Background()
	e.orgA, _, err = db.CreateOrg(ctx, kv.OrgInput{Name: "Org A", Email: "a@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	e.orgB, _, err = db.CreateOrg(ctx, kv.OrgInput{Name: "Org B", Email: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"studies:read", "studies:write", "studies:golive", "links:read", "links:write", "export:read"}
	e.mustKey("a_live", e.orgA.ID, kv.EnvLive, all)
	e.mustKey("a_test", e.orgA.ID, kv.EnvTest, all)
	e.mustKey("a_links_only", e.orgA.ID, kv.EnvLive, []string{"links:read"})
	e.mustKey("a_studies_only", e.orgA.ID, kv.EnvLive, []string{"studies:read"})
	e.mustKey("b_live", e.orgB.ID, kv.EnvLive, all)
	return e
}

func (e *testEnv) mustKey(name string, org kv.ID, env kv.Environment, scopes []string) {
	e.t.Helper()
	_, secret, err := e.db.CreateKey(context.Background(), kv.KeyInput{OrgID: org, Name: name, Environment: env, Scopes: scopes})
	if err != nil {
		e.t.Fatal(err)
	}
	e.keys[name] = secret
}

func (e *testEnv) mustStudy(org kv.ID, env kv.Environment, title string) kv.Study {
	e.t.Helper()
	st, err := e.db.CreateStudy(context.Background(), kv.StudyInput{
		Partition: kv.Partition{Org: org, Env: env},
		Brief:     kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: []string{"Why?"}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends one request; key names a key of the env, or is a literal Authorization
// value when it contains a space, or "" for none. A "Host" header sets the name the
// request says it reached the server at (the connection still goes to e.url).
func (e *testEnv) do(method, path, key, body string, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	switch {
	case strings.Contains(key, " "):
		req.Header.Set("Authorization", key)
	case key != "":
		secret, ok := e.keys[key]
		if !ok {
			secret = key
		}
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// testPlugins is one plugin host for every test server of the package: compiling the
// built-in plugins is the slow part, so they are compiled once (and cached on disk
// between runs of the suite).
var testPlugins struct {
	once sync.Once
	host *plugins.Host
	err  error
}

func mustPluginHost(tb testing.TB) *plugins.Host {
	tb.Helper()
	testPlugins.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "interviewd-test-plugin-cache")
		testPlugins.host, testPlugins.err = plugins.NewHost(context.Background(), plugins.Config{CacheDir: dir})
	})
	if testPlugins.err != nil {
		tb.Fatal(testPlugins.err)
	}
	return testPlugins.host
}
