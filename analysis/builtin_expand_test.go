package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWidenKeepsHeaviest: the selection of a widened statement's heaviest weights
// keeps exactly what sorting by heaviestFirst and cutting at widenedCap keeps,
// ties (the lower ids first) included.
func TestWidenKeepsHeaviest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := &widener{}
	for trial := range 500 {
		n := widenedCap + 1 + rng.IntN(80)
		v := make([]ent, n)
		for i := range v {
			// Few distinct weights, so ties at the cut are common.
			v[i] = ent{ID: int32(i * 3), W: float32(1+rng.IntN(6)) / 4}
		}
		want := slices.Clone(v)
		slices.SortFunc(want, heaviestFirst)
		want = want[:widenedCap]
		slices.SortFunc(want, byID)
		if got := w.heaviest(slices.Clone(v)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: kept %v, want %v", trial, got, want)
		}
	}
}
