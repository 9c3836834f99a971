package analysis

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// Clustering bounds: the choice of k and the k-means runs see a sample of at most
// sampleCap vectors (chosen by a stable hash, so it barely moves when one interview
// is added), silhouettes are measured over at most silhouetteCap of them, and the
// result is then spread over every vector in a few passes. This keeps a refresh
// cheap however many interviews a study has.
const (
	sampleCap     = 500
	silhouetteCap = 350
	kmeansRounds  = 20
	kmeansStarts  = 2
	refinePasses  = 2
)

// clusterSpec says what to cluster: vectors, their stable sampling keys, the
// vocabulary size and the range of k to try.
type clusterSpec struct {
	vecs       [][]ent
	keys       []uint64
	dim        int
	kmin, kmax int
	// minSim is the least cosine to its centroid a vector needs to belong to it;
	// weaker ones are left out as noise.
	minSim float32
	seed   uint64
	// sample, when set, lowers sampleCap (silhouettes then use two thirds of it).
	sample int
	// workers bounds the goroutines the search and the assignment use.
	workers int
}

// clusters is the outcome: each vector's cluster (-1 for none) and its cosine to it.
type clusters struct {
	k         int
	centroids [][]float32
	assign    []int32
	sim       []float32
}

// cluster runs spherical k-means with k chosen by silhouette over [kmin, kmax],
// deterministically (k-means++ seeded from spec.seed, ties to the lower index).
func cluster(ctx context.Context, spec clusterSpec) (clusters, error) {
	n := len(spec.vecs)
	out := clusters{assign: make([]int32, n), sim: make([]float32, n)}
	for i := range out.assign {
		out.assign[i] = -1
	}
	var idx []int
	for i, v := range spec.vecs {
		if len(v) > 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return out, nil
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(spec.keys[a], spec.keys[b]), cmp.Compare(a, b))
	})
	cap, silCap := sampleCap, silhouetteCap
	if spec.sample > 0 {
		cap, silCap = min(cap, spec.sample), min(silCap, spec.sample*2/3)
	}
	sample := idx[:min(len(idx), cap)]
	// The sample speaks a small part of the vocabulary: renumber it densely so
	// centroids during the search are short.
	local := map[int32]int32{}
	var global []int32
	svecs := make([][]ent, len(sample))
	for i, j := range sample {
		v := make([]ent, len(spec.vecs[j]))
		for x, e := range spec.vecs[j] {
			id, ok := local[e.ID]
			if !ok {
				id = int32(len(global))
				local[e.ID] = id
				global = append(global, e.ID)
			}
			v[x] = ent{ID: id, W: e.W}
		}
		slices.SortFunc(v, func(a, b ent) int { return cmp.Compare(a.ID, b.ID) })
		svecs[i] = v
	}
	ldim := len(global)

	kmax := min(spec.kmax, max(len(sample)/3, 1))
	kmin := min(spec.kmin, kmax)
	var sims [][]float32
	if kmax > kmin {
		m := min(len(svecs), silCap)
		sims = make([][]float32, m)
		for i := range m {
			sims[i] = make([]float32, m)
			for j := range i {
				s := dot(svecs[i], svecs[j])
				sims[i][j], sims[j][i] = s, s
			}
			sims[i][i] = 1
		}
	}
	// The candidate k are tried side by side: each run writes only its own slot,
	// and the best is then picked in candidate order, so the schedule cannot
	// change the choice.
	ks := kCandidates(kmin, kmax)
	if sims == nil {
		ks = ks[:1]
	}
	type tried struct {
		cents [][]float32
		score float64
	}
	runs := make([]tried, len(ks))
	parallel(spec.workers, len(ks), func(i int) {
		if ctx.Err() != nil {
			return
		}
		cents, labels := kmeans(svecs, ldim, ks[i], spec.seed)
		runs[i].cents = cents
		if sims != nil {
			runs[i].score = silhouette(sims, labels[:len(sims)], ks[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return out, err
	}
	best := runs[0].cents
	bestScore := math.Inf(-1)
	for _, r := range runs {
		if sims == nil {
			break
		}
		if r.score > bestScore+1e-9 {
			best, bestScore = r.cents, r.score
		}
	}

	// Spread over every vector: assign, recompute centroids from the confident
	// members only (noise would drag them), and repeat.
	cents := make([][]float32, len(best))
	for c, lc := range best {
		cents[c] = make([]float32, spec.dim)
		for l, w := range lc {
			cents[c][global[l]] = w
		}
	}
	next := make([][]float64, len(cents))
	for i := range next {
		next[i] = make([]float64, spec.dim)
	}
	table := newCentroidTable(cents, spec.dim)
	for pass := 0; pass <= refinePasses; pass++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		table.fill(cents, spec.dim)
		assignAll(spec.workers, table, idx, spec.vecs, out.assign, out.sim)
		if pass == refinePasses {
			break
		}
		for i := range next {
			clear(next[i])
		}
		for i := range spec.vecs {
			if out.assign[i] >= 0 && out.sim[i] >= spec.minSim {
				addTo(next[out.assign[i]], spec.vecs[i])
			}
		}
		for c := range cents {
			unitInto(cents[c], next[c])
		}
	}
	for i := range out.assign {
		if out.sim[i] < spec.minSim {
			out.assign[i] = -1
		}
	}
	out.k, out.centroids = len(cents), cents
	return out, nil
}

// kmeans clusters vecs into k groups (best of kmeansStarts seeded runs) and returns
// the unit centroids and each vector's label.
func kmeans(vecs [][]ent, dim, k int, seed uint64) ([][]float32, []int32) {
	var bestC [][]float32
	var bestL []int32
	bestObj := math.Inf(-1)
	table := &centroidTable{}
	acc := make([]float32, k)
	sums := make([][]float64, k)
	for c := range sums {
		sums[c] = make([]float64, dim)
	}
	for start := range kmeansStarts {
		rng := rand.New(rand.NewPCG(seed, uint64(k)<<8|uint64(start)))
		cents := seedCentroids(vecs, dim, k, rng)
		labels := make([]int32, len(vecs))
		var obj float64
		for round := range kmeansRounds {
			changed := false
			obj = 0
			table.fill(cents, dim)
			for i, v := range vecs {
				c, s := table.nearest(v, acc)
				if round == 0 || labels[i] != int32(c) {
					changed = true
				}
				labels[i] = int32(c)
				obj += float64(s)
			}
			if !changed {
				break
			}
			for c := range sums {
				clear(sums[c])
			}
			for i, v := range vecs {
				addTo(sums[labels[i]], v)
			}
			for c := range cents {
				unitInto(cents[c], sums[c])
			}
		}
		if obj > bestObj+1e-9 {
			bestObj, bestC, bestL = obj, cents, labels
		}
	}
	return bestC, bestL
}

// seedCentroids picks k starting centroids by k-means++ over cosine distance.
func seedCentroids(vecs [][]ent, dim, k int, rng *rand.Rand) [][]float32 {
	cents := make([][]float32, 0, k)
	dense := func(v []ent) []float32 {
		d := make([]float32, dim)
		for _, e := range v {
			d[e.ID] = e.W
		}
		return d
	}
	cents = append(cents, dense(vecs[rng.IntN(len(vecs))]))
	dist := make([]float64, len(vecs))
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	for len(cents) < k {
		last := cents[len(cents)-1]
		var total float64
		for i, v := range vecs {
			d := 1 - float64(dotDense(v, last))
			d = max(d, 0)
			dist[i] = min(dist[i], d*d)
			total += dist[i]
		}
		if total == 0 {
			cents = append(cents, dense(vecs[rng.IntN(len(vecs))]))
			continue
		}
		r := rng.Float64() * total
		pick := len(vecs) - 1
		for i := range vecs {
			r -= dist[i]
			if r <= 0 {
				pick = i
				break
			}
		}
		cents = append(cents, dense(vecs[pick]))
	}
	return cents
}

// assignAll sets assign[i] and sim[i] to the centroid of table nearest vecs[i],
// for each i in idx, on up to workers goroutines (each i is written by one).
func assignAll(workers int, table *centroidTable, idx []int, vecs [][]ent, assign []int32, sim []float32) {
	const chunk = 512
	parallel(workers, (len(idx)+chunk-1)/chunk, func(part int) {
		acc := make([]float32, table.k)
		for _, i := range idx[part*chunk : min(len(idx), (part+1)*chunk)] {
			c, s := table.nearest(vecs[i], acc)
			assign[i], sim[i] = int32(c), s
		}
	})
}

// parallel calls f(0), ..., f(n-1) on up to workers goroutines and waits for them.
func parallel(workers, n int, f func(i int)) {
	workers = min(max(workers, 1), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// silhouette is the mean silhouette of labels over the similarity matrix, with
// cosine distance.
func silhouette(sims [][]float32, labels []int32, k int) float64 {
	n := len(labels)
	size := make([]int, k)
	for _, l := range labels {
		size[l]++
	}
	sum := make([]float64, k)
	var total float64
	for i := range n {
		clear(sum)
		for j := range n {
			if j != i {
				sum[labels[j]] += 1 - float64(sims[i][j])
			}
		}
		own := labels[i]
		if size[own] <= 1 {
			continue
		}
		a := sum[own] / float64(size[own]-1)
		b := math.Inf(1)
		for c := range k {
			if int32(c) != own && size[c] > 0 {
				b = min(b, sum[c]/float64(size[c]))
			}
		}
		if math.IsInf(b, 1) {
			continue
		}
		if m := max(a, b); m > 0 {
			total += (b - a) / m
		}
	}
	return total / float64(n)
}

func addTo(d []float64, v []ent) {
	for _, e := range v {
		d[e.ID] += float64(e.W)
	}
}

// unitInto writes d scaled to unit length into dst, leaving dst alone when d is
// zero (an empty cluster keeps its last centroid).
func unitInto(dst []float32, d []float64) {
	var s float64
	for _, x := range d {
		s += x * x
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range d {
		dst[i] = float32(x * inv)
	}
}

// kCandidates lists the k to try: every k up to 10, then steps of a fifth, since
// past ten clusters one more or less matters less than the cost of trying it.
func kCandidates(kmin, kmax int) []int {
	var out []int
	for k := kmin; k <= kmax; {
		out = append(out, k)
		if k < 10 {
			k++
		} else {
			k += max(1, k/5)
		}
	}
	return out
}
