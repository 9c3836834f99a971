package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
)

func TestLoopbackListener(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:0", true},
		{"[::1]:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
	} {
		ln, err := net.Listen("tcp", c.addr)
		if err != nil {
			t.Logf("%s: %v (skipped)", c.addr, err)
			continue
		}
		got := loopbackListener(ln.Addr())
		_ = ln.Close()
		if got != c.want {
			t.Errorf("%s (%s): loopback %v, want %v", c.addr, ln.Addr(), got, c.want)
		}
	}
}

// TestMetricsListenerLogsNoRequest: a malformed request to the --metrics-addr listener
// is logged through zerolog, by category, and none of its bytes (a bearer key in a
// header) reach the log.
func TestMetricsListenerLogsNoRequest(t *testing.T) {
	logs := &syncBuffer{}
	srv := newMetricsServer(func(c *fasthttp.RequestCtx) { c.SetBodyString("ok") }, zerolog.New(logs).Level(zerolog.DebugLevel))
	if !srv.SecureErrorLogMessage {
		t.Fatal("metrics server formats requests into its error messages")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = ln.Close(); _ = srv.Shutdown(); <-done })
	secret := "jsk_live_" + strings.Repeat("s3cr3t", 8)
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+secret+"\x01\r\nX Bad: "+secret+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// fasthttp logs the failure before it closes the connection: reading to EOF
	// waits for the log line.
	resp, _ := io.ReadAll(conn)
	if !strings.Contains(string(resp), " 400 ") {
		t.Fatalf("malformed request answered %q", resp)
	}
	out := logs.String()
	if !strings.Contains(out, `"source":"fasthttp"`) {
		t.Fatalf("the failure was not logged through zerolog: %q", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, "s3cr3t") {
		t.Fatalf("log holds request bytes: %s", out)
	}
}
