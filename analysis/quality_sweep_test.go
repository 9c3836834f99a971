package analysis_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"interviewd/analysis"
	"interviewd/analysis/corpus"
)

// TestBuiltinQualitySweep widens TestBuiltinQuality's bar to more seeds when
// INTERVIEWD_QUALITY_SEEDS is set (24 gives the 48 studies the figures in
// docs/performance.md are measured on): the totals are logged, and at least 90% of
// the studies must recover 5 of their 6 planted themes. It is how a change to the
// engine is weighed; the default suite runs the six studies of TestBuiltinQuality.
func TestBuiltinQualitySweep(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("INTERVIEWD_QUALITY_SEEDS"))
	if seeds <= 0 {
		t.Skip("INTERVIEWD_QUALITY_SEEDS not set")
	}
	e := analysis.NewBuiltin()
	recovered, planted, good, studies := 0, 0, 0, 0
	for w := range corpus.Wordings {
		for seed := range uint64(seeds) {
			st := corpus.Generate(corpus.Options{Seed: seed + 1, Wording: w})
			a, err := e.Analyse(context.Background(), st.Input)
			if err != nil {
				t.Fatal(err)
			}
			r := corpus.Score(st, a)
			recovered += r.Recovered
			planted += r.Planted
			studies++
			if r.Recovered >= 5 {
				good++
			}
		}
	}
	t.Logf("recovered %d of %d planted themes; %d of %d studies at 5 of 6 or better", recovered, planted, good, studies)
	if float64(good) < 0.9*float64(studies) {
		t.Errorf("%d of %d studies at 5 of 6 or better, want at least 90%%", good, studies)
	}
}
