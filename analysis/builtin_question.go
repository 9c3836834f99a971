package analysis

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"unicode"
)

const (
	// groupQuotes caps the quotes shown per answer group (its count covers all).
	groupQuotes = 10
	// shortAnswerWords: answers this short ("Yes", "Every week") are grouped by
	// their words rather than clustered.
	shortAnswerWords = 5
	// maxShortGroups: rarer short answers fold into one "other" group.
	maxShortGroups = 8
	// answerMinSim is the least cosine an answer needs to its group's centroid.
	answerMinSim = 0.2
	// answerSample bounds the answers the grouping of one question is searched on.
	answerSample = 300
	// answerLabelSample is how many statements of an answer group the tagger reads
	// to name it.
	answerLabelSample = 12
)

// answer is one interview's reply to one question.
type answer struct {
	iv   int32
	msgs []int32 // participant message indexes that answer (non-answers excluded)
}

// findAnswerGroups counts who answered each scripted question and groups the answers.
func findAnswerGroups(ctx context.Context, c *corpus, workers int) ([]QuestionSet, error) {
	qs := c.in.Questions
	byQ := make([][]answer, len(qs))
	for i, iv := range c.in.Interviews {
		for _, a := range c.answers[i] {
			var real []int32
			for _, mi := range a.Messages {
				if !IsNonAnswer(iv.Messages[mi].Text) {
					real = append(real, int32(mi))
				}
			}
			// A question asked twice in one interview counts once, first answer kept.
			if len(real) > 0 && !slices.ContainsFunc(byQ[a.Question], func(x answer) bool { return x.iv == int32(i) }) {
				byQ[a.Question] = append(byQ[a.Question], answer{iv: int32(i), msgs: real})
			}
		}
	}
	// Questions are grouped independently, so on workers goroutines; each result
	// lands in its own slot and the output does not depend on the schedule.
	out := make([]QuestionSet, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(qs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for qi := range next {
				groups, err := c.answerGroups(ctx, byQ[qi])
				errs[qi] = err
				out[qi] = QuestionSet{Question: qs[qi].Text, Kind: qs[qi].Kind, Answered: len(byQ[qi]),
					Skipped: len(c.in.Interviews) - len(byQ[qi]), Groups: groups}
			}
		}()
	}
	for qi := range qs {
		next <- qi
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// answerGroups groups short answers by their words and clusters the others.
func (c *corpus) answerGroups(ctx context.Context, answers []answer) ([]AnswerGroup, error) {
	groups := []AnswerGroup{}
	short := map[string][]answer{}
	var long []answer
	var vecs [][]ent
	for _, a := range answers {
		v := c.answerVec(a)
		if k := shortKey(c.answerText(a)); k != "" || v == nil {
			short[k] = append(short[k], a)
			continue
		}
		long = append(long, a)
		vecs = append(vecs, v)
	}
	groups = append(groups, c.shortGroups(short)...)

	if len(long) > 0 {
		keys := make([]uint64, len(long))
		for i, a := range long {
			keys[i] = hashKey(c.in.Interviews[a.iv].ID)
		}
		kmin, kmax := 1, 1
		if len(long) >= 6 {
			kmin, kmax = 2, 6
		}
		cl, err := cluster(ctx, clusterSpec{vecs: vecs, keys: keys, dim: c.dim, kmin: kmin, kmax: kmax, minSim: answerMinSim, seed: 2, sample: answerSample})
		if err != nil {
			return nil, err
		}
		members := make([][]int, cl.k+1) // the last holds answers no group took
		for i, g := range cl.assign {
			if g < 0 {
				g = int32(cl.k)
			}
			members[g] = append(members[g], i)
		}
		for g, ms := range members {
			if len(ms) == 0 {
				continue
			}
			slices.SortStableFunc(ms, func(a, b int) int { return cmp.Compare(cl.sim[b], cl.sim[a]) })
			var stmts []int
			var quotes []Quote
			for _, m := range ms {
				best := -1
				var bestS float32 = -2
				r := c.answerStmts(long[m])
				for _, si := range r {
					s := float32(0)
					if g < cl.k && c.stmts[si].Vec != nil {
						s = dotDense(c.stmts[si].Vec, cl.centroids[g])
					}
					if s > bestS {
						best, bestS = si, s
					}
				}
				stmts = append(stmts, r...)
				if best >= 0 && len(quotes) < groupQuotes {
					quotes = append(quotes, c.quote(&c.stmts[best]))
				}
			}
			label := "other answers"
			if g < cl.k {
				// Named from the statements of its most central answers (stmts is
				// in that order): an answer group is one question's, so a few name it.
				label = c.labelOf(c.topPhrases(stmts[:min(len(stmts), answerLabelSample)], 1), stmts)
			}
			ids := make([]string, len(ms))
			for i, m := range ms {
				ids[i] = c.in.Interviews[long[m].iv].ID
			}
			groups = append(groups, AnswerGroup{Label: label, Count: len(ms), Quotes: quotes, Interviews: ids})
		}
	}
	slices.SortStableFunc(groups, func(a, b AnswerGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Label, b.Label))
	})
	return groups, nil
}

// shortGroups makes one group per distinct short answer, the rarer ones folded
// together once there are more than maxShortGroups.
func (c *corpus) shortGroups(short map[string][]answer) []AnswerGroup {
	keys := make([]string, 0, len(short))
	for k := range short {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(short[b]), len(short[a])), strings.Compare(a, b))
	})
	var out []AnswerGroup
	var other AnswerGroup
	for i, k := range keys {
		g := &other
		if i < maxShortGroups && k != "" {
			out = append(out, AnswerGroup{Label: k})
			g = &out[len(out)-1]
		}
		for _, a := range short[k] {
			g.Count++
			g.Interviews = append(g.Interviews, c.in.Interviews[a.iv].ID)
			if len(g.Quotes) < groupQuotes {
				mi := a.msgs[0]
				g.Quotes = append(g.Quotes, Quote{InterviewID: c.in.Interviews[a.iv].ID, MessageIndex: int(mi),
					Text: strings.TrimSpace(c.in.Interviews[a.iv].Messages[mi].Text)})
			}
		}
	}
	if other.Count > 0 {
		other.Label = "other short answers"
		out = append(out, other)
	}
	return out
}

// answerStmts lists the statements of an answer's messages.
func (c *corpus) answerStmts(a answer) []int {
	var out []int
	for _, mi := range a.msgs {
		if r, ok := c.byMsg[a.iv][mi]; ok {
			for i := r[0]; i < r[1]; i++ {
				out = append(out, int(i))
			}
		}
	}
	return out
}

// answerVec is the normalised sum of an answer's statement vectors.
func (c *corpus) answerVec(a answer) []ent { return c.sumVec(c.answerStmts(a)) }

func (c *corpus) answerText(a answer) string {
	var b strings.Builder
	for _, mi := range a.msgs {
		b.WriteString(boundText(c.in.Interviews[a.iv].Messages[mi].Text, MaxReadBytes))
		b.WriteByte(' ')
	}
	return b.String()
}

// shortKey folds a short answer to its words ("Yes!" and "yes" are one); "" when the
// answer is too long to be grouped this way.
func shortKey(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	if len(words) == 0 || len(words) > shortAnswerWords {
		return ""
	}
	return strings.Join(words, " ")
}
