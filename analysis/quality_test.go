package analysis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"interviewd/analysis"
	"interviewd/analysis/corpus"
)

// TestBuiltinQuality runs the built-in engine over planted-theme studies in two
// wordings (two products described in different words) and several seeds, and
// checks what a researcher relies on: the planted themes come back, every quote is
// a real span, the split on price shows as one finding with both sides, the
// objective nobody spoke to is a gap, and the segment theme leans to its segment.
func TestBuiltinQuality(t *testing.T) {
	e := analysis.NewBuiltin()
	for w := range corpus.Wordings {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("wording%d/seed%d", w, seed), func(t *testing.T) {
				st := corpus.Generate(corpus.Options{Seed: seed, Wording: w})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				a, err := e.Analyse(ctx, st.Input)
				if err != nil {
					t.Fatal(err)
				}
				if n := analysis.Ground(st.Input, a); n != 0 {
					t.Errorf("Ground dropped %d quotes; every quote must be an exact span", n)
				}
				r := corpus.Score(st, a)
				t.Logf("recovered %d of %d planted themes", r.Recovered, r.Planted)
				for _, ts := range r.Themes {
					t.Logf("  %-16s -> %-24q purity %.2f interviews %d recovered %v", ts.Theme, ts.Label, ts.Purity, ts.Interviews, ts.Recovered)
				}
				if r.Recovered < 5 {
					t.Errorf("recovered %d of %d planted themes, want at least 5", r.Recovered, r.Planted)
				}
				if r.SingleInterview != 0 {
					t.Errorf("%d themes quote a single interview", r.SingleInterview)
				}
				if n := len(a.Themes); n < 3 || n > 10 {
					t.Errorf("%d themes, want 3 to 10", n)
				}
				checkSplit(t, st, a)
				checkGap(t, st, a)
				checkSegment(t, st, a, r)
			})
		}
	}
}

// checkSplit wants one finding whose support and contrary quotes are the two
// planted sides of the split theme.
func checkSplit(t *testing.T, st corpus.Study, a *analysis.Analysis) {
	t.Helper()
	side := func(qs []analysis.Quote) (pol int, share float64) {
		count := map[int]int{}
		for _, q := range qs {
			if sp, ok := st.PlantedAt(q); ok && sp.Theme == st.Split {
				count[sp.Polarity]++
			}
		}
		for p, n := range count {
			if s := float64(n) / float64(len(qs)); s > share {
				pol, share = p, s
			}
		}
		return pol, share
	}
	for _, o := range a.Objectives {
		for _, f := range o.Findings {
			if len(f.Support) < 2 || len(f.Contrary) < 2 {
				continue
			}
			ps, ss := side(f.Support)
			pc, sc := side(f.Contrary)
			if ps != 0 && pc == -ps && ss >= 0.7 && sc >= 0.7 {
				t.Logf("split shown: %s", f.Statement)
				return
			}
		}
	}
	t.Errorf("no finding shows the %q split as support and contrary quotes", st.Split)
}

func checkGap(t *testing.T, st corpus.Study, a *analysis.Analysis) {
	t.Helper()
	for _, o := range a.Objectives {
		if o.Objective == st.Unaddressed {
			if !o.Gap {
				t.Errorf("objective %q not flagged as a gap: coverage %+v", o.Objective, o.Coverage)
			}
			return
		}
	}
	t.Errorf("objective %q missing", st.Unaddressed)
}

// checkSegment wants the theme matched to the segment theme to count at least twice
// as many interviews in its segment as in the other.
func checkSegment(t *testing.T, st corpus.Study, a *analysis.Analysis, r corpus.Result) {
	t.Helper()
	for _, ts := range r.Themes {
		if ts.Theme != st.SegmentTheme {
			continue
		}
		for _, th := range a.Themes {
			if th.Label == ts.Label {
				seg := th.Segments[st.SegmentKey]
				if seg[st.SegmentValue] < 2*max(seg[st.OtherValue], 1) {
					t.Errorf("theme %q segments %v, want %s=%s at least twice %s", th.Label, seg, st.SegmentKey, st.SegmentValue, st.OtherValue)
				}
				return
			}
		}
	}
	t.Errorf("segment theme %q not found", st.SegmentTheme)
}

// TestBuiltinDeterministic: the same input gives byte-identical JSON, from a fresh
// engine and from one whose cache is warm.
func TestBuiltinDeterministic(t *testing.T) {
	st := corpus.Generate(corpus.Options{Seed: 7, Wording: 1, Interviews: 30})
	run := func(e analysis.Engine) []byte {
		a, err := e.Analyse(context.Background(), st.Input)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	warm := analysis.NewBuiltin()
	first := run(warm)
	if second := run(warm); !bytes.Equal(first, second) {
		t.Error("a second run on a warm engine differs")
	}
	if fresh := run(analysis.NewBuiltin()); !bytes.Equal(first, fresh) {
		t.Error("a fresh engine's run differs")
	}
	if bytes.Contains(first, []byte("null")) {
		t.Error("the JSON has a null list")
	}
}
