package analysis

import (
	"cmp"
	"math"
	"slices"
)

const (
	// suggestionSim is the least cosine a suggestion needs to join a group.
	suggestionSim = 0.35
	// maxSuggestionGroups bounds the grouping work; later unlike suggestions are
	// left out once this many groups exist.
	maxSuggestionGroups = 200
	// maxSuggestions is how many groups the analysis lists.
	maxSuggestions = 15
)

type suggestionGroup struct {
	members []int
	sum     map[int32]float64
	norm2   float64
	norm    float64
}

// findSuggestions groups statements shaped like requests ("I wish", "it would help
// if", "could you add") by similarity, each group named by its most typical one.
func findSuggestions(c *corpus) []Suggestion {
	var groups []*suggestionGroup
	for i := range c.stmts {
		s := &c.stmts[i]
		if !s.Sent.Suggest {
			continue
		}
		best, bestS := -1, suggestionSim
		for g, grp := range groups {
			if sim := grp.cos(s.Vec); sim >= bestS {
				if sim > bestS || best < 0 {
					best, bestS = g, sim
				}
			}
		}
		if best < 0 {
			if len(groups) >= maxSuggestionGroups {
				continue
			}
			groups = append(groups, &suggestionGroup{sum: map[int32]float64{}})
			best = len(groups) - 1
		}
		groups[best].add(i, s.Vec)
	}

	type ranked struct {
		g   *suggestionGroup
		ivs int
	}
	var rs []ranked
	for _, g := range groups {
		rs = append(rs, ranked{g, c.interviewsIn(g.members)})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(b.ivs, a.ivs) })
	out := []Suggestion{}
	for _, r := range rs[:min(len(rs), maxSuggestions)] {
		ms := slices.Clone(r.g.members)
		sims := make(map[int]float64, len(ms))
		for _, m := range ms {
			sims[m] = r.g.cos(c.stmts[m].Vec)
		}
		slices.SortStableFunc(ms, func(a, b int) int { return cmp.Compare(sims[b], sims[a]) })
		quotes := c.onePerInterview(ms, 0)
		out = append(out, Suggestion{Text: quotes[0].Text, InterviewCount: len(quotes), Quotes: quotes})
	}
	return out
}

func (g *suggestionGroup) add(i int, v []ent) {
	g.members = append(g.members, i)
	// |s+v|² = |s|² + 2 s·v + |v|², kept incrementally (in a fixed order, so the
	// same input always gives the same float).
	var sv, vv float64
	for _, e := range v {
		sv += g.sum[e.ID] * float64(e.W)
		vv += float64(e.W) * float64(e.W)
	}
	for _, e := range v {
		g.sum[e.ID] += float64(e.W)
	}
	g.norm2 += 2*sv + vv
	g.norm = math.Sqrt(max(g.norm2, 0))
}

// cos is the cosine between v and the group's summed vector.
func (g *suggestionGroup) cos(v []ent) float64 {
	if g.norm == 0 || len(v) == 0 {
		return 0
	}
	var s float64
	for _, e := range v {
		s += g.sum[e.ID] * float64(e.W)
	}
	return s / g.norm
}
