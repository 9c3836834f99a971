package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"interviewd/kv"
)

// stats summarises one timed run.
type stats struct {
	Requests int
	Errors   int
	RPS      float64
	P50      time.Duration
	P99      time.Duration
	Max      time.Duration
}

// summarise turns a run into its figures: percentiles by nearest rank over every
// request's latency.
func summarise(l load) stats {
	s := stats{Requests: l.requests, Errors: l.errors}
	if l.elapsed > 0 {
		s.RPS = float64(l.requests) / l.elapsed.Seconds()
	}
	s.P50 = percentile(l.latencies, 0.50)
	s.P99 = percentile(l.latencies, 0.99)
	s.Max = percentile(l.latencies, 1)
	return s
}

// percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted, or 0 when it
// is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// figure is one named count a scenario's verification reports ("lost=0").
type figure struct {
	Name  string
	Value int
}

// result is one scenario's figures, with its ceiling's when that was measured.
type result struct {
	Scenario string
	Conns    int
	Duration time.Duration
	stats
	Ceiling *stats         // nil with --url
	Checks  []figure       // what the scenario's verification counted, if it has one
	Commits *commitFigures // in-process runs whose load committed anything
}

// commitFigures are the store's read-write commits during one timed run: how often it
// committed and how many mutations each commit carried on average.
type commitFigures struct {
	Commits         uint64
	PerSecond       float64
	WritesPerCommit float64
}

// commitFiguresOf returns the figures between two counter readings elapsed apart, or
// nil when nothing was committed.
func commitFiguresOf(before, after kv.CommitStats, elapsed time.Duration) *commitFigures {
	c, w := after.Commits-before.Commits, after.Writes-before.Writes
	if c == 0 {
		return nil
	}
	f := &commitFigures{Commits: c, WritesPerCommit: float64(w) / float64(c)}
	if elapsed > 0 {
		f.PerSecond = float64(c) / elapsed.Seconds()
	}
	return f
}

// check returns the named verification count and whether there is one.
func (r result) check(name string) (int, bool) {
	for _, f := range r.Checks {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// ratio is the scenario's throughput as a share of its ceiling's, or 0 if unmeasured.
func (r result) ratio() float64 {
	if r.Ceiling == nil || r.Ceiling.RPS == 0 {
		return 0
	}
	return r.RPS / r.Ceiling.RPS
}

// report is everything one invocation measured.
type report struct {
	Startup time.Duration // 0: not measured (--url)
	Exec    *execFigures  // nil: not measured (--url, --exec-runs 0)
	Results []result
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64) + "ms"
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
}

// writeText prints a start-up line and one line per scenario.
func (rep report) writeText(w io.Writer) error {
	var b strings.Builder
	if rep.Startup > 0 {
		fmt.Fprintf(&b, "startup=%s\n", ms(rep.Startup))
	}
	if f := rep.Exec; f != nil {
		fmt.Fprintf(&b, "exec runs=%d first_200=%s bare_first_200=%s ratio=%.2f stop=%s stop_max=%s idle_rss_anon=%.1fMiB idle=%s binary=%.1fMiB bare_binary=%.1fMiB",
			f.Runs, ms(f.First200), ms(f.BareFirst), f.ratio(), ms(f.Stop), ms(f.StopMax), mib(f.IdleRSSAnon), f.Idle, mib(f.Binary), mib(f.BareBinary))
		if f.ExistingStudies > 0 {
			fmt.Fprintf(&b, " first_200_existing=%s existing_studies=%d", ms(f.First200Existing), f.ExistingStudies)
		}
		b.WriteByte('\n')
	}
	width := 0
	for _, r := range rep.Results {
		width = max(width, len(r.Scenario))
	}
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "%-*s  conns=%d dur=%s req=%d rps=%.0f p50=%s p99=%s max=%s errors=%d",
			width, r.Scenario, r.Conns, r.Duration, r.Requests, r.RPS, ms(r.P50), ms(r.P99), ms(r.Max), r.Errors)
		if r.Ceiling != nil {
			fmt.Fprintf(&b, " ceiling_rps=%.0f ceiling_p50=%s ceiling_errors=%d ceiling_ratio=%.2f",
				r.Ceiling.RPS, ms(r.Ceiling.P50), r.Ceiling.Errors, r.ratio())
		}
		for _, f := range r.Checks {
			fmt.Fprintf(&b, " %s=%d", f.Name, f.Value)
		}
		if c := r.Commits; c != nil {
			fmt.Fprintf(&b, " commits=%d commits_per_s=%.0f writes_per_commit=%.1f", c.Commits, c.PerSecond, c.WritesPerCommit)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type statsJSON struct {
	Requests int     `json:"requests"`
	RPS      float64 `json:"rps"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	Errors   int     `json:"errors"`
}

type resultJSON struct {
	Scenario  string  `json:"scenario"`
	Conns     int     `json:"conns"`
	DurationS float64 `json:"duration_s"`
	statsJSON
	Ceiling      *statsJSON     `json:"ceiling,omitempty"`
	CeilingRatio *float64       `json:"ceiling_ratio,omitempty"`
	Checks       map[string]int `json:"checks,omitempty"`
	Commits      *commitsJSON   `json:"commits,omitempty"`
}

type commitsJSON struct {
	Commits         uint64  `json:"commits"`
	PerSecond       float64 `json:"per_s"`
	WritesPerCommit float64 `json:"writes_per_commit"`
}

type startupJSON struct {
	Scenario  string  `json:"scenario"`
	StartupMS float64 `json:"startup_ms"`
}

type execJSON struct {
	Scenario     string  `json:"scenario"`
	Runs         int     `json:"runs"`
	First200MS   float64 `json:"first_200_ms"`
	BareFirst200 float64 `json:"bare_first_200_ms"`
	Ratio        float64 `json:"ratio"`
	StopMS       float64 `json:"stop_ms"`
	StopMaxMS    float64 `json:"stop_max_ms"`
	IdleS        float64 `json:"idle_s"`
	IdleRSSAnon  int64   `json:"idle_rss_anon_bytes"`
	BinaryBytes  int64   `json:"binary_bytes"`
	BareBinBytes int64   `json:"bare_binary_bytes"`
	// On a copy of a data folder holding ExistingStudies studies; absent when skipped.
	First200ExistingMS *float64 `json:"first_200_existing_ms,omitempty"`
	ExistingStudies    int      `json:"existing_studies,omitempty"`
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func msFloat(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (s stats) json() statsJSON {
	return statsJSON{Requests: s.Requests, RPS: s.RPS, P50MS: msFloat(s.P50), P99MS: msFloat(s.P99), MaxMS: msFloat(s.Max), Errors: s.Errors}
}

// writeJSON prints one JSON array: the start-up entry (when measured), then one object
// per scenario.
func (rep report) writeJSON(w io.Writer) error {
	out := []any{}
	if rep.Startup > 0 {
		out = append(out, startupJSON{Scenario: "startup", StartupMS: msFloat(rep.Startup)})
	}
	if f := rep.Exec; f != nil {
		ej := execJSON{Scenario: "exec", Runs: f.Runs, First200MS: msFloat(f.First200), BareFirst200: msFloat(f.BareFirst),
			Ratio: f.ratio(), StopMS: msFloat(f.Stop), StopMaxMS: msFloat(f.StopMax), IdleS: f.Idle.Seconds(), IdleRSSAnon: f.IdleRSSAnon,
			BinaryBytes: f.Binary, BareBinBytes: f.BareBinary}
		if f.ExistingStudies > 0 {
			v := msFloat(f.First200Existing)
			ej.First200ExistingMS, ej.ExistingStudies = &v, f.ExistingStudies
		}
		out = append(out, ej)
	}
	for _, r := range rep.Results {
		rj := resultJSON{Scenario: r.Scenario, Conns: r.Conns, DurationS: r.Duration.Seconds(), statsJSON: r.stats.json()}
		if r.Ceiling != nil {
			c, ratio := r.Ceiling.json(), r.ratio()
			rj.Ceiling, rj.CeilingRatio = &c, &ratio
		}
		if len(r.Checks) > 0 {
			rj.Checks = make(map[string]int, len(r.Checks))
			for _, f := range r.Checks {
				rj.Checks[f.Name] = f.Value
			}
		}
		if c := r.Commits; c != nil {
			rj.Commits = &commitsJSON{Commits: c.Commits, PerSecond: c.PerSecond, WritesPerCommit: c.WritesPerCommit}
		}
		out = append(out, rj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
