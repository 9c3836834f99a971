package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jdkato/prose/v2"
	"github.com/kljensen/snowball/english"
)

const (
	// findingQuotes caps the quotes on each side of a finding.
	findingQuotes = 8
	// clusterRelevance is the share of a cluster's statements that must name an
	// objective's terms for the whole cluster (synonyms included) to speak to it.
	clusterRelevance = 0.2
	// genericTerm is the share of statements above which an objective's word is too
	// common to be evidence ("app" in a study of an app, "order" in one of orders).
	genericTerm = 0.05
	// subjectShare is the share of a cluster's statements that must name a word for
	// it to be what the cluster is about (for pairing opposite clusters).
	subjectShare = 0.25
	// pairMinCos: paired clusters must also be near each other as wholes.
	pairMinCos = 0.3
)

// objectiveTerms returns the hashed stems of what an objective is about, leaving out
// the framing every objective shares ("understand how users ...").
func (r *reader) objectiveTerms(text string) []uint64 {
	doc, err := prose.NewDocument(text, prose.WithSegmentation(false), prose.WithExtraction(false), prose.UsingModel(r.tagger))
	if err != nil {
		return nil
	}
	var out []uint64
	for _, t := range doc.Tokens() {
		lower := strings.ToLower(t.Text)
		// Only nouns, verbs and adjectives name a subject ("through", "us" do not).
		if !isNoun(t.Tag) && !isAdj(t.Tag) && !strings.HasPrefix(t.Tag, "VB") {
			continue
		}
		if !hasLetter(lower) || len(lower) < 2 || english.IsStopWord(lower) || r.fillers[lower] {
			continue
		}
		stem := english.Stem(lower, false)
		if objectiveFrame[lower] || objectiveFrame[stem] || r.fillers[stem] {
			continue
		}
		if h := hashKey(stem); !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// findObjectives measures each objective's evidence: statements naming its terms,
// and every statement of a cluster where enough do (which brings in the synonyms).
// Each such cluster becomes a finding; when its statements judge the subject both
// ways, the two sides are the finding's support and contrary quotes.
func findObjectives(r *reader, c *corpus, ts themeSet) []Objective {
	total := len(c.in.Interviews)
	out := make([]Objective, 0, len(c.in.Objectives))
	// Each objective's specific words, and which statements name them.
	termsOf := make([][]uint64, len(c.in.Objectives))
	directOf := make([][]bool, len(c.in.Objectives))
	for oi, text := range c.in.Objectives {
		for _, h := range r.objectiveTerms(text) {
			if float64(c.df.get(h)) <= genericTerm*float64(len(c.stmts)) {
				termsOf[oi] = append(termsOf[oi], h)
			}
		}
		directOf[oi] = make([]bool, len(c.stmts))
		for i := range c.stmts {
			directOf[oi][i] = hasAny(c.stmts[i].Sent.Feats, termsOf[oi])
		}
	}
	// A cluster speaks to the objective(s) whose words its statements name most,
	// not to every objective one of its words happens to appear in.
	share := make([][]float64, len(ts.groups))
	for g := range ts.groups {
		share[g] = make([]float64, len(c.in.Objectives))
		best := 0.0
		for oi := range c.in.Objectives {
			hits := 0
			for _, m := range ts.groups[g].members {
				if directOf[oi][m] {
					hits++
				}
			}
			if hits >= 2 {
				share[g][oi] = float64(hits) / float64(len(ts.groups[g].members))
			}
			best = max(best, share[g][oi])
		}
		for oi := range share[g] {
			if share[g][oi] < clusterRelevance || share[g][oi] < 0.75*best {
				share[g][oi] = 0
			}
		}
	}
	for oi, text := range c.in.Objectives {
		terms, direct := termsOf[oi], directOf[oi]
		evidence := map[int32]bool{}
		inFinding := make([]bool, len(c.stmts))
		type relevant struct {
			g     int
			terms []uint64 // objective terms it is about (see subjectShare)
			pol   int      // the polarity most of its judging statements take, or 0
		}
		var rel []relevant
		for _, g := range groupOrder(ts.groups) {
			grp := &ts.groups[g]
			if share[g][oi] == 0 {
				continue
			}
			named := map[uint64]int{}
			for _, m := range grp.members {
				if direct[m] {
					for _, t := range terms {
						if hasAny(c.stmts[m].Sent.Feats, []uint64{t}) {
							named[t]++
						}
					}
				}
			}
			for _, m := range grp.members {
				evidence[c.stmts[m].Iv] = true
				inFinding[m] = true
			}
			if grp.interviews < 2 {
				continue
			}
			r := relevant{g: g, pol: c.leaning(grp.members)}
			for _, t := range terms {
				if named[t] >= 2 && float64(named[t]) >= subjectShare*float64(len(grp.members)) {
					r.terms = append(r.terms, t)
				}
			}
			rel = append(rel, r)
		}
		// Two clusters on the same subject (naming the same objective word) that lean
		// opposite ways are one disagreement: "the price is too high" and "the price
		// is fair" may cluster apart by their other words.
		findings := []Finding{}
		used := make([]bool, len(rel))
		for i, a := range rel {
			if used[i] {
				continue
			}
			members := ts.groups[a.g].members
			subject := c.name(&ts.groups[a.g]).label
			for j := i + 1; j < len(rel); j++ {
				b := rel[j]
				if used[j] || a.pol == 0 || b.pol != -a.pol || !sharesAny(a.terms, b.terms) ||
					cosine(ts.cl.centroids[a.g], ts.cl.centroids[b.g]) < pairMinCos {
					continue
				}
				used[j] = true
				members = slices.Concat(members, ts.groups[b.g].members)
				if ps := c.topPhrases(members, 1); len(ps) > 0 {
					subject = ps[0]
				}
				break
			}
			findings = append(findings, c.finding(subject, members))
		}
		var rest []int
		for i, d := range direct {
			if d {
				evidence[c.stmts[i].Iv] = true
				if !inFinding[i] {
					rest = append(rest, i)
				}
			}
		}
		if len(rest) > 0 {
			findings = append(findings, c.finding("other remarks on this", rest))
		}
		n := len(evidence)
		out = append(out, Objective{Objective: text, Findings: findings, Coverage: coverage(n, total), Gap: IsGap(n, total),
			Interviews: c.interviewIDs(evidence)})
	}
	return out
}

// groupOrder lists clusters themes first (in theme order), then the rest by size.
func groupOrder(groups []stmtGroup) []int {
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	rank := func(g int) int {
		if groups[g].theme >= 0 {
			return groups[g].theme
		}
		return maxThemes + 1
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return groups[b].interviews - groups[a].interviews
	})
	return order
}

// finding states what a set of statements says about a subject. When both
// polarities are substantial it is a disagreement, the larger side as support; when
// one dominates, statements against it are the contrary quotes.
func (c *corpus) finding(subject string, members []int) Finding {
	var pos, neg, rest []int
	for _, m := range members {
		switch c.stmts[m].polarity() {
		case 1:
			pos = append(pos, m)
		case -1:
			neg = append(neg, m)
		default:
			rest = append(rest, m)
		}
	}
	np, nn, all := c.interviewsIn(pos), c.interviewsIn(neg), c.interviewsIn(members)
	f := Finding{Support: []Quote{}, Contrary: []Quote{}}
	switch {
	case np >= 2 && nn >= 2 && float64(min(np, nn)) >= 0.3*float64(np+nn):
		major, minor, mw, nw := neg, pos, "negatively", "positively"
		if np > nn {
			major, minor, mw, nw = pos, neg, "positively", "negatively"
		}
		f.Statement = fmt.Sprintf("Participants disagree about %s: %d interviews speak of it %s, %d %s.",
			subject, c.interviewsIn(major), mw, c.interviewsIn(minor), nw)
		f.Support = c.onePerInterview(major, findingQuotes)
		f.Contrary = c.onePerInterview(minor, findingQuotes)
	case nn > np && nn > 0:
		f.Statement = fmt.Sprintf("%d of %d interviews raise %s, mostly as a problem.", all, len(c.in.Interviews), subject)
		f.Support = c.onePerInterview(slices.Concat(neg, rest), findingQuotes)
		f.Contrary = c.onePerInterview(pos, findingQuotes)
	case np > nn:
		f.Statement = fmt.Sprintf("%d of %d interviews raise %s, mostly favourably.", all, len(c.in.Interviews), subject)
		f.Support = c.onePerInterview(slices.Concat(pos, rest), findingQuotes)
		f.Contrary = c.onePerInterview(neg, findingQuotes)
	default:
		f.Statement = fmt.Sprintf("%d of %d interviews raise %s.", all, len(c.in.Interviews), subject)
		f.Support = c.onePerInterview(members, findingQuotes)
	}
	return f
}

func (c *corpus) interviewsIn(members []int) int {
	seen := map[int32]bool{}
	for _, m := range members {
		seen[c.stmts[m].Iv] = true
	}
	return len(seen)
}

// hasAny reports whether the hash-sorted features contain any of terms.
func hasAny(fs []feat, terms []uint64) bool {
	for _, t := range terms {
		lo, hi := 0, len(fs)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if fs[mid].H < t {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < len(fs) && fs[lo].H == t {
			return true
		}
	}
	return false
}

// leaning is the polarity most judging statements of members take (at least two
// interviews and three quarters of the judging ones), or 0.
func (c *corpus) leaning(members []int) int {
	var pos, neg []int
	for _, m := range members {
		switch c.stmts[m].polarity() {
		case 1:
			pos = append(pos, m)
		case -1:
			neg = append(neg, m)
		}
	}
	np, nn := c.interviewsIn(pos), c.interviewsIn(neg)
	switch {
	case np >= 2 && float64(np) >= 0.75*float64(np+nn):
		return 1
	case nn >= 2 && float64(nn) >= 0.75*float64(np+nn):
		return -1
	}
	return 0
}

func sharesAny(a, b []uint64) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func cosine(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
