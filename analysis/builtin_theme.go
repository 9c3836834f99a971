package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Theme bounds: themes come from the statement clusters, at most maxThemes of them,
// each from at least two interviews.
const (
	minThemes = 3
	maxThemes = 10
	// themeMinSim is the least cosine a statement needs to its cluster's centroid to
	// count as part of that theme.
	themeMinSim = 0.5
	// minThemeWords is the least number of content words a statement needs to
	// take part in theme finding.
	minThemeWords = 2
	// maxClusters: statements are clustered more finely than themes are shown, so
	// that stock phrases and one-question echoes get clusters of their own rather
	// than diluting a theme; the largest clusters become the themes.
	maxClusters = 24
	// stmtMinSim is the least cosine a single statement needs to a theme centroid
	// (found over whole answers) to join it.
	stmtMinSim = 0.55
	// labelSample is how many of a group's statements the tagger reads to name it.
	labelSample = 24
)

// themeSet is the statement clustering and the themes read from it.
type themeSet struct {
	themes []Theme
	cl     clusters
	// groups holds each cluster's member statements, most central first.
	groups []stmtGroup
}

// stmtGroup is one cluster of statements.
type stmtGroup struct {
	members    []int // statement indexes, by falling similarity
	named      bool  // label and phrases are set (see corpus.name)
	label      string
	phrases    []string
	interviews int
	cohesion   float64
	theme      int // index into themes, or -1
}

// themeFit is what a full run learns of a study's themes, kept for refreshes:
// the theme centroids and the related terms statements are widened with.
type themeFit struct {
	cents [][]float32
	table *centroidTable // nil when there are no themes
	rel   related
}

// substantive reports whether statement i can carry a theme. A statement of one
// content word ("It does the job.", "A friend.") says too little to.
func (c *corpus) substantive(i int) bool {
	s := &c.stmts[i]
	return s.Vec != nil && s.Sent.Content >= minThemeWords && !c.shortMsg(s)
}

// fitThemes clusters the study's answers and assigns each statement to its
// nearest theme centroid.
func fitThemes(ctx context.Context, c *corpus, workers int) (themeFit, clusters, error) {
	// Themes are found over answers (a participant message's substantive
	// statements together): one answer often says the same thing two ways, and
	// that is what ties the wordings of a theme together. Statements then join the
	// nearest theme on their own, so an answer on two subjects splits between them.
	substantive := make([]bool, len(c.stmts))
	for i := range c.stmts {
		substantive[i] = c.substantive(i)
	}
	var unitIdx [][]int
	var keys []uint64
	for _, unit := range c.answerUnits() {
		var members []int
		for _, i := range unit {
			if substantive[i] {
				members = append(members, i)
			}
		}
		if len(members) > 0 {
			unitIdx = append(unitIdx, members)
			keys = append(keys, c.stmts[members[0]].Key)
		}
	}
	// Each statement is widened with the words related to its own (see
	// relatedTerms), answers are clustered, and statements join the nearest cluster.
	rel := relatedTerms(c, unitIdx, keys)
	wd := rel.widener(c.dim)
	repr := make([][]ent, len(c.stmts))
	for i := range c.stmts {
		if substantive[i] {
			repr[i] = wd.widen(c.stmts[i].Vec)
		}
	}
	units := make([][]ent, len(unitIdx))
	sum := newSummer(c.dim)
	for u, members := range unitIdx {
		units[u] = sum.of(repr, members)
	}
	ucl, err := cluster(ctx, clusterSpec{vecs: units, keys: keys, dim: c.dim, kmin: minThemes, kmax: maxClusters, minSim: themeMinSim, seed: 1, workers: workers})
	if err != nil {
		return themeFit{}, clusters{}, err
	}
	fit := themeFit{cents: bisect(units, ucl, c.dim, c.unitInterviews(unitIdx)), rel: rel}
	cl := clusters{k: len(fit.cents), centroids: fit.cents, assign: make([]int32, len(c.stmts)), sim: make([]float32, len(c.stmts))}
	var subst []int
	for i := range c.stmts {
		cl.assign[i] = -1
		if substantive[i] {
			subst = append(subst, i)
		}
	}
	if cl.k > 0 {
		fit.table = newCentroidTable(cl.centroids, c.dim)
		assignAll(workers, fit.table, subst, repr, cl.assign, cl.sim)
		for _, i := range subst {
			if cl.sim[i] < stmtMinSim {
				cl.assign[i], cl.sim[i] = -1, 0
			}
		}
	}
	return fit, cl, nil
}

// assign assigns statements from on (a refresh's new ones) to the fitted themes,
// widening them with the fitted related terms, into cl (which holds every
// statement).
func (f themeFit) assign(c *corpus, from int, cl *clusters) {
	if f.table == nil {
		return
	}
	wd := f.rel.widener(c.dim)
	acc := make([]float32, f.table.k)
	for i := from; i < len(c.stmts); i++ {
		if !c.substantive(i) {
			continue
		}
		if g, sim := f.table.nearest(wd.widen(c.stmts[i].Vec), acc); sim >= stmtMinSim {
			cl.assign[i], cl.sim[i] = int32(g), sim
		}
	}
}

// emitThemes groups the statements by their theme cluster and shows the largest
// groups (by interviews, then cohesion) as themes.
func (c *corpus) emitThemes(cl clusters) themeSet {
	ts := themeSet{cl: cl, groups: c.groupsOf(cl)}

	order := make([]int, 0, len(ts.groups))
	for g := range ts.groups {
		if ts.groups[g].interviews >= 2 {
			order = append(order, g)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ga, gb := &ts.groups[a], &ts.groups[b]
		return cmp.Or(cmp.Compare(gb.interviews, ga.interviews), cmp.Compare(gb.cohesion, ga.cohesion))
	})
	ts.themes = []Theme{}
	for _, g := range order[:min(len(order), maxThemes)] {
		grp := &ts.groups[g]
		grp.theme = len(ts.themes)
		ts.themes = append(ts.themes, c.theme(len(ts.themes), grp))
	}
	return ts
}

// groupsOf collects each cluster's members, most central first. Groups are named
// (corpus.name) only when shown: tagging is dear, and most clusters are neither a
// theme nor a finding.
func (c *corpus) groupsOf(cl clusters) []stmtGroup {
	groups := make([]stmtGroup, cl.k)
	for i, g := range cl.assign {
		if g >= 0 {
			groups[g].members = append(groups[g].members, i)
		}
	}
	for g := range groups {
		grp := &groups[g]
		grp.theme = -1
		slices.SortStableFunc(grp.members, func(a, b int) int { return cmp.Compare(cl.sim[b], cl.sim[a]) })
		ivs := map[int32]bool{}
		var sum float64
		for _, m := range grp.members {
			ivs[c.stmts[m].Iv] = true
			sum += float64(cl.sim[m])
		}
		grp.interviews = len(ivs)
		if len(grp.members) > 0 {
			grp.cohesion = sum / float64(len(grp.members))
		}
	}
	return groups
}

// name sets g's label and phrases, the first time it is shown.
func (c *corpus) name(g *stmtGroup) *stmtGroup {
	if !g.named {
		g.named = true
		g.phrases = c.topPhrases(g.members, 4)
		g.label = c.labelOf(g.phrases, g.members)
	}
	return g
}

// theme turns a statement group into a theme, quoting each interview's most central
// statement in it.
func (c *corpus) theme(i int, g *stmtGroup) Theme {
	c.name(g)
	total := len(c.in.Interviews)
	quotes := c.onePerInterview(g.members, 0)
	ids := map[string]bool{}
	for _, q := range quotes {
		ids[q.InterviewID] = true
	}
	desc := fmt.Sprintf("Raised in %d of %d interviews.", len(ids), total)
	if len(g.phrases) > 1 {
		desc += " Also worded as: " + strings.Join(g.phrases[1:], "; ") + "."
	}
	return Theme{
		ID:             fmt.Sprintf("t%d", i+1),
		Label:          g.label,
		Description:    desc,
		Sentiment:      c.sentiment(g.members),
		InterviewCount: len(ids),
		Share:          share(len(ids), total),
		Quotes:         quotes,
		Segments:       (&grounder{in: c.in, byID: c.byID}).segments(ids),
	}
}

// onePerInterview quotes the first statement of each interview in members (which
// are ordered most central first); limit > 0 caps the number of quotes.
func (c *corpus) onePerInterview(members []int, limit int) []Quote {
	seen := map[int32]bool{}
	out := []Quote{}
	for _, m := range members {
		s := &c.stmts[m]
		if seen[s.Iv] {
			continue
		}
		seen[s.Iv] = true
		out = append(out, c.quote(s))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// topPhrases returns up to n phrases that best name a group: frequent in it, rarer
// outside it, multi-word ones preferred, none contained in another chosen one.
func (c *corpus) topPhrases(members []int, n int) []string {
	// The tagger reads a sample of the group: its statements with the smallest keys
	// (a deterministic, unbiased pick), enough to see which phrases it repeats.
	sample := members
	if len(sample) > labelSample {
		sample = slices.Clone(members)
		slices.SortFunc(sample, func(a, b int) int { return cmp.Or(cmp.Compare(c.stmts[a].Key, c.stmts[b].Key), cmp.Compare(a, b)) })
		sample = sample[:labelSample]
	}
	count := map[string]int{}
	pred := map[string]bool{}
	elsewhere := map[string]int32{}
	for _, m := range sample {
		for _, ph := range c.labelsOf(m) {
			count[ph.surface]++
			if ph.pred {
				pred[ph.surface] = true
			}
			elsewhere[ph.surface] = max(elsewhere[ph.surface], c.statementsWith(ph))
		}
	}
	type scored struct {
		p string
		s float64
	}
	total := float64(len(c.stmts))
	size := float64(len(sample))
	var cand []scored
	for p, k := range count {
		if k < 2 && len(sample) > 1 {
			continue
		}
		tf := float64(k) / size
		lift := tf / (float64(max(elsewhere[p], int32(k))) / total)
		s := tf * math.Log1p(lift)
		// A noun phrase of several words names a subject best ("offline mode"
		// over "phone"); a predicate carries one side's judgement, so it gets no
		// such preference.
		if strings.Contains(p, " ") && !pred[p] {
			s *= 2
		}
		cand = append(cand, scored{p, s})
	}
	slices.SortFunc(cand, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), strings.Compare(a.p, b.p)) })
	var out []string
	for _, x := range cand {
		dup := false
		for _, o := range out {
			if strings.Contains(o, x.p) || strings.Contains(x.p, o) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, x.p)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// labelOf names a group by its top phrase, or by the opening words of its most
// central statement when no phrase recurs.
func (c *corpus) labelOf(phrases []string, members []int) string {
	if len(phrases) > 0 {
		return phrases[0]
	}
	if len(members) == 0 {
		return ""
	}
	words := strings.Fields(c.text(&c.stmts[members[0]]))
	return strings.Join(words[:min(len(words), 6)], " ")
}

// sentiment reads the polarity of a group's statements: "mixed" when both
// polarities are substantial, neutral when few statements judge at all.
func (c *corpus) sentiment(members []int) string {
	pos, neg := 0, 0
	for _, m := range members {
		switch c.stmts[m].polarity() {
		case 1:
			pos++
		case -1:
			neg++
		}
	}
	return sentimentOf(pos, neg, len(members))
}

func sentimentOf(pos, neg, n int) string {
	polar := pos + neg
	switch {
	case polar == 0 || float64(polar) < 0.25*float64(n):
		return SentimentNeutral
	case pos >= 2 && neg >= 2 && float64(min(pos, neg)) >= 0.3*float64(polar):
		return SentimentMixed
	case pos > neg:
		return SentimentPositive
	case neg > pos:
		return SentimentNegative
	}
	return SentimentMixed
}

// Bisecting: k-means sometimes joins two subjects that share a word or two ("see
// my tasks" offline and "see the latest version" together). A cluster is split in
// two when its two halves are comparable in size, each from several interviews, and
// far apart; a theme's own wordings or its two sides of an argument come out
// lopsided or close and stay together.
const (
	bisectMinMembers = 8
	bisectMaxCos     = 0.5
	bisectMinShare   = 0.3
	bisectMinIvs     = 3
)

func bisect(units [][]ent, cl clusters, dim int, unitIv []int32) [][]float32 {
	out := slices.Clone(cl.centroids)
	for g := range cl.k {
		var ms []int
		for i, a := range cl.assign {
			if int(a) == g {
				ms = append(ms, i)
			}
		}
		if len(ms) < bisectMinMembers {
			continue
		}
		vs := make([][]ent, len(ms))
		for i, m := range ms {
			vs[i] = units[m]
		}
		cents, labels := kmeans(vs, dim, 2, uint64(g)+1)
		var cos float32
		for j := range cents[0] {
			cos += cents[0][j] * cents[1][j]
		}
		size := [2]int{}
		ivs := [2]map[int32]bool{{}, {}}
		for i, l := range labels {
			size[l]++
			ivs[l][unitIv[ms[i]]] = true
		}
		small := float64(min(size[0], size[1])) / float64(len(ms))
		if cos < bisectMaxCos && small >= bisectMinShare && len(ivs[0]) >= bisectMinIvs && len(ivs[1]) >= bisectMinIvs {
			out[g] = cents[0]
			out = append(out, cents[1])
		}
	}
	return out
}
