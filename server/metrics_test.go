package server

import (
	"bufio"
	"bytes"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

func withMetrics(reg *prometheus.Registry, elsewhere bool) serveOption {
	return func(c *Config, _ *kv.Options) { c.Metrics, c.MetricsElsewhere = reg, elsewhere }
}

// scrape reads /metrics from the loopback test client, parses it as Prometheus does,
// and returns the value of each series, named as the text format writes it.
func (e *testEnv) scrape() map[string]float64 {
	e.t.Helper()
	r := e.do("GET", "/metrics", "", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		e.t.Fatalf("scrape: %d %s", r.status, r.body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		e.t.Fatalf("unparsable exposition: %v\n%s", err, r.body)
	}
	return seriesValues(families)
}

// seriesValues flattens parsed families into their series as the text format names
// them: `name{label="value",...}`, labels in the exposition's order (by name, with a
// histogram bucket's le last), and a histogram as its _bucket, _sum and _count series.
func seriesValues(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel())+1)
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+strconv.Quote(l.GetValue()))
			}
			series := func(suffix string, extra ...string) string {
				all := append(append([]string(nil), labels...), extra...)
				if len(all) == 0 {
					return name + suffix
				}
				return name + suffix + "{" + strings.Join(all, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[series("")] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[series("")] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					out[series("_bucket", `le="`+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)+`"`)] = float64(b.GetCumulativeCount())
				}
				out[series("_bucket", `le="+Inf"`)] = float64(h.GetSampleCount())
				out[series("_sum")] = h.GetSampleSum()
				out[series("_count")] = float64(h.GetSampleCount())
			default:
				out[series("")] = m.GetUntyped().GetValue()
			}
		}
	}
	return out
}

func TestMetricsEndToEnd(t *testing.T) {
	e := mustServe(t, withMetrics(prometheus.NewRegistry(), false), withRateLimits(pipeline.RateLimits{Read: 2, Write: 100, OrgRead: 1000, OrgWrite: 1000, IP: 1000, Window: time.Hour}))
	brief := plainBrief("Metered", "How do you plan the rota?")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
	e.completeInterview(st.LinkToken, []string{"By hand."})
	e.participant(st.LinkToken).open() // a second, still in progress
	e.do("GET", "/v1/api/openapi.json", "", "")
	e.do("GET", "/no/such/path", "", "")
	e.do("GET", "/app", "", "") // signed out: a redirect to sign-in
	for i := 0; i < 3; i++ {    // the third is over the read limit of 2
		e.do("GET", "/v1/api/studies", "a_studies_only", "")
	}
	r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`"}`)
	if r.status != 202 {
		t.Fatalf("export: %d %s", r.status, r.body)
	}
	var job research.ExportJob
	r.json(t, &job)
	// The job's end is counted after its record is written: poll the metrics (the
	// API's read limit is spent on purpose above).
	var got map[string]float64
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		got = e.scrape()
		if got[`interviewd_jobs_ended_total{kind="export",result="ok"}`]+got[`interviewd_jobs_ended_total{kind="export",result="failed"}`] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("export not ended after 2 minutes")
		}
	}
	want := map[string]float64{
		`interviewd_interviews_started_total{env="live",rehearsal="false"}`:                                                           2,
		`interviewd_interviews_completed_total{env="live"}`:                                                                           1,
		`interviewd_credits_spent_total`:                                                                                              2,
		`interviewd_rate_limit_refusals_total{surface="rest"}`:                                                                        1,
		`interviewd_http_request_duration_seconds_count{method="GET",route="/v1/api/openapi.json",status="2xx",surface="rest"}`:       1,
		`interviewd_http_request_duration_seconds_count{method="GET",route="unmatched",status="4xx",surface="other"}`:                 1,
		`interviewd_http_request_duration_seconds_count{method="GET",route="/app",status="3xx",surface="app"}`:                        1,
		`interviewd_http_request_duration_seconds_count{method="GET",route="/v1/api/studies",status="4xx",surface="rest"}`:            1,
		`interviewd_http_request_duration_seconds_count{method="GET",route="/v1/api/studies",status="2xx",surface="rest"}`:            2,
		`interviewd_http_request_duration_seconds_count{method="POST",route="/i/{token}/session",status="2xx",surface="participant"}`: 2,
		`interviewd_jobs_ended_total{kind="export",result="ok"}`:                                                                      1,
		`interviewd_plugin_runs_total{kind="redactor",result="ok"}`:                                                                   1,
		`interviewd_plugin_runs_total{kind="formatter",result="ok"}`:                                                                  1,
		`interviewd_jobs_queued{kind="export"}`:                                                                                       0,
		`interviewd_jobs_running{kind="export"}`:                                                                                      0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got[`interviewd_job_duration_seconds_count{kind="export"}`] != 1 || got[`interviewd_plugin_run_duration_seconds_count{kind="redactor"}`] < 1 {
		t.Error("job and plugin durations were not observed")
	}
	// Histograms carry Prometheus le buckets.
	if _, ok := got[`interviewd_http_request_duration_seconds_bucket{method="GET",route="/v1/api/openapi.json",status="2xx",surface="rest",le="+Inf"}`]; !ok {
		t.Error("no le buckets in the request histogram")
	}
	// Made-up methods and paths do not create series.
	e.do("FROB", "/x/"+strings.Repeat("y", 50), "", "")
	for k := range e.scrape() {
		if strings.Contains(k, "FROB") || strings.Contains(k, "yyyy") {
			t.Fatalf("a client created a series: %s", k)
		}
	}
}

// rawGet sends GET path over conn and returns the status code.
func rawGet(t *testing.T, conn net.Conn, path string, headers ...string) int {
	t.Helper()
	defer conn.Close()
	req := "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
	for i := 0; i+1 < len(headers); i += 2 {
		req += headers[i] + ": " + headers[i+1] + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode()
}

func TestMetricsNotForTheInternet(t *testing.T) {
	e := mustServe(t)
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = e.srv.Serve(ln) }()
	dial := func(ip string) net.Conn {
		c, err := ln.DialWithLocalAddr(&net.TCPAddr{IP: net.ParseIP(ip), Port: 40000})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("OK_Loopback", func(t *testing.T) {
		if s := rawGet(t, dial("127.0.0.1"), "/metrics"); s != 200 {
			t.Fatalf("loopback client: %d", s)
		}
		if s := rawGet(t, dial("::1"), "/metrics"); s != 200 {
			t.Fatalf("IPv6 loopback client: %d", s)
		}
	})
	t.Run("ErrRemoteClient", func(t *testing.T) {
		for _, ip := range []string{"203.0.113.9", "10.0.0.7", "2001:db8::1"} {
			if s := rawGet(t, dial(ip), "/metrics"); s != 404 {
				t.Fatalf("client %s: %d, want 404", ip, s)
			}
		}
	})
	t.Run("ErrForwardedByLocalProxy", func(t *testing.T) {
		for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP"} {
			if s := rawGet(t, dial("127.0.0.1"), "/metrics", h, "203.0.113.9"); s != 404 {
				t.Fatalf("proxied through %s: %d, want 404", h, s)
			}
		}
	})
	t.Run("ErrServedElsewhere", func(t *testing.T) {
		other := mustServe(t, withMetrics(prometheus.NewRegistry(), true))
		if r := other.do("GET", "/metrics", "", ""); r.status != 404 {
			t.Fatalf("with --metrics-addr the main listener answered %d", r.status)
		}
	})
	t.Run("ErrMainListenerNotLoopback", func(t *testing.T) {
		// Bound to a public address, a same-host proxy that adds no headers makes
		// internet clients look local: the main listener serves no metrics then.
		public := mustServe(t, func(c *Config, _ *kv.Options) { c.LoopbackListener = false })
		if r := public.do("GET", "/metrics", "", ""); r.status != 404 {
			t.Fatalf("main listener not on loopback answered %d", r.status)
		}
		if r := e.do("GET", "/metrics", "", ""); r.status != 200 {
			t.Fatalf("main listener on loopback answered %d", r.status)
		}
	})
	t.Run("OK_SameBodyAsUnknownPath", func(t *testing.T) {
		a := e.do("GET", "/metrics", "", "", "X-Forwarded-For", "1.2.3.4")
		b := e.do("GET", "/metricz", "", "")
		re := regexp.MustCompile(`/metric[sz]`)
		if a.status != b.status || re.ReplaceAllString(string(a.body), "") != re.ReplaceAllString(string(b.body), "") {
			t.Fatalf("refusal differs from a missing route: %s vs %s", a.body, b.body)
		}
	})
}

// metricsOnRoutes is request metrics with series on n route templates besides
// /v1/api/studies/{study_id}, as a running server has after its first requests, and a
// GET answered 200 to observe.
func metricsOnRoutes(n int) (*pipeline.HTTPMetrics, *fasthttp.RequestCtx) {
	m := pipeline.NewHTTPMetrics(prometheus.NewRegistry())
	c := &fasthttp.RequestCtx{}
	c.Request.Header.SetMethod("GET")
	c.Response.SetStatusCode(200)
	for i := range n {
		m.Observe(c, "/v1/api/route"+strconv.Itoa(i)+"/{id}", 0.001)
	}
	m.Observe(c, "/v1/api/studies/{study_id}", 0.001)
	return m, c
}

// TestMetricsObserveAllocatesNothing: once a route's series exists, observing a
// request allocates nothing (the request path runs at some 100k requests a second).
func TestMetricsObserveAllocatesNothing(t *testing.T) {
	m, c := metricsOnRoutes(150)
	if allocs := testing.AllocsPerRun(1000, func() { m.Observe(c, "/v1/api/studies/{study_id}", 0.001) }); allocs != 0 {
		t.Fatalf("%v allocations per observation, want 0", allocs)
	}
	var got dto.Metric
	if err := m.Duration.WithLabelValues("rest", "GET", "/v1/api/studies/{study_id}", "2xx").(prometheus.Histogram).Write(&got); err != nil {
		t.Fatal(err)
	}
	if n := got.GetHistogram().GetSampleCount(); n < 1001 {
		t.Fatalf("the series counted %d observations, want at least 1001", n)
	}
}

// BenchmarkMetricsObserve is the per-request cost of the request metrics once a series
// exists (the steady state) among 150 other routes' series: it must not allocate.
// WithLabelValues is what resolving the series from the vector on each request would
// cost instead; Parallel is the cached path from every core at once.
func BenchmarkMetricsObserve(b *testing.B) {
	const route = "/v1/api/studies/{study_id}"
	b.Run("Cached", func(b *testing.B) {
		m, c := metricsOnRoutes(150)
		b.ReportAllocs()
		for b.Loop() {
			m.Observe(c, route, 0.001)
		}
	})
	b.Run("WithLabelValues", func(b *testing.B) {
		m, c := metricsOnRoutes(150)
		b.ReportAllocs()
		for b.Loop() {
			m.Duration.WithLabelValues(pipeline.SurfaceOf(route), pipeline.MetricMethods[pipeline.MethodIndex(c.Method())], route, "2xx").Observe(0.001)
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		m, _ := metricsOnRoutes(150)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var c fasthttp.RequestCtx
			c.Request.Header.SetMethod("GET")
			c.Response.SetStatusCode(200)
			for pb.Next() {
				m.Observe(&c, route, 0.001)
			}
		})
	})
}
