package jobs

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"interviewd/kv"
)

// jobMetrics are the runner's figures on the Prometheus registry main hands over
// (Config.Metrics): per kind, jobs queued (the queue's depth) and running, jobs ended
// by result and their durations; and plugin runs by plugin kind and result with their
// durations. Every series is resolved here, once: a job's start and end only update.
type jobMetrics struct {
	running  map[kv.JobKind]prometheus.Gauge
	ended    map[kv.JobKind]map[string]prometheus.Counter
	duration map[kv.JobKind]prometheus.Observer
	plugin   map[string]*pluginSeries
}

type pluginSeries struct {
	ok, failed prometheus.Counter
	duration   prometheus.Observer
}

// Job results as the metrics name them.
const (
	resultOK          = "ok"
	resultFailed      = "failed"
	resultInterrupted = "interrupted" // left for the next start by a shutdown
)

// Plugin kinds as the metrics name them.
const (
	pluginRedactor  = "redactor"
	pluginFormatter = "formatter"
)

func newJobMetrics(reg prometheus.Registerer, pools map[kv.JobKind]*pool) *jobMetrics {
	running := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "interviewd_jobs_running",
		Help: "Background jobs running on this node, by kind.",
	}, []string{"kind"})
	ended := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "interviewd_jobs_ended_total",
		Help: "Background jobs that ended on this node, by kind and result (ok, failed, or interrupted by a shutdown).",
	}, []string{"kind", "result"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "interviewd_job_duration_seconds",
		Help:    "Time a background job ran on this node, whatever its result, by kind.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 900, 1800},
	}, []string{"kind"})
	pluginRuns := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "interviewd_plugin_runs_total",
		Help: "Runs of redaction and export-format plugins, by plugin kind and result.",
	}, []string{"kind", "result"})
	pluginDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "interviewd_plugin_run_duration_seconds",
		Help:    "Time one plugin run took, by plugin kind.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30},
	}, []string{"kind"})
	reg.MustRegister(running, ended, duration, pluginRuns, pluginDuration)

	m := &jobMetrics{running: map[kv.JobKind]prometheus.Gauge{}, ended: map[kv.JobKind]map[string]prometheus.Counter{},
		duration: map[kv.JobKind]prometheus.Observer{}, plugin: map[string]*pluginSeries{}}
	for kind, p := range pools {
		k := string(kind)
		q := p.queue
		// The queue's depth is read when scraped: one function per kind, told apart by
		// its constant label.
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "interviewd_jobs_queued",
			Help:        "Background jobs waiting in this node's queue, by kind.",
			ConstLabels: prometheus.Labels{"kind": k},
		}, func() float64 { return float64(len(q)) }))
		m.running[kind] = running.WithLabelValues(k)
		m.ended[kind] = map[string]prometheus.Counter{}
		for _, r := range []string{resultOK, resultFailed, resultInterrupted} {
			m.ended[kind][r] = ended.WithLabelValues(k, r)
		}
		m.duration[kind] = duration.WithLabelValues(k)
	}
	for _, kind := range []string{pluginRedactor, pluginFormatter} {
		m.plugin[kind] = &pluginSeries{
			ok:       pluginRuns.WithLabelValues(kind, resultOK),
			failed:   pluginRuns.WithLabelValues(kind, resultFailed),
			duration: pluginDuration.WithLabelValues(kind),
		}
	}
	return m
}

// jobStarted and jobEnded bracket one job's run.
func (m *jobMetrics) jobStarted(kind kv.JobKind) { m.running[kind].Inc() }

func (m *jobMetrics) jobEnded(kind kv.JobKind, result string, d time.Duration) {
	m.running[kind].Dec()
	m.ended[kind][result].Inc()
	m.duration[kind].Observe(d.Seconds())
}

// pluginRun times one plugin run and counts its result.
func (m *jobMetrics) pluginRun(kind string, run func() error) error {
	start := time.Now()
	err := run()
	s := m.plugin[kind]
	s.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		s.failed.Inc()
	} else {
		s.ok.Inc()
	}
	return err
}
