package cmd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server"
)

// opsFlags are serve's operations flags (HTTPS, metrics, scheduled backups) and what
// they set up. serve calls addOpsFlags, check, then listen once the server is built,
// and close at the end.
type opsFlags struct {
	tlsCert, tlsKey, acmeDomain, acmeEmail, acmeDirectory, acmeCARoot, httpAddr *string
	metricsAddr                                                                 *string
	backupDir, backupEvery                                                      *string
	backupKeep                                                                  *int

	every   time.Duration
	metrics *prometheus.Registry
	commit  prometheus.Histogram

	tls       *tlsSetup
	metricsLn net.Listener
	metricsS  *fasthttp.Server
	metricsCh chan struct{}
	stop      context.CancelFunc
	backups   chan struct{}
}

func addOpsFlags(fs *flagSet) *opsFlags {
	return &opsFlags{
		tlsCert:       fs.str("tls-cert", "FILE", "", "TLS certificate file (PEM, full chain); re-read on SIGHUP"),
		tlsKey:        fs.str("tls-key", "FILE", "", "TLS private key file (PEM) for --tls-cert"),
		acmeDomain:    fs.str("acme-domain", "DOMAIN,...", "", "get certificates automatically over ACME for these domains (comma-separated); the certificate authority reaches --addr on port 443 (TLS-ALPN-01), or --http-addr on port 80 when given (HTTP-01)"),
		acmeEmail:     fs.str("acme-email", "EMAIL", "", "contact address given to the ACME certificate authority"),
		acmeDirectory: fs.str("acme-directory", "URL", "", "ACME directory URL (default Let's Encrypt; e.g. its staging directory for trials)"),
		acmeCARoot:    fs.str("acme-ca-root", "FILE", "", "extra root certificates (PEM file) trusted for the ACME directory's HTTPS only, for a private or test CA"),
		httpAddr:      fs.str("http-addr", "HOST:PORT", "", "with --tls-cert or --acme-domain, also listen for plain HTTP here (such as :80): redirects to HTTPS and answers ACME HTTP-01 challenges; empty: no plain-HTTP listener"),
		metricsAddr:   fs.str("metrics-addr", "HOST:PORT", "", "serve /metrics on this address (to anyone who reaches it) instead of to loopback clients of --addr"),
		backupDir:     fs.str("backup-dir", "DIR", "", "take scheduled backups into this folder"),
		backupEvery:   fs.str("backup-every", "DURATION", "6h", "interval between scheduled backups"),
		backupKeep:    fs.integer("backup-keep", "N", 14, "scheduled backups to keep (the oldest are removed)"),
	}
}

// check validates the flags before anything touches disk, and makes the metrics
// registry.
func (o *opsFlags) check() error {
	switch {
	case (*o.tlsCert == "") != (*o.tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together: give both files")
	case *o.tlsCert != "" && *o.acmeDomain != "":
		return errors.New("--tls-cert and --acme-domain are two ways to get a certificate: choose one")
	case *o.acmeDomain == "" && (*o.acmeEmail != "" || *o.acmeDirectory != "" || *o.acmeCARoot != ""):
		return errors.New("--acme-email, --acme-directory and --acme-ca-root need --acme-domain")
	case o.plainHTTP() && !o.tlsOn():
		return errors.New("--http-addr is a plain-HTTP listener beside HTTPS: it needs --tls-cert or --acme-domain (without them, --addr serves plain HTTP)")
	}
	if o.plainHTTP() {
		if _, _, err := net.SplitHostPort(*o.httpAddr); err != nil {
			return fmt.Errorf("--http-addr %q: want host:port or :port, such as :80", *o.httpAddr)
		}
	}
	for _, d := range o.domains() {
		if strings.ContainsAny(d, "/:@ ") || !strings.Contains(d, ".") {
			return fmt.Errorf("--acme-domain %q: want a domain name such as interviews.example.com", d)
		}
	}
	if *o.backupDir != "" {
		d, err := time.ParseDuration(*o.backupEvery)
		if err != nil || d < time.Second {
			return fmt.Errorf("--backup-every %q: want a duration of at least 1s, such as 6h", *o.backupEvery)
		}
		if *o.backupKeep < 1 {
			return fmt.Errorf("--backup-keep %d: keep at least one backup", *o.backupKeep)
		}
		o.every = d
	}
	o.metrics = newMetricsRegistry(readVersion())
	o.commit = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "interviewd_db_commit_duration_seconds",
		Help:    "Time a store commit took, from the end of its writers' work to its being durable.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1},
	})
	o.metrics.MustRegister(o.commit)
	return nil
}

func (o *opsFlags) domains() []string {
	var out []string
	for _, d := range strings.Split(*o.acmeDomain, ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// onCommit is kv's commit hook: the commit-latency histogram.
func (o *opsFlags) onCommit(d time.Duration) { o.commit.Observe(d.Seconds()) }

// plainHTTP reports whether --http-addr asks for a plain-HTTP listener ("off" is the
// empty value's old spelling).
func (o *opsFlags) plainHTTP() bool { return *o.httpAddr != "" && *o.httpAddr != "off" }

// tlsOn reports whether serve answers over HTTPS.
func (o *opsFlags) tlsOn() bool { return *o.tlsCert != "" || *o.acmeDomain != "" }

// serverConfig adds the operations settings to the server's configuration.
func (o *opsFlags) serverConfig(cfg server.Config) server.Config {
	cfg.Metrics, cfg.MetricsElsewhere, cfg.HSTS = o.metrics, *o.metricsAddr != "", o.tlsOn()
	return cfg
}

// loopbackListener reports whether a listener is bound to a loopback address only (not
// to all interfaces, not to a public one): only then may the main listener serve
// /metrics.
func loopbackListener(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// newMetricsServer is the --metrics-addr server. Like the main server it never formats
// a malformed request into its log: fasthttp's own lines go through zerolog, redacted.
func newMetricsServer(h fasthttp.RequestHandler, log zerolog.Logger) *fasthttp.Server {
	return &fasthttp.Server{Name: "interviewd", ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		SecureErrorLogMessage: true,
		Logger:                server.FasthttpLogger(log),
		Handler: func(c *fasthttp.RequestCtx) {
			if string(c.Path()) != "/metrics" {
				c.Error("Not found: metrics are at /metrics.", fasthttp.StatusNotFound)
				return
			}
			h(c)
		}}
}

// listen wraps the main listener in TLS when asked and starts what runs beside the
// server: the --http-addr redirect, the SIGHUP reload, the metrics listener and scheduled
// backups. It returns the listener to serve on.
func (o *opsFlags) listen(ctx context.Context, ln net.Listener, db *kv.DB, srv *server.Server, log zerolog.Logger) (net.Listener, error) {
	ctx, o.stop = context.WithCancel(ctx)
	o.metrics.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "interviewd_db_file_bytes",
		Help: "Size of the store's database file in bytes (0 on PostgreSQL).",
	}, func() float64 { return float64(db.FileSize()) }))
	if db.Shared() {
		retries := func() float64 { return float64(db.StoreRetries()) }
		o.metrics.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "interviewd_db_retries_total",
				Help: "Transactions the PostgreSQL store ran again after a serialization failure or a deadlock since start: a rising rate means nodes contend for the same records.",
			}, retries),
			// The same count under its first name, which lacks a counter's _total:
			// kept, as a gauge, for the dashboards that read it.
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "interviewd_db_retries",
				Help: "Deprecated: the same count as interviewd_db_retries_total, exposed as a gauge.",
			}, retries),
		)
	}
	t, err := newTLS(o, db.Dir(), log)
	if err != nil {
		return nil, err
	}
	if t != nil {
		o.tls = t
		vec := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "interviewd_tls_reloads_total",
			Help: "Reloads of the TLS certificate and key files on SIGHUP, by result.",
		}, []string{"result"})
		o.metrics.MustRegister(vec)
		reloads := map[bool]prometheus.Counter{true: vec.WithLabelValues("ok"), false: vec.WithLabelValues("failed")}
		t.reloaded = func(err error) { reloads[err == nil].Inc() }
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		httpAddr := ""
		if o.plainHTTP() {
			httpAddr = *o.httpAddr
		}
		if err := t.start(ctx, httpAddr, port); err != nil {
			return nil, err
		}
		ln = tls.NewListener(ln, t.cfg)
	}
	if *o.metricsAddr != "" {
		mln, err := net.Listen("tcp", *o.metricsAddr)
		if err != nil {
			return nil, fmt.Errorf("listen on --metrics-addr %s: %w", *o.metricsAddr, err)
		}
		o.metricsLn, o.metricsCh = mln, make(chan struct{})
		o.metricsS = newMetricsServer(srv.MetricsHandler(), log)
		go func() {
			defer close(o.metricsCh)
			_ = o.metricsS.Serve(mln)
		}()
		log.Info().Str("metrics_addr", mln.Addr().String()).Msg("serving metrics")
	}
	if *o.backupDir != "" {
		backups := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "interviewd_backups_total",
			Help: "Scheduled backups taken, by result.",
		}, []string{"result"})
		dur := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "interviewd_backup_duration_seconds",
			Help:    "Time a scheduled backup took, whatever its result.",
			Buckets: []float64{0.1, 0.5, 1, 5, 10, 30, 60, 300, 900},
		})
		lastG := prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "interviewd_backup_last_success_timestamp_seconds",
			Help: "Unix time of the last scheduled backup that succeeded (0 before the first).",
		})
		o.metrics.MustRegister(backups, dur, lastG)
		ok, failed := backups.WithLabelValues("ok"), backups.WithLabelValues("failed")
		b := &backupSchedule{dir: *o.backupDir, every: o.every, keep: *o.backupKeep, db: db, log: log, now: time.Now,
			took: func(err error, d time.Duration) {
				dur.Observe(d.Seconds())
				if err != nil {
					failed.Inc()
					return
				}
				ok.Inc()
				lastG.Set(float64(time.Now().Unix()))
			}}
		o.backups = make(chan struct{})
		go func() {
			defer close(o.backups)
			b.run(ctx)
		}()
		log.Info().Str("dir", b.dir).Dur("every", b.every).Int("keep", b.keep).Msg("scheduled backups on")
	}
	return ln, nil
}

// close stops everything listen started and waits for it.
func (o *opsFlags) close() {
	if o.stop != nil {
		o.stop()
	}
	if o.tls != nil {
		o.tls.close()
	}
	if o.metricsS != nil {
		// Closing the listener first ends Serve even if it has not started yet (a
		// Shutdown before Serve registers the listener would not reach it).
		_ = o.metricsLn.Close()
		_ = o.metricsS.Shutdown()
		<-o.metricsCh
	}
	if o.backups != nil {
		<-o.backups
	}
}

// baseURL is the default base URL (derived from --addr) adjusted for HTTPS: the https
// scheme, and with ACME the first domain, which is what certificates are valid for.
func (o *opsFlags) baseURL(derived string) string {
	if !o.tlsOn() {
		return derived
	}
	u, err := url.Parse(derived)
	if err != nil {
		return derived
	}
	u.Scheme = "https"
	port := u.Port()
	if d := o.domains(); len(d) > 0 {
		u.Host = d[0]
		if port != "" && port != "443" {
			u.Host = net.JoinHostPort(d[0], port)
		}
	} else if port == "443" {
		u.Host = u.Hostname()
	}
	return u.String()
}
