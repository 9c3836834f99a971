package pipeline

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"interviewd/kv"
)

// The HTTP side's metrics, on the Prometheus registry main creates and hands to every
// part (server, jobs, the kv commit hook): nothing is registered on the client's
// global default registry, so two servers in one test process keep separate figures.
// A request's observation finds its histogram through a map that is only read on the
// request path and an array indexed by method and status class, both filled on first
// sight, so the steady state takes no lock, builds no label list and allocates nothing
// (BenchmarkMetricsObserve).

// MetricsPath is where the exposition is served.
const MetricsPath = "/metrics"

// unmatchedRoute is the route label of requests no route matched: the path itself
// would let a client create series.
const unmatchedRoute = "unmatched"

// httpMetrics holds the per-request histograms and the counters derived from a request.
type HTTPMetrics struct {
	Duration *prometheus.HistogramVec
	// refusals counts 429 answers per surface (rate limits and admission limits).
	refusals  map[string]prometheus.Counter
	started   map[startedKey]prometheus.Counter
	completed map[kv.Environment]prometheus.Counter
	credits   prometheus.Counter

	// routes maps a route template to its series. It is replaced, never changed, when a
	// route is first seen (templates are a fixed set of some hundred and fifty), so the
	// request path reads it without a lock.
	routes atomic.Pointer[map[string]*routeSeries]
	grow   sync.Mutex // serialises replacements of routes
}

// startedKey picks an interviews-started series.
type startedKey struct {
	env       kv.Environment
	rehearsal bool
}

// routeSeries is one route's histograms, by method and status class, resolved from the
// vector the first time each is needed: series exist only for what was answered.
type routeSeries struct {
	surface, route string
	refusals       prometheus.Counter
	byClass        [len(MetricMethods)][len(statusClasses)]atomic.Pointer[prometheus.Observer]
}

// MetricMethods are the method label's values; any other method counts as "other", so
// a client cannot create series with made-up methods.
var MetricMethods = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "other"}

// statusClasses are the status label's values, by the status code's first digit less one.
var statusClasses = [5]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// metricSurfaces is every name surfaceOf returns; each has its refusal counter.
var metricSurfaces = [...]string{"rest", "mcp", "participant", "app", "access", "oauth", "metrics", "other"}

// NewHTTPMetrics registers the HTTP side's metrics on reg. The counters a dashboard
// sums are created at zero, so a rate is defined before the first event.
func NewHTTPMetrics(reg prometheus.Registerer) *HTTPMetrics {
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "interviewd_http_request_duration_seconds",
		Help:    "Time from a request's arrival to its answer being written, by API surface, method, route template and status class.",
		Buckets: prometheus.DefBuckets,
	}, []string{"surface", "method", "route", "status"})
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "interviewd_rate_limit_refusals_total",
		Help: "Requests answered 429 Too Many Requests (rate and admission limits), by API surface.",
	}, []string{"surface"})
	started := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "interviewd_interviews_started_total",
		Help: "Interviews started by a participant opening a link, by environment and whether it was a rehearsal.",
	}, []string{"env", "rehearsal"})
	completed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "interviewd_interviews_completed_total",
		Help: "Interviews completed by a participant's turn, by environment.",
	}, []string{"env"})
	credits := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "interviewd_credits_spent_total",
		Help: "Interview credits spent: one per live, non-rehearsal interview started.",
	})
	reg.MustRegister(duration, refusals, started, completed, credits)

	m := &HTTPMetrics{Duration: duration, refusals: map[string]prometheus.Counter{}, started: map[startedKey]prometheus.Counter{},
		completed: map[kv.Environment]prometheus.Counter{}, credits: credits}
	for _, s := range metricSurfaces {
		m.refusals[s] = refusals.WithLabelValues(s)
	}
	for _, env := range []kv.Environment{kv.EnvTest, kv.EnvLive} {
		for _, test := range []bool{false, true} {
			m.started[startedKey{env, test}] = started.WithLabelValues(string(env), strconv.FormatBool(test))
		}
		m.completed[env] = completed.WithLabelValues(string(env))
	}
	m.routes.Store(&map[string]*routeSeries{})
	return m
}

// SurfaceOf names the API surface a route belongs to: one of metricSurfaces.
func SurfaceOf(route string) string {
	switch {
	case route == ResourceMCP:
		return "mcp"
	case len(route) >= len(ResourceAPI) && route[:len(ResourceAPI)] == ResourceAPI:
		return "rest"
	case len(route) >= 3 && (route[:3] == "/i/" || route == "/static/{name}"):
		return "participant"
	case route == "/app" || len(route) >= 5 && route[:5] == "/app/":
		return "app"
	case len(route) >= 11 && route[:11] == "/v1/access/":
		return "access"
	case len(route) >= 12 && route[:12] == "/.well-known":
		return "oauth"
	case route == MetricsPath:
		return "metrics"
	}
	return "other"
}

// Observe records one finished request under its route template ("" when no route
// matched).
func (m *HTTPMetrics) Observe(c *fasthttp.RequestCtx, route string, seconds float64) {
	if m == nil {
		return
	}
	if route == "" {
		route = unmatchedRoute
	}
	rs := m.route(route)
	status := c.Response.StatusCode()
	rs.observer(m, MethodIndex(c.Method()), min(max(status/100, 1), 5)-1).Observe(seconds)
	if status == fasthttp.StatusTooManyRequests {
		rs.refusals.Inc()
	}
}

// route returns the series of a route template, adding them on first sight.
func (m *HTTPMetrics) route(route string) *routeSeries {
	if rs := (*m.routes.Load())[route]; rs != nil {
		return rs
	}
	m.grow.Lock()
	defer m.grow.Unlock()
	old := *m.routes.Load()
	if rs := old[route]; rs != nil { // added meanwhile
		return rs
	}
	surface := SurfaceOf(route)
	rs := &routeSeries{surface: surface, route: route, refusals: m.refusals[surface]}
	next := make(map[string]*routeSeries, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[route] = rs
	m.routes.Store(&next)
	return rs
}

// observer returns the route's histogram for a method and status class (indexes into
// metricMethods and statusClasses), resolving it from the vector on first use. Two
// requests resolving it at once get the same child from the vector.
func (rs *routeSeries) observer(m *HTTPMetrics, method, class int) prometheus.Observer {
	p := &rs.byClass[method][class]
	if o := p.Load(); o != nil {
		return *o
	}
	o := m.Duration.WithLabelValues(rs.surface, MetricMethods[method], rs.route, statusClasses[class])
	p.Store(&o)
	return o
}

// MethodIndex maps a request method to its index in metricMethods.
func MethodIndex(b []byte) int {
	for i, m := range MetricMethods[:len(MetricMethods)-1] {
		if string(b) == m {
			return i
		}
	}
	return len(MetricMethods) - 1
}

// InterviewOpened counts an interview started by opening a link, and the credit it spent.
func (m *HTTPMetrics) InterviewOpened(o kv.Opened) {
	if m == nil || !o.Started || o.Interview == nil {
		return
	}
	iv := o.Interview
	if c := m.started[startedKey{iv.Env, iv.IsTest}]; c != nil {
		c.Inc()
	}
	if !iv.IsTest && iv.Env == kv.EnvLive { // kv.OpenLink spends one credit exactly then
		m.credits.Inc()
	}
}

// InterviewTurned counts an interview that a turn completed.
func (m *HTTPMetrics) InterviewTurned(before string, iv kv.Interview) {
	if m == nil || before == kv.InterviewCompleted || iv.Status != kv.InterviewCompleted {
		return
	}
	if c := m.completed[iv.Env]; c != nil {
		c.Inc()
	}
}

// HandleMetrics serves the exposition on the main listener only when that listener is
// bound to loopback, and then only to loopback clients whose request no reverse proxy
// forwarded (a proxy on the same host makes every client look local); everyone else
// gets the same 404 as any unknown path.
func (s *Core) HandleMetrics(c *fasthttp.RequestCtx) {
	if !s.MetricsOnMain || !c.RemoteIP().IsLoopback() || forwarded(&c.Request.Header) {
		s.HandleNotFound(c)
		return
	}
	s.MetricsServe(c)
}

func forwarded(h *fasthttp.RequestHeader) bool {
	for _, name := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if len(h.Peek(name)) > 0 {
			return true
		}
	}
	return false
}

// MetricsHandler serves the exposition to anyone who reaches it: for the dedicated
// --metrics-addr listener.
func (s *Core) MetricsHandler() fasthttp.RequestHandler { return s.MetricsServe }

// NewMetricsHandler is the Prometheus client's own handler for reg, adapted to
// fasthttp: it negotiates the format with the scraper (the text format unless asked
// otherwise), compresses when asked, and counts its scrapes and its errors on reg
// (promhttp_metric_handler_*). A collector that fails leaves its families out and is
// logged; the rest are still served.
func NewMetricsHandler(reg *prometheus.Registry, log *zerolog.Logger) fasthttp.RequestHandler {
	h := promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      promLogger{log},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
	}))
	serve := fasthttpadaptor.NewFastHTTPHandler(h)
	return func(c *fasthttp.RequestCtx) {
		serve(c)
		c.Response.Header.Set("Cache-Control", "no-store")
	}
}

// promLogger writes the metrics handler's errors to the server's log.
type promLogger struct{ log *zerolog.Logger }

func (l promLogger) Println(v ...any) {
	l.log.Error().Str("source", "metrics").Msg(fmt.Sprint(v...))
}
