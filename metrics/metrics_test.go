package metrics

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestWritePrometheus(t *testing.T) {
	s := NewSet()
	c := s.NewCounter(`requests_total{route="/a",status="2xx"}`)
	g := s.NewGauge(`jobs_running{kind="export"}`, nil)
	s.NewGauge(`db_file_bytes`, func() float64 { return 32768 })
	h := s.NewPrometheusHistogramExt(`duration_seconds{kind="x"}`, []float64{0.1, 1, 10})
	plain := s.NewPrometheusHistogramExt(`commit_seconds`, []float64{0.5})
	c.Inc()
	c.Add(2)
	g.Inc()
	g.Inc()
	g.Dec()
	for _, v := range []float64{0.05, 0.1, 0.5, 3, 99} { // 0.1 is in le="0.1": bounds are inclusive
		h.Update(v)
	}
	plain.Update(0.25)
	var b bytes.Buffer
	s.WritePrometheus(&b)
	want := `commit_seconds_bucket{le="0.5"} 1
commit_seconds_bucket{le="+Inf"} 1
commit_seconds_sum 0.25
commit_seconds_count 1
db_file_bytes 32768
duration_seconds_bucket{kind="x",le="0.1"} 2
duration_seconds_bucket{kind="x",le="1"} 3
duration_seconds_bucket{kind="x",le="10"} 4
duration_seconds_bucket{kind="x",le="+Inf"} 5
duration_seconds_sum{kind="x"} 102.65
duration_seconds_count{kind="x"} 5
jobs_running{kind="export"} 1
requests_total{route="/a",status="2xx"} 3
`
	if got := b.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if c.Get() != 3 || g.Get() != 1 {
		t.Fatalf("Get: counter %d gauge %g", c.Get(), g.Get())
	}
}

func TestGetOrCreatePrometheusHistogram(t *testing.T) {
	s := NewSet()
	var wg sync.WaitGroup
	got := make([]*PrometheusHistogram, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.GetOrCreatePrometheusHistogram(`http_seconds{route="/x"}`)
			got[i].Update(0.003)
		}()
	}
	wg.Wait()
	for _, h := range got[1:] {
		if h != got[0] {
			t.Fatal("concurrent GetOrCreate made two histograms for one name")
		}
	}
	var b bytes.Buffer
	s.WritePrometheus(&b)
	for _, line := range []string{`http_seconds_bucket{route="/x",le="0.005"} 16`, `http_seconds_bucket{route="/x",le="10"} 16`, `http_seconds_count{route="/x"} 16`} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("missing %q in\n%s", line, b.String())
		}
	}
	if n := strings.Count(b.String(), "_bucket{"); n != len(DefaultBuckets)+1 {
		t.Errorf("%d bucket lines, want %d", n, len(DefaultBuckets)+1)
	}
}

func TestRegisterRefuses(t *testing.T) {
	for _, tc := range []struct{ name, metric string }{
		{"Duplicate", `a_total`},
		{"EmptyName", ``},
		{"DigitFirst", `1a`},
		{"Dash", `a-b`},
		{"UnquotedLabel", `a{b=c}`},
		{"UnterminatedLabels", `a{b="c"`},
		{"UnterminatedValue", `a{b="c}`},
		{"NoComma", `a{b="c"d="e"}`},
		{"BadLabelName", `a{1b="c"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			s.NewCounter(`a_total`)
			defer func() {
				if recover() == nil {
					t.Fatalf("%q registered without a panic", tc.metric)
				}
			}()
			s.NewCounter(tc.metric)
		})
	}
	t.Run("OK_EscapedQuote", func(t *testing.T) {
		NewSet().NewCounter(`a{route="x\"y",b="z"}`)
	})
	t.Run("KindClash", func(t *testing.T) {
		s := NewSet()
		s.NewCounter(`x`)
		defer func() {
			if recover() == nil {
				t.Fatal("GetOrCreate over a counter did not panic")
			}
		}()
		s.GetOrCreatePrometheusHistogram(`x`)
	})
}

func BenchmarkHistogramUpdate(b *testing.B) {
	h := NewSet().NewPrometheusHistogramExt("x", DefaultBuckets)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Update(0.02)
		}
	})
}
