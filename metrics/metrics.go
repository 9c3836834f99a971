// Package metrics keeps counters, gauges and histograms in sets and writes them in the
// Prometheus text exposition format (version 0.0.4).
//
// It is the small part of a metrics library interviewd uses, written here because the
// libraries do work at package initialisation (VictoriaMetrics/metrics formatted some
// five hundred bucket names and read the Go runtime's metric list before main ran):
// a fifth of the process's time from exec to its first answer. Nothing here runs before
// a set is created, and nothing is registered globally, so two servers in one test
// process keep separate figures.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Set is a group of metrics written together. It is safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	byName  map[string]metric
	ordered []string // names, sorted when written
	sorted  bool
}

// metric is one named metric's way of writing itself; name is its full name with
// labels (`requests_total{route="/x"}`).
type metric interface {
	write(w io.Writer, name string)
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{byName: map[string]metric{}} }

// register adds m under name. A name that is not a valid metric name with optional
// labels, or that is already in the set, is a programming error: it panics, as a
// duplicate series would silently split a figure in two.
func (s *Set) register(name string, m metric) {
	if err := validName(name); err != nil {
		panic(fmt.Sprintf("metrics: %q: %v", name, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byName[name]; dup {
		panic(fmt.Sprintf("metrics: %q is already registered", name))
	}
	s.byName[name] = m
	s.ordered = append(s.ordered, name)
	s.sorted = false
}

// WritePrometheus writes every metric of the set, ordered by full name.
func (s *Set) WritePrometheus(w io.Writer) {
	s.mu.Lock()
	if !s.sorted {
		sort.Strings(s.ordered)
		s.sorted = true
	}
	names := append([]string(nil), s.ordered...)
	ms := make([]metric, len(names))
	for i, n := range names {
		ms[i] = s.byName[n]
	}
	s.mu.Unlock()
	for i, m := range ms {
		m.write(w, names[i])
	}
}

// Counter counts up from zero.
type Counter struct{ n atomic.Uint64 }

// NewCounter registers a counter under name (with optional labels).
func (s *Set) NewCounter(name string) *Counter {
	c := &Counter{}
	s.register(name, c)
	return c
}

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Add adds n.
func (c *Counter) Add(n int) { c.n.Add(uint64(n)) }

// Get returns the count.
func (c *Counter) Get() uint64 { return c.n.Load() }

func (c *Counter) write(w io.Writer, name string) {
	fmt.Fprintf(w, "%s %d\n", name, c.Get())
}

// Gauge is a value that goes up and down, or, when made with a function, whatever the
// function returns when the set is written.
type Gauge struct {
	bits atomic.Uint64 // math.Float64bits of the value
	f    func() float64
}

// NewGauge registers a gauge under name. With f, the gauge reads f at each write and
// Set, Inc and Dec must not be used.
func (s *Set) NewGauge(name string, f func() float64) *Gauge {
	g := &Gauge{f: f}
	s.register(name, g)
	return g
}

// Get returns the gauge's value.
func (g *Gauge) Get() float64 {
	if g.f != nil {
		return g.f()
	}
	return math.Float64frombits(g.bits.Load())
}

// Set sets the value.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds d (which may be negative).
func (g *Gauge) Add(d float64) {
	for {
		old := g.bits.Load()
		if g.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// Inc adds one.
func (g *Gauge) Inc() { g.Add(1) }

// Dec subtracts one.
func (g *Gauge) Dec() { g.Add(-1) }

func (g *Gauge) write(w io.Writer, name string) {
	fmt.Fprintf(w, "%s %s\n", name, formatFloat(g.Get()))
}

// PrometheusHistogram counts observations into buckets with fixed upper bounds, and
// keeps their sum and count.
type PrometheusHistogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; one more for +Inf
	sum    float64
	count  uint64
}

// NewPrometheusHistogramExt registers a histogram under name with the given ascending
// upper bounds (+Inf is implied).
func (s *Set) NewPrometheusHistogramExt(name string, upperBounds []float64) *PrometheusHistogram {
	h := newHistogram(name, upperBounds)
	s.register(name, h)
	return h
}

func newHistogram(name string, upperBounds []float64) *PrometheusHistogram {
	if !sort.Float64sAreSorted(upperBounds) || len(upperBounds) == 0 {
		panic(fmt.Sprintf("metrics: %q: upper bounds must be ascending and not empty", name))
	}
	return &PrometheusHistogram{bounds: append([]float64(nil), upperBounds...), counts: make([]uint64, len(upperBounds)+1)}
}

// DefaultBuckets are the client libraries' usual request-duration bounds, in seconds.
var DefaultBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// GetOrCreatePrometheusHistogram returns the histogram registered under name, creating it
// with DefaultBuckets when there is none. It panics when name holds another kind.
func (s *Set) GetOrCreatePrometheusHistogram(name string) *PrometheusHistogram {
	s.mu.Lock()
	m, ok := s.byName[name]
	s.mu.Unlock()
	if ok {
		h, isHist := m.(*PrometheusHistogram)
		if !isHist {
			panic(fmt.Sprintf("metrics: %q is registered as another kind", name))
		}
		return h
	}
	h := newHistogram(name, DefaultBuckets)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.byName[name]; ok { // created meanwhile
		if h, isHist := m.(*PrometheusHistogram); isHist {
			return h
		}
		panic(fmt.Sprintf("metrics: %q is registered as another kind", name))
	}
	if err := validName(name); err != nil {
		panic(fmt.Sprintf("metrics: %q: %v", name, err))
	}
	s.byName[name] = h
	s.ordered = append(s.ordered, name)
	s.sorted = false
	return h
}

// Update records one observation v.
func (h *PrometheusHistogram) Update(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // the first bound ≥ v: le is inclusive
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

// UpdateDuration records the seconds since start.
func (h *PrometheusHistogram) UpdateDuration(start time.Time) { h.Update(time.Since(start).Seconds()) }

func (h *PrometheusHistogram) write(w io.Writer, name string) {
	base, labels := name, ""
	if i := strings.IndexByte(name, '{'); i >= 0 {
		base, labels = name[:i], name[i+1:len(name)-1]+","
	}
	h.mu.Lock()
	counts := append([]uint64(nil), h.counts...)
	sum, count := h.sum, h.count
	h.mu.Unlock()
	var cum uint64
	for i, ub := range h.bounds {
		cum += counts[i]
		fmt.Fprintf(w, "%s_bucket{%sle=\"%s\"} %d\n", base, labels, formatFloat(ub), cum)
	}
	fmt.Fprintf(w, "%s_bucket{%sle=\"+Inf\"} %d\n", base, labels, count)
	suffix := ""
	if labels != "" {
		suffix = "{" + labels[:len(labels)-1] + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n", base, suffix, formatFloat(sum))
	fmt.Fprintf(w, "%s_count%s %d\n", base, suffix, count)
}

// formatFloat writes v as Prometheus reads it: the shortest exact form.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// validName checks name is a metric name, optionally followed by {label="value",...}.
func validName(name string) error {
	base, labels := name, ""
	if i := strings.IndexByte(name, '{'); i >= 0 {
		if !strings.HasSuffix(name, "}") {
			return fmt.Errorf("labels must end with }")
		}
		base, labels = name[:i], name[i+1:len(name)-1]
	}
	if !ident(base, true) {
		return fmt.Errorf("bad metric name %q", base)
	}
	for labels != "" {
		eq := strings.IndexByte(labels, '=')
		if eq < 0 || !ident(labels[:eq], false) {
			return fmt.Errorf("bad label in %q", labels)
		}
		rest := labels[eq+1:]
		if len(rest) < 2 || rest[0] != '"' {
			return fmt.Errorf("label %s: value must be quoted", labels[:eq])
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return fmt.Errorf("label %s: unterminated value", labels[:eq])
		}
		labels = rest[end+1:]
		if labels != "" {
			if labels[0] != ',' {
				return fmt.Errorf("labels must be separated by commas")
			}
			labels = labels[1:]
		}
	}
	return nil
}

// ident reports whether s is a Prometheus metric (colons allowed) or label name.
func ident(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || (i > 0 && r >= '0' && r <= '9') || (colon && r == ':')
		if !ok {
			return false
		}
	}
	return true
}
