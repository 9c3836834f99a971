package analysis

// centroidTable holds k dense centroids term-major: row t is every centroid's
// weight for term t, side by side. Scoring a sparse vector against all k then
// reads one short contiguous row per term of the vector, where a centroid-major
// layout reads k far-apart words per term; the sums are taken in the same order
// either way, so the scores are the same floats dotDense gives.
type centroidTable struct {
	k int
	w []float32 // len(dim)*k
}

// newCentroidTable lays out cents (each of length dim) term-major.
func newCentroidTable(cents [][]float32, dim int) *centroidTable {
	t := &centroidTable{}
	t.fill(cents, dim)
	return t
}

// fill lays cents out again, reusing t's storage.
func (t *centroidTable) fill(cents [][]float32, dim int) {
	t.k = len(cents)
	if n := dim * t.k; cap(t.w) >= n {
		t.w = t.w[:n]
	} else {
		t.w = make([]float32, n)
	}
	for c, cent := range cents {
		for j, x := range cent {
			t.w[j*t.k+c] = x
		}
	}
}

// nearest returns the centroid most similar to v and its score (the lowest index
// on a tie), using acc (at least k long) as scratch.
func (t *centroidTable) nearest(v []ent, acc []float32) (int, float32) {
	k := t.k
	acc = acc[:k]
	clear(acc)
	for _, e := range v {
		row := t.w[int(e.ID)*k:][:k]
		a, w := acc[:len(row)], e.W // same lengths: no bounds checks in the loop
		for c := range a {
			a[c] += w * row[c]
		}
	}
	best, bestS := -1, float32(-1)
	for c, s := range acc {
		if s > bestS {
			best, bestS = c, s
		}
	}
	return best, bestS
}
