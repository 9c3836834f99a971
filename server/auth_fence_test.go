package server

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// withStore puts the server on store (a PostgreSQL URL), whatever the suite runs on.
func withStore(store string) serveOption {
	return func(_ *Config, o *kv.Options) { o.Store = store }
}

// serveNode boots a second node of e's store: its own store handle, caches and
// listener, as another interviewd process would have. It returns e seen through it.
func serveNode(t *testing.T, e *testEnv, store string, opts ...serveOption) *testEnv {
	t.Helper()
	off := pipeline.RateLimits{Off: true}
	cfg := Config{Log: zerolog.Nop(), BaseURL: testBaseURL, RateLimits: &off, LoopbackListener: true}
	kopts := kv.Options{Store: store}
	for _, o := range opts {
		o(&cfg, &kopts)
	}
	db, err := kv.Open(t.TempDir(), kopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	cfg.DB = db
	srv := New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	})
	n := *e
	n.db, n.srv, n.url = db, srv, "http://"+ln.Addr().String()
	return &n
}

func (e *testEnv) keyID(org kv.ID, name string) kv.ID {
	e.t.Helper()
	keys, err := e.db.FindKeys(context.Background(), org)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == name {
			return k.ID
		}
	}
	e.t.Fatalf("no key %q", name)
	return kv.ID{}
}

// On a shared store a read checks its cached credential with its own statement: a
// change to the organisation's keys on another node is seen by the very next read on
// this one, which answers from the store afresh: 200 for a key still valid, 401 for
// the revoked one, also for a read that touches no record.
func TestSharedCachedKeyChangedOnAnotherNode(t *testing.T) {
	url := postgresURL(t)
	a := mustServe(t, withStore(url))
	b := serveNode(t, a, url)
	st := a.mustStudy(a.orgA.ID, kv.EnvLive, "Across nodes")
	path := "/v1/api/studies/" + st.ID.String()
	for range 2 { // cached on b from the first
		if r := b.do("GET", path, "a_live", ""); r.status != 200 {
			t.Fatalf("GET on node b: %d %s", r.status, r.body)
		}
		if r := b.do("GET", "/v1/api/me", "a_studies_only", ""); r.status != 200 {
			t.Fatalf("whoami on node b: %d %s", r.status, r.body)
		}
	}

	// Another key for the organisation, made on node a: a_live stays valid.
	a.mustKey("a_other", a.orgA.ID, kv.EnvLive, []string{"studies:read"})
	if r := b.do("GET", path, "a_live", ""); r.status != 200 {
		t.Fatalf("GET on node b after an unrelated change on node a: %d %s", r.status, r.body)
	}
	if r := b.do("HEAD", path, "a_live", ""); r.status != 200 {
		t.Fatalf("HEAD on node b: %d", r.status)
	}

	for _, name := range []string{"a_live", "a_studies_only"} {
		if _, err := a.db.RevokeKey(context.Background(), a.keyID(a.orgA.ID, name)); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.do("GET", path, "a_live", ""); r.status != 401 {
		t.Fatalf("GET on node b with a key revoked on node a: %d %s, want 401", r.status, r.body)
	}
	if r := b.do("GET", "/v1/api/me", "a_studies_only", ""); r.status != 401 {
		t.Fatalf("whoami on node b with a key revoked on node a: %d %s, want 401", r.status, r.body)
	}
	if r := b.do("GET", path, "a_other", ""); r.status != 200 {
		t.Fatalf("GET on node b with the organisation's remaining key: %d %s", r.status, r.body)
	}
}

// Under shared rate limits the check rides on the rate decision: a request whose cached
// credential changed on another node is counted once, by its run with the credential
// read afresh, and a revoked key is refused before it is counted.
func TestSharedCachedKeyChangedUnderRateLimits(t *testing.T) {
	url := postgresURL(t)
	a := mustServe(t, withStore(url))
	limits := pipeline.RateLimits{Read: 50, Write: 10, OrgRead: 100, OrgWrite: 20, IP: 50, Window: time.Hour}
	b := serveNode(t, a, url, withRateLimits(limits))
	st := a.mustStudy(a.orgA.ID, kv.EnvLive, "Limited")
	path := "/v1/api/studies/" + st.ID.String()
	get := func(key string, want int) string {
		t.Helper()
		r := b.do("GET", path, key, "")
		if r.status != want {
			t.Fatalf("GET with %s on node b: %d %s, want %d", key, r.status, r.body, want)
		}
		return r.header.Get("RateLimit")
	}
	get("a_live", 200)
	before := get("a_live", 200) // cached on b
	a.mustKey("a_other", a.orgA.ID, kv.EnvLive, []string{"studies:read"})
	after := get("a_live", 200)
	if want := strings.NewReplacer(";r=48", ";r=47", ";r=98", ";r=97").Replace(before); after != want {
		t.Fatalf("RateLimit after a change on node a: %q, then %q; want exactly one more admission (%q)", before, after, want)
	}
	if _, err := a.db.RevokeKey(context.Background(), a.keyID(a.orgA.ID, "a_live")); err != nil {
		t.Fatal(err)
	}
	get("a_live", 401)
	if got := get("a_other", 200); !strings.Contains(got, ";r=96") {
		t.Fatalf("the organisation's budget after the revoked key's refusal: %q, want 96 left (the refusal not counted)", got)
	}
}
