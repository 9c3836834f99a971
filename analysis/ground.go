package analysis

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// GapMinInterviews and GapMinShare define a gap: an objective is thin when fewer
// than GapMinInterviews interviews, or under GapMinShare of them, give evidence.
const (
	GapMinInterviews = 3
	GapMinShare      = 0.2
)

// IsGap reports whether evidence from n of of interviews is too thin to rely on.
func IsGap(n, of int) bool {
	return n < GapMinInterviews || of == 0 || float64(n) < GapMinShare*float64(of)
}

// Ground keeps only the quotes that are exact, non-empty spans of the participant
// message they name, and returns how many it dropped (also added to a.QuotesDropped).
//
// Dropping quotes can leave a claim without evidence, so afterwards it removes
// findings, answer groups, suggestions and themes with no quotes left, themes whose
// quotes come from fewer than two interviews, and recomputes what the quotes
// support: a theme's interview count, share and segments, a suggestion's interview
// count, and for objectives and answer groups (whose counts may cover more
// interviews than they quote) it subtracts the interviews whose only evidence was
// dropped. Every list is left non-nil so the stored JSON says [] rather than null.
func Ground(in Input, a *Analysis) int {
	if a == nil {
		return 0
	}
	g := grounder{in: in, byID: make(map[string]int, len(in.Interviews))}
	for i, iv := range in.Interviews {
		if _, dup := g.byID[iv.ID]; !dup {
			g.byID[iv.ID] = i
		}
	}
	total := len(in.Interviews)

	objectives := a.Objectives[:0:0]
	for _, o := range a.Objectives {
		var lost map[string]bool
		findings := make([]Finding, 0, len(o.Findings))
		for _, f := range o.Findings {
			f.Support = g.keep(f.Support, &lost)
			f.Contrary = g.keep(f.Contrary, &lost)
			if len(f.Support)+len(f.Contrary) > 0 {
				findings = append(findings, f)
			}
		}
		o.Findings = findings
		if len(lost) > 0 {
			still := map[string]bool{}
			for _, f := range findings {
				addInterviews(still, f.Support)
				addInterviews(still, f.Contrary)
			}
			o.Coverage.Interviews -= countMissing(lost, still)
			o.Interviews = withoutLost(o.Interviews, lost, still)
		}
		o.Coverage = coverage(min(max(o.Coverage.Interviews, 0), total), total)
		o.Gap = IsGap(o.Coverage.Interviews, total)
		objectives = append(objectives, o)
	}
	a.Objectives = objectives

	themes := make([]Theme, 0, len(a.Themes))
	for _, t := range a.Themes {
		t.Quotes = g.keep(t.Quotes, nil)
		ids := map[string]bool{}
		addInterviews(ids, t.Quotes)
		if len(ids) < 2 {
			continue
		}
		t.InterviewCount = len(ids)
		t.Share = share(len(ids), total)
		t.Segments = g.segments(ids)
		themes = append(themes, t)
	}
	a.Themes = themes

	questions := make([]QuestionSet, 0, len(a.Questions))
	for _, q := range a.Questions {
		groups := make([]AnswerGroup, 0, len(q.Groups))
		for _, gr := range q.Groups {
			var lost map[string]bool
			gr.Quotes = g.keep(gr.Quotes, &lost)
			if len(gr.Quotes) == 0 {
				continue
			}
			if len(lost) > 0 {
				still := map[string]bool{}
				addInterviews(still, gr.Quotes)
				gr.Count -= countMissing(lost, still)
				gr.Interviews = withoutLost(gr.Interviews, lost, still)
			}
			gr.Count = max(gr.Count, len(gr.Quotes))
			groups = append(groups, gr)
		}
		q.Groups = groups
		questions = append(questions, q)
	}
	a.Questions = questions

	suggestions := make([]Suggestion, 0, len(a.Suggestions))
	for _, s := range a.Suggestions {
		s.Quotes = g.keep(s.Quotes, nil)
		if len(s.Quotes) == 0 {
			continue
		}
		ids := map[string]bool{}
		addInterviews(ids, s.Quotes)
		s.InterviewCount = len(ids)
		suggestions = append(suggestions, s)
	}
	a.Suggestions = suggestions

	a.QuotesDropped += g.dropped
	return g.dropped
}

// withoutLost returns ids without the interviews whose only evidence was dropped.
func withoutLost(ids []string, lost, still map[string]bool) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return lost[id] && !still[id] })
}

type grounder struct {
	in      Input
	byID    map[string]int
	dropped int
}

// valid reports whether q is an exact, non-empty span of the participant message it
// names.
func (g *grounder) valid(q Quote) bool {
	if q.Text == "" {
		return false
	}
	i, ok := g.byID[q.InterviewID]
	if !ok {
		return false
	}
	msgs := g.in.Interviews[i].Messages
	if q.MessageIndex < 0 || q.MessageIndex >= len(msgs) {
		return false
	}
	m := msgs[q.MessageIndex]
	return m.Speaker == SpeakerParticipant && strings.Contains(m.Text, q.Text)
}

// keep returns the valid quotes of qs (never nil), counting the others as dropped
// and, when lost is non-nil, noting the interviews they named.
func (g *grounder) keep(qs []Quote, lost *map[string]bool) []Quote {
	out := make([]Quote, 0, len(qs))
	for _, q := range qs {
		if g.valid(q) {
			out = append(out, q)
			continue
		}
		g.dropped++
		// Only a real interview can have been counted by the engine.
		if _, real := g.byID[q.InterviewID]; real && lost != nil {
			if *lost == nil {
				*lost = map[string]bool{}
			}
			(*lost)[q.InterviewID] = true
		}
	}
	return out
}

// segments counts the interviews in ids by each value of each context key.
func (g *grounder) segments(ids map[string]bool) map[string]map[string]int {
	seg := map[string]map[string]int{}
	keys := make([]string, 0, len(ids))
	for id := range ids {
		keys = append(keys, id)
	}
	sort.Strings(keys)
	for _, id := range keys {
		i, ok := g.byID[id]
		if !ok {
			continue
		}
		for k, v := range g.in.Interviews[i].Context {
			if seg[k] == nil {
				seg[k] = map[string]int{}
			}
			seg[k][v]++
		}
	}
	return seg
}

func addInterviews(set map[string]bool, qs []Quote) {
	for _, q := range qs {
		set[q.InterviewID] = true
	}
}

// countMissing counts the interviews in lost that are not in still.
func countMissing(lost, still map[string]bool) int {
	n := 0
	for id := range lost {
		if !still[id] {
			n++
		}
	}
	return n
}

// share is n/of rounded to four places, so stored shares read cleanly.
func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*1e4) / 1e4
}

func coverage(n, of int) Coverage {
	return Coverage{Interviews: n, Of: of, Share: share(n, of)}
}
