package cmd

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newMetricsRegistry returns the Prometheus registry serve owns and hands to every
// part (server, jobs, the kv commit hook, TLS, backups). Besides their figures it holds
// the Go runtime's (go_*), the process's (process_*) and interviewd_build_info. It is
// not the client library's global default registry: two servers in one test process
// keep separate figures.
func newMetricsRegistry(v buildVersion) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "interviewd_build_info",
			Help:        "Always 1; its labels say which build is running: the module version, the VCS revision and the Go version.",
			ConstLabels: prometheus.Labels{"version": v.Version, "revision": v.Revision, "goversion": v.Go},
		}, func() float64 { return 1 }),
	)
	return reg
}
