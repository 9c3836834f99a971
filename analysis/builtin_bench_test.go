package analysis_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"interviewd/analysis"
	"interviewd/analysis/corpus"
)

// warmEngine returns a new engine with its language models loaded (on a tiny
// study) and an empty cache of read interviews.
func warmEngine(tb testing.TB) analysis.Engine {
	tb.Helper()
	e := analysis.NewBuiltin()
	tiny := corpus.Generate(corpus.Options{Seed: 99, Interviews: 1})
	if _, err := e.Analyse(context.Background(), tiny.Input); err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkBuiltin1000 is a full run over 1,000 interviews of 12 answers each,
// nothing cached.
func BenchmarkBuiltin1000(b *testing.B) {
	st := corpus.Generate(corpus.Options{Seed: 1, Interviews: 1000})
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		e := warmEngine(b)
		b.StartTimer()
		if _, err := e.Analyse(context.Background(), st.Input); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinIncremental is a refresh after one more interview, on an engine
// that has already analysed the other 1,000: each iteration adds a new one.
func BenchmarkBuiltinIncremental(b *testing.B) {
	const base = 1000
	st := corpus.Generate(corpus.Options{Seed: 1, Interviews: base + 200})
	e := warmEngine(b)
	in := st.Input
	in.Interviews = st.Input.Interviews[:base]
	if _, err := e.Analyse(context.Background(), in); err != nil {
		b.Fatal(err)
	}
	n := base
	b.ReportAllocs()
	for b.Loop() {
		if n == len(st.Input.Interviews) {
			b.StopTimer()
			n = base
			in.Interviews = st.Input.Interviews[:n]
			e.Analyse(context.Background(), in) // the next additions are new again only to a fresh engine
			e = warmEngine(b)
			if _, err := e.Analyse(context.Background(), in); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		n++
		in.Interviews = st.Input.Interviews[:n]
		if _, err := e.Analyse(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinPeakHeap10000 analyses 10,000 interviews and reports the peak
// heap in use while it runs (sampled every 20 ms), input included.
func BenchmarkBuiltinPeakHeap10000(b *testing.B) {
	st := corpus.Generate(corpus.Options{Seed: 1, Interviews: 10000})
	for b.Loop() {
		b.StopTimer()
		e := warmEngine(b)
		runtime.GC()
		var peak uint64
		var mu sync.Mutex
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peak = max(peak, ms.HeapInuse)
				mu.Unlock()
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
		b.StartTimer()
		if _, err := e.Analyse(context.Background(), st.Input); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		close(done)
		wg.Wait()
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.StartTimer()
	}
}
