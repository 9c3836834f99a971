package cmd

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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

// scrapeMetrics reads url's exposition over a socket, as a Prometheus server does, and
// returns the text and its families as Prometheus's own parser reads them.
func scrapeMetrics(t *testing.T, url string) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%s: %d %q\n%s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	return body, families
}

// requestHistogram returns the request histogram's series for a GET of route answered
// 2xx (nil when there is none).
func requestHistogram(families map[string]*dto.MetricFamily, route string) *dto.Histogram {
	for _, m := range families["interviewd_http_request_duration_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["route"] == route && labels["method"] == "GET" && labels["status"] == "2xx" {
			return m.GetHistogram()
		}
	}
	return nil
}

// TestMetricsExposition scrapes the real server's /metrics over a socket and reads it
// with Prometheus's parser: every family is typed and explained, the names and types
// dashboards rely on are there, requests move the request histogram, and the build,
// Go runtime and process families are present.
func TestMetricsExposition(t *testing.T) {
	srv := mustBoot(t, "--data", t.TempDir(), "--backup-dir", t.TempDir(), "--backup-every", "1h")
	_, before := scrapeMetrics(t, srv.URL+"/metrics")
	const requests = 3
	for range requests {
		if status, body := get(t, srv.URL+"/healthz", ""); status != 200 {
			t.Fatalf("healthz: %d %s", status, body)
		}
	}
	body, families := scrapeMetrics(t, srv.URL+"/metrics")

	t.Run("OK_HelpAndType", func(t *testing.T) {
		for name, f := range families {
			if f.GetHelp() == "" {
				t.Errorf("%s has no HELP", name)
			}
			if !bytes.Contains(body, []byte("\n# TYPE "+name+" ")) {
				t.Errorf("%s has no TYPE line", name)
			}
			if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s does not end in _total", name)
			}
		}
	})

	t.Run("OK_Families", func(t *testing.T) {
		want := map[string]dto.MetricType{
			"interviewd_http_request_duration_seconds":         dto.MetricType_HISTOGRAM,
			"interviewd_rate_limit_refusals_total":             dto.MetricType_COUNTER,
			"interviewd_interviews_started_total":              dto.MetricType_COUNTER,
			"interviewd_interviews_completed_total":            dto.MetricType_COUNTER,
			"interviewd_credits_spent_total":                   dto.MetricType_COUNTER,
			"interviewd_jobs_queued":                           dto.MetricType_GAUGE,
			"interviewd_jobs_running":                          dto.MetricType_GAUGE,
			"interviewd_jobs_ended_total":                      dto.MetricType_COUNTER,
			"interviewd_job_duration_seconds":                  dto.MetricType_HISTOGRAM,
			"interviewd_plugin_runs_total":                     dto.MetricType_COUNTER,
			"interviewd_plugin_run_duration_seconds":           dto.MetricType_HISTOGRAM,
			"interviewd_db_commit_duration_seconds":            dto.MetricType_HISTOGRAM,
			"interviewd_db_file_bytes":                         dto.MetricType_GAUGE,
			"interviewd_backups_total":                         dto.MetricType_COUNTER,
			"interviewd_backup_duration_seconds":               dto.MetricType_HISTOGRAM,
			"interviewd_backup_last_success_timestamp_seconds": dto.MetricType_GAUGE,
			"interviewd_build_info":                            dto.MetricType_GAUGE,
			"go_goroutines":                                    dto.MetricType_GAUGE,
			"go_gc_duration_seconds":                           dto.MetricType_SUMMARY,
			"go_memstats_alloc_bytes":                          dto.MetricType_GAUGE,
			"promhttp_metric_handler_requests_total":           dto.MetricType_COUNTER,
		}
		if runtime.GOOS == "linux" { // the process collector reads /proc
			want["process_cpu_seconds_total"] = dto.MetricType_COUNTER
			want["process_resident_memory_bytes"] = dto.MetricType_GAUGE
			want["process_start_time_seconds"] = dto.MetricType_GAUGE
		}
		for name, typ := range want {
			f := families[name]
			switch {
			case f == nil:
				t.Errorf("no %s family", name)
			case f.GetType() != typ:
				t.Errorf("%s is a %s, want a %s", name, f.GetType(), typ)
			}
		}
	})

	t.Run("OK_RequestsCounted", func(t *testing.T) {
		was, now := requestHistogram(before, "/healthz"), requestHistogram(families, "/healthz")
		if now == nil {
			t.Fatal("no request histogram series for GET /healthz 2xx")
		}
		if got := now.GetSampleCount() - was.GetSampleCount(); got != requests {
			t.Errorf("the /healthz series counted %d requests, want %d", got, requests)
		}
		if now.GetSampleSum() <= was.GetSampleSum() {
			t.Errorf("the /healthz durations' sum stayed at %v", now.GetSampleSum())
		}
		// The first scrape is counted by the second: the /metrics route's own series.
		if scrapes := requestHistogram(families, "/metrics"); scrapes.GetSampleCount() < 1 {
			t.Error("the scrape itself was not counted")
		}
	})

	t.Run("OK_BuildInfo", func(t *testing.T) {
		ms := families["interviewd_build_info"].GetMetric()
		if len(ms) != 1 {
			t.Fatalf("%d interviewd_build_info series, want 1", len(ms))
		}
		got := map[string]string{}
		for _, l := range ms[0].GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		v := readVersion()
		want := map[string]string{"version": v.Version, "revision": v.Revision, "goversion": runtime.Version()}
		if len(got) != len(want) {
			t.Errorf("labels %v, want %v", got, want)
		}
		for k, w := range want {
			if got[k] != w || w == "" {
				t.Errorf("label %s = %q, want %q", k, got[k], w)
			}
		}
		if ms[0].GetGauge().GetValue() != 1 {
			t.Errorf("value %v, want 1", ms[0].GetGauge().GetValue())
		}
	})
}

// TestMetricsPromtool pipes a real scrape through Prometheus's own linter, `promtool
// check metrics` (Debian's prometheus package). Without promtool the test skips,
// unless INTERVIEWD_REQUIRE_PROMTOOL=1 (CI) makes that a failure.
func TestMetricsPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("INTERVIEWD_REQUIRE_PROMTOOL") == "1" {
			t.Fatalf("promtool is required (INTERVIEWD_REQUIRE_PROMTOOL=1): %v", err)
		}
		t.Skipf("promtool not installed: %v", err)
	}
	check := func(text []byte) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(text)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The linter must see problems at all: what the hand-written exposition had.
	if out, err := check([]byte("interviewd_untyped 1\n")); err == nil {
		t.Fatalf("promtool passed a family without HELP or TYPE: %s", out)
	}
	srv := mustBoot(t, "--data", t.TempDir(), "--backup-dir", t.TempDir(), "--backup-every", "1h")
	if status, body := get(t, srv.URL+"/healthz", ""); status != 200 {
		t.Fatalf("healthz: %d %s", status, body)
	}
	text, families := scrapeMetrics(t, srv.URL+"/metrics")
	if families["interviewd_http_request_duration_seconds"] == nil {
		t.Fatalf("the scrape has no request histogram:\n%s", text)
	}
	if out, err := check(text); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
