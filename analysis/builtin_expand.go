package analysis

import (
	"cmp"
	"math"
	"slices"
)

// Second-order similarity: people say one thing several ways in one answer ("pages
// take ages to load. Search lags all the time."), so words that turn up in
// different sentences of the same answers are treated as related, and each
// statement is widened with the words related to its own. Pairs inside one
// sentence are not counted: they are the sentence's own phrasing, not a second
// wording of it.
const (
	expandSampleCap = 6000 // answers whose word pairs are counted
	expandNeighbors = 12   // related words kept per word
	expandMinPairs  = 2    // answers a pair must share to count
	expandWeight    = 0.6  // weight of the widened part against the statement's own words
	widenedCap      = 32   // weights kept per widened statement (the rest are faint)
)

// related lists each term's related terms (indexed by term id), with association
// weights.
type related [][]ent

// relatedTerms counts, over a stable sample of answers, how often two terms occur
// in different statements of the same answer, and keeps each term's strongest
// associations (count over the geometric mean of the terms' answer counts).
func relatedTerms(c *corpus, units [][]int, keys []uint64) related {
	idx := make([]int, len(units))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(a, b)) })
	idx = idx[:min(len(idx), expandSampleCap)]
	slices.Sort(idx)

	// A pair of terms is one uint64, the smaller id in the high half. Each answer's
	// pairs are gathered, sorted and counted once; seen marks the terms an answer
	// has counted already by the answer's number (no clearing between answers).
	pairs := map[uint64]int32{}
	df := make([]int32, c.dim)
	seen := make([]int32, c.dim)
	var keysOf []uint64
	for n, u := range idx {
		unit := units[u]
		stamp := int32(n + 1)
		for _, si := range unit {
			for _, e := range c.stmts[si].Vec {
				if seen[e.ID] != stamp {
					seen[e.ID] = stamp
					df[e.ID]++
				}
			}
		}
		if len(unit) < 2 {
			continue
		}
		keysOf = keysOf[:0]
		for a := range unit {
			for b := a + 1; b < len(unit); b++ {
				for _, x := range c.stmts[unit[a]].Vec {
					for _, y := range c.stmts[unit[b]].Vec {
						if x.ID != y.ID {
							keysOf = append(keysOf, uint64(min(x.ID, y.ID))<<32|uint64(max(x.ID, y.ID)))
						}
					}
				}
			}
		}
		slices.Sort(keysOf)
		for _, k := range slices.Compact(keysOf) {
			pairs[k]++
		}
	}
	rel := make(related, c.dim)
	for k, n := range pairs {
		if n < expandMinPairs {
			continue
		}
		a, b := int32(k>>32), int32(uint32(k))
		w := float32(float64(n) / math.Sqrt(float64(df[a])*float64(df[b])))
		rel[a] = append(rel[a], ent{ID: b, W: w})
		rel[b] = append(rel[b], ent{ID: a, W: w})
	}
	for id, list := range rel {
		if len(list) == 0 {
			continue
		}
		slices.SortFunc(list, heaviestFirst)
		list = list[:min(len(list), expandNeighbors)]
		rel[id] = normalise(slices.Clone(list))
	}
	return rel
}

// heaviestFirst orders weights from the heaviest, ties by id. Weights here are
// never NaN, so plain comparisons order them as cmp.Compare would, more cheaply.
func heaviestFirst(a, b ent) int {
	switch {
	case a.W > b.W:
		return -1
	case a.W < b.W:
		return 1
	}
	return int(a.ID - b.ID)
}

// widener widens statements with one scratch accumulator, so widening every
// statement of a large study allocates only the results.
type widener struct {
	rel     related
	acc     []float64
	touched []int32
	weights []float32
}

func (r related) widener(dim int) *widener { return &widener{rel: r, acc: make([]float64, dim)} }

// widen returns v plus its terms' related terms, normalised, keeping the
// widenedCap strongest weights.
func (w *widener) widen(v []ent) []ent {
	if len(v) == 0 {
		return nil
	}
	add := func(id int32, x float64) {
		if w.acc[id] == 0 {
			w.touched = append(w.touched, id)
		}
		w.acc[id] += x
	}
	for _, e := range v {
		add(e.ID, float64(e.W))
	}
	for _, e := range v {
		for _, n := range w.rel[e.ID] {
			add(n.ID, expandWeight*float64(e.W)*float64(n.W))
		}
	}
	// Taken in id order, so normalise finds them sorted (unless the cap reorders).
	slices.Sort(w.touched)
	out := make([]ent, 0, len(w.touched))
	for _, id := range w.touched {
		out = append(out, ent{ID: id, W: float32(w.acc[id])})
		w.acc[id] = 0
	}
	w.touched = w.touched[:0]
	if len(out) > widenedCap {
		out = w.heaviest(out)
	}
	return normalise(out)
}

// heaviest keeps the widenedCap entries of v (in id order) that come first by
// heaviestFirst, still in id order: the weight the last kept one has is found by
// sorting the weights alone, and entries of exactly that weight are kept from the
// lowest id, as far as the cap allows.
func (w *widener) heaviest(v []ent) []ent {
	ws := w.weights[:0]
	for _, e := range v {
		ws = append(ws, e.W)
	}
	w.weights = ws
	slices.Sort(ws)
	least := ws[len(ws)-widenedCap]
	ties := widenedCap
	for _, x := range ws {
		if x > least {
			ties--
		}
	}
	kept := v[:0]
	for _, e := range v {
		if e.W > least || e.W == least && ties > 0 {
			if e.W == least {
				ties--
			}
			kept = append(kept, e)
		}
	}
	return slices.Clip(kept)
}
