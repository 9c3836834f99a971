package server

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/metrics"
)

// The HTTP side's metrics, in Prometheus text format from one metrics.Set that main
// creates and hands to every part (server, jobs, the kv commit hook), so nothing is
// registered globally and two servers in one test process keep separate figures.
// An observation is a map read plus a short locked update, with no allocation; the
// README's Metrics section gives the figures.

// metricsPath is where the text is served.
const metricsPath = "/metrics"

// httpSeries is one (surface, method, route, status class) series.
type httpSeries struct {
	surface, method, route string
	class                  byte // '1'..'5'
}

// httpMetrics holds the per-request histograms and the counters derived from a request.
type httpMetrics struct {
	set    *metrics.Set
	mu     sync.RWMutex
	series map[httpSeries]*metrics.PrometheusHistogram
	// refusals counts 429 answers per surface (rate limits and admission limits).
	refusals  map[string]*metrics.Counter
	started   map[string]*metrics.Counter // interviews started, by "env,test"
	completed map[kv.Environment]*metrics.Counter
	credits   *metrics.Counter
}

func newHTTPMetrics(set *metrics.Set) *httpMetrics {
	m := &httpMetrics{set: set, series: map[httpSeries]*metrics.PrometheusHistogram{}, refusals: map[string]*metrics.Counter{},
		started: map[string]*metrics.Counter{}, completed: map[kv.Environment]*metrics.Counter{}}
	for _, s := range metricSurfaces {
		m.refusals[s] = set.NewCounter(`interviewd_rate_limit_refusals_total{surface="` + s + `"}`)
	}
	for _, env := range []kv.Environment{kv.EnvTest, kv.EnvLive} {
		for _, test := range []string{"false", "true"} {
			m.started[string(env)+","+test] = set.NewCounter(`interviewd_interviews_started_total{env="` + string(env) + `",rehearsal="` + test + `"}`)
		}
		m.completed[env] = set.NewCounter(`interviewd_interviews_completed_total{env="` + string(env) + `"}`)
	}
	m.credits = set.NewCounter(`interviewd_credits_spent_total`)
	return m
}

// metricSurfaces is every name surfaceOf returns; each has its refusal counter.
var metricSurfaces = [...]string{"rest", "mcp", "participant", "app", "access", "oauth", "metrics", "other"}

// surfaceOf names the API surface a route belongs to: one of metricSurfaces.
func surfaceOf(route string) string {
	switch {
	case route == resourceMCP:
		return "mcp"
	case len(route) >= len(resourceAPI) && route[:len(resourceAPI)] == resourceAPI:
		return "rest"
	case len(route) >= 3 && (route[:3] == "/i/" || route == "/static/{name}"):
		return "participant"
	case route == "/app" || len(route) >= 5 && route[:5] == "/app/":
		return "app"
	case len(route) >= 11 && route[:11] == "/v1/access/":
		return "access"
	case len(route) >= 12 && route[:12] == "/.well-known":
		return "oauth"
	case route == metricsPath:
		return "metrics"
	}
	return "other"
}

// observe records one finished request. Series are created on first sight (route
// templates and methods are a small, fixed set: unmatched paths share "unmatched") and
// read under a read lock afterwards, so the steady state allocates nothing.
func (m *httpMetrics) observe(c *fasthttp.RequestCtx, route string, seconds float64) {
	if m == nil {
		return
	}
	status := c.Response.StatusCode()
	if route == "" {
		route = "unmatched"
	}
	k := httpSeries{surface: surfaceOf(route), route: route, class: byte('0' + min(max(status/100, 1), 5))}
	k.method = knownMethod(c.Method())
	m.mu.RLock()
	h := m.series[k]
	m.mu.RUnlock()
	if h == nil {
		m.mu.Lock()
		if h = m.series[k]; h == nil {
			name := `interviewd_http_request_duration_seconds{surface="` + k.surface + `",method="` + k.method +
				`",route=` + strconv.Quote(route) + `,status="` + string(k.class) + `xx"}`
			h = m.set.GetOrCreatePrometheusHistogram(name)
			m.series[k] = h
		}
		m.mu.Unlock()
	}
	h.Update(seconds)
	if c := m.refusals[k.surface]; c != nil && status == fasthttp.StatusTooManyRequests {
		c.Inc()
	}
}

// knownMethod maps a request method to a constant string, so a client cannot create
// series with made-up methods.
func knownMethod(b []byte) string {
	for _, m := range [...]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"} {
		if string(b) == m {
			return m
		}
	}
	return "other"
}

// interviewOpened counts an interview started by opening a link, and the credit it spent.
func (m *httpMetrics) interviewOpened(o kv.Opened) {
	if m == nil || !o.Started || o.Interview == nil {
		return
	}
	iv := o.Interview
	m.started[string(iv.Env)+","+strconv.FormatBool(iv.IsTest)].Inc()
	if !iv.IsTest && iv.Env == kv.EnvLive { // kv.OpenLink spends one credit exactly then
		m.credits.Inc()
	}
}

// interviewTurned counts an interview that a turn completed.
func (m *httpMetrics) interviewTurned(before string, iv kv.Interview) {
	if m == nil || before == kv.InterviewCompleted || iv.Status != kv.InterviewCompleted {
		return
	}
	if c := m.completed[iv.Env]; c != nil {
		c.Inc()
	}
}

// handleMetrics serves the Prometheus text on the main listener only when that listener
// is bound to loopback, and then only to loopback clients whose request no reverse
// proxy forwarded (a proxy on the same host makes every client look local); everyone
// else gets the same 404 as any unknown path.
func (s *Server) handleMetrics(c *fasthttp.RequestCtx) {
	if !s.metricsOnMain || !c.RemoteIP().IsLoopback() || forwarded(&c.Request.Header) {
		s.handleNotFound(c)
		return
	}
	s.MetricsHandler()(c)
}

func forwarded(h *fasthttp.RequestHeader) bool {
	for _, name := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if len(h.Peek(name)) > 0 {
			return true
		}
	}
	return false
}

// MetricsHandler serves the metrics text to anyone who reaches it: for the dedicated
// --metrics-addr listener.
func (s *Server) MetricsHandler() fasthttp.RequestHandler {
	return func(c *fasthttp.RequestCtx) {
		var b bytes.Buffer
		s.metricsSet.WritePrometheus(&b)
		c.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		c.Response.Header.Set("Cache-Control", "no-store")
		c.SetBody(b.Bytes())
	}
}
