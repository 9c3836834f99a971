package jobs

import (
	"time"

	"interviewd/kv"
	"interviewd/metrics"
)

// jobMetrics are the runner's figures on the metrics.Set main hands over (Config.Metrics):
// per kind, jobs queued (the queue's depth) and running, jobs ended by result and
// their durations; and plugin runs by plugin kind and result with their durations.
type jobMetrics struct {
	running  map[kv.JobKind]*metrics.Gauge
	ended    map[kv.JobKind]map[string]*metrics.Counter
	duration map[kv.JobKind]*metrics.PrometheusHistogram
	plugin   map[string]*pluginSeries
}

type pluginSeries struct {
	ok, failed *metrics.Counter
	duration   *metrics.PrometheusHistogram
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

func newJobMetrics(set *metrics.Set, pools map[kv.JobKind]*pool) *jobMetrics {
	m := &jobMetrics{running: map[kv.JobKind]*metrics.Gauge{}, ended: map[kv.JobKind]map[string]*metrics.Counter{},
		duration: map[kv.JobKind]*metrics.PrometheusHistogram{}, plugin: map[string]*pluginSeries{}}
	for kind, p := range pools {
		k := `kind="` + string(kind) + `"`
		q := p.queue
		set.NewGauge(`interviewd_jobs_queued{`+k+`}`, func() float64 { return float64(len(q)) })
		m.running[kind] = set.NewGauge(`interviewd_jobs_running{`+k+`}`, nil)
		m.ended[kind] = map[string]*metrics.Counter{}
		for _, r := range []string{resultOK, resultFailed, resultInterrupted} {
			m.ended[kind][r] = set.NewCounter(`interviewd_jobs_ended_total{` + k + `,result="` + r + `"}`)
		}
		m.duration[kind] = set.NewPrometheusHistogramExt(`interviewd_job_duration_seconds{`+k+`}`,
			[]float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 900, 1800})
	}
	for _, kind := range []string{pluginRedactor, pluginFormatter} {
		k := `kind="` + kind + `"`
		m.plugin[kind] = &pluginSeries{
			ok:     set.NewCounter(`interviewd_plugin_runs_total{` + k + `,result="ok"}`),
			failed: set.NewCounter(`interviewd_plugin_runs_total{` + k + `,result="failed"}`),
			duration: set.NewPrometheusHistogramExt(`interviewd_plugin_run_duration_seconds{`+k+`}`,
				[]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30}),
		}
	}
	return m
}

// jobStarted and jobEnded bracket one job's run.
func (m *jobMetrics) jobStarted(kind kv.JobKind) { m.running[kind].Inc() }

func (m *jobMetrics) jobEnded(kind kv.JobKind, result string, d time.Duration) {
	m.running[kind].Dec()
	m.ended[kind][result].Inc()
	m.duration[kind].Update(d.Seconds())
}

// pluginRun times one plugin run and counts its result.
func (m *jobMetrics) pluginRun(kind string, run func() error) error {
	start := time.Now()
	err := run()
	s := m.plugin[kind]
	s.duration.UpdateDuration(start)
	if err != nil {
		s.failed.Inc()
	} else {
		s.ok.Inc()
	}
	return err
}
