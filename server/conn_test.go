package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestShutdownAnswersEveryStartedRequest stops the server while clients write as fast
// as they can over keep-alive connections, and checks the promise of a graceful stop:
// every request either got its answer or was never started. Each request creates a
// participant link carrying a unique context value, so afterwards the store says which
// requests ran: every answered 200 must be stored, and every request that ended in a
// connection error instead of an answer must not be. Nothing here depends on timing:
// the stop is requested once some answers have come back, wherever the clients are.
func TestShutdownAnswersEveryStartedRequest(t *testing.T) {
	trials := 10
	if testing.Short() {
		trials = 1
	}
	for trial := range trials {
		t.Run(fmt.Sprint("Trial", trial), func(t *testing.T) { shutdownTrial(t) })
	}
}

type shutdownOutcome struct {
	answered map[string]int // context value → status
	failed   map[string]bool
}

func shutdownTrial(t *testing.T) {
	// Without fsync a write takes microseconds, so connections flip between idle and
	// active as fast as they can: the moments a shutdown can catch them in between.
	e := mustServe(t, func(_ *Config, o *kv.Options) { o.NoSync = true })
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Stop")
	// A server of its own, whose connections pause after each read that returns bytes
	// and whose closes land late, as on a busy machine: this widens the moments between
	// a request arriving, the server marking its connection busy and a close from the
	// shutdown taking effect, which is where a stop used to cut answers off.
	off := pipeline.RateLimits{Off: true}
	srv := New(Config{DB: e.db, Jobs: e.runner, Log: zerolog.Nop(), BaseURL: testBaseURL, RateLimits: &off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pausingListener{ln}) }()
	addr := ln.Addr().String()
	const workers = 32
	var answers atomic.Int64
	outcomes := make([]shutdownOutcome, workers)
	var wg sync.WaitGroup
	for w := range workers {
		outcomes[w] = shutdownOutcome{answered: map[string]int{}, failed: map[string]bool{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			linkWriter(addr, e.keys["a_live"], st.ID, w, &outcomes[w], &answers)
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for answers.Load() < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d answers in 60 s", answers.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	wg.Wait()

	links, err := e.db.FindParticipantLinks(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, l := range links {
		stored[l.Context["n"]] = true
	}
	var ok, refused, failed int
	seen := map[string]bool{}
	for _, o := range outcomes {
		for n, status := range o.answered {
			seen[n] = true
			switch {
			case status == 200 && !stored[n]:
				t.Errorf("request %s was answered 200 but nothing was stored", n)
			case status != 200 && stored[n]:
				t.Errorf("request %s was answered %d but was stored", n, status)
			case status == 200:
				ok++
			default:
				refused++
			}
		}
		for n := range o.failed {
			seen[n] = true
			failed++
			if stored[n] {
				t.Errorf("request %s ran (it was stored) but its answer was lost", n)
			}
		}
	}
	for n := range stored {
		if !seen[n] {
			t.Errorf("stored %s, which no client sent", n)
		}
	}
	t.Logf("%d answered 200, %d answered otherwise, %d never started (connection ended first)", ok, refused, failed)
}

// pausingListener's connections yield the processor after every read that returns
// bytes (see shutdownTrial).
type pausingListener struct{ net.Listener }

func (l pausingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return pausingConn{c}, nil
}

type pausingConn struct{ net.Conn }

func (c pausingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		time.Sleep(time.Millisecond)
	}
	return n, err
}

// Close lands a moment late, as on a busy machine: the connection's goroutine may run
// on meanwhile, which is where a stop used to cut answers off.
func (c pausingConn) Close() error {
	time.Sleep(2 * time.Millisecond)
	return c.Conn.Close()
}

// CloseRead passes the half-close through, as the TCP connection underneath offers it.
func (c pausingConn) CloseRead() error { return c.Conn.(*net.TCPConn).CloseRead() }

// linkWriter creates links over one keep-alive connection at a time until the server
// no longer accepts connections, recording for each request its answer or its failure.
func linkWriter(addr, key string, study kv.ID, w int, out *shutdownOutcome, answers *atomic.Int64) {
	var conn net.Conn
	var br *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for seq := 0; ; seq++ {
		if conn == nil {
			var err error
			if conn, err = net.Dial("tcp", addr); err != nil {
				return // the listener is closed: the server has stopped
			}
			br = bufio.NewReader(conn)
		}
		n := fmt.Sprintf("%d-%d", w, seq)
		body := `{"context":{"n":"` + n + `"}}`
		req := fmt.Sprintf("POST /v1/api/studies/%s/participant-links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			study, key, len(body), body)
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		var resp fasthttp.Response
		_, err := conn.Write([]byte(req))
		if err == nil {
			err = resp.Read(br)
		}
		if err != nil {
			out.failed[n] = true
			conn.Close()
			conn = nil
			continue
		}
		out.answered[n] = resp.StatusCode()
		answers.Add(1)
		if resp.ConnectionClose() {
			conn.Close()
			conn = nil
		}
	}
}
