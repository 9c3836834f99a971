package analysis

import (
	"cmp"
	"context"
	"slices"
	"strings"
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

// questionFit is what a full run learns of one question's answers, kept for
// refreshes: how each answer was grouped, and the centroids of the clustered ones.
type questionFit struct {
	answers []fitAnswer
	k       int
	cents   [][]float32
	table   *centroidTable // nil when k is 0
}

// fitAnswer is one answer and where it was grouped.
type fitAnswer struct {
	answer
	short string  // the folded words of a short answer (grouped by them)
	long  bool    // clustered: group and sim say where
	group int32   // the cluster, or -1 when none took it
	sim   float32 // cosine to the nearest centroid
}

// findAnswerGroups counts who answered each scripted question and groups the answers.
func findAnswerGroups(ctx context.Context, c *corpus, workers int) ([]questionFit, []QuestionSet, error) {
	byQ := c.answersByQuestion()
	// Questions are grouped independently, so on workers goroutines; each result
	// lands in its own slot and the output does not depend on the schedule.
	fits := make([]questionFit, len(byQ))
	out := make([]QuestionSet, len(byQ))
	errs := make([]error, len(byQ))
	parallel(workers, len(byQ), func(qi int) {
		fits[qi], errs[qi] = c.fitQuestion(ctx, byQ[qi])
		if errs[qi] == nil {
			out[qi] = c.emitQuestion(qi, fits[qi])
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return fits, out, nil
}

// emitQuestions shows every question's answer groups.
func (c *corpus) emitQuestions(fits []questionFit, workers int) []QuestionSet {
	out := make([]QuestionSet, len(fits))
	parallel(workers, len(fits), func(qi int) { out[qi] = c.emitQuestion(qi, fits[qi]) })
	return out
}

// answersByQuestion lists each question's real answers, in input order.
func (c *corpus) answersByQuestion() [][]answer {
	byQ := make([][]answer, len(c.in.Questions))
	for i := range c.in.Interviews {
		for qi, as := range c.answersOf(i) {
			byQ[qi] = append(byQ[qi], as...)
		}
	}
	return byQ
}

// answersOf lists interview i's real answers to each question (at most one each:
// a question asked twice counts once, its first answer kept).
func (c *corpus) answersOf(i int) [][]answer {
	iv := c.in.Interviews[i]
	out := make([][]answer, len(c.in.Questions))
	for _, a := range c.answers[i] {
		var real []int32
		for _, mi := range a.Messages {
			if !IsNonAnswer(iv.Messages[mi].Text) {
				real = append(real, int32(mi))
			}
		}
		if len(real) > 0 && len(out[a.Question]) == 0 {
			out[a.Question] = []answer{{iv: int32(i), msgs: real}}
		}
	}
	return out
}

// fitQuestion sorts one question's answers into short ones (grouped by their
// words) and the others, which it clusters.
func (c *corpus) fitQuestion(ctx context.Context, answers []answer) (questionFit, error) {
	f := questionFit{answers: make([]fitAnswer, len(answers))}
	var long []int
	var vecs [][]ent
	sum := newSummer(c.dim)
	for i, a := range answers {
		fa := fitAnswer{answer: a, group: -1}
		v := sum.stmts(c, c.answerStmts(a))
		if k := shortKey(c.answerText(a)); k != "" || v == nil {
			fa.short = k
		} else {
			fa.long = true
			long = append(long, i)
			vecs = append(vecs, v)
		}
		f.answers[i] = fa
	}
	if len(long) == 0 {
		return f, nil
	}
	keys := make([]uint64, len(long))
	for i, a := range long {
		keys[i] = hashKey(c.in.Interviews[answers[a].iv].ID)
	}
	kmin, kmax := 1, 1
	if len(long) >= 6 {
		kmin, kmax = 2, 6
	}
	cl, err := cluster(ctx, clusterSpec{vecs: vecs, keys: keys, dim: c.dim, kmin: kmin, kmax: kmax, minSim: answerMinSim, seed: 2, sample: answerSample})
	if err != nil {
		return questionFit{}, err
	}
	for j, i := range long {
		f.answers[i].group, f.answers[i].sim = cl.assign[j], cl.sim[j]
	}
	f.k, f.cents = cl.k, cl.centroids
	if f.k > 0 {
		f.table = newCentroidTable(f.cents, c.dim)
	}
	return f, nil
}

// extend returns f with answers (a refresh's new ones) added: short ones by their
// words, the others to the nearest fitted group.
func (f questionFit) extend(c *corpus, answers []answer) questionFit {
	f.answers = slices.Clip(f.answers)
	sum := newSummer(c.dim)
	var acc []float32
	if f.table != nil {
		acc = make([]float32, f.table.k)
	}
	for _, a := range answers {
		fa := fitAnswer{answer: a, group: -1}
		v := sum.stmts(c, c.answerStmts(a))
		if k := shortKey(c.answerText(a)); k != "" || v == nil {
			fa.short = k
		} else {
			fa.long = true
			if f.table != nil {
				g, s := f.table.nearest(v, acc)
				fa.sim = s
				if s >= answerMinSim {
					fa.group = int32(g)
				}
			}
		}
		f.answers = append(f.answers, fa)
	}
	return f
}

// emitQuestion shows question qi's answer groups: short answers by their words,
// then the clusters (and the clustered answers no group took), largest first.
func (c *corpus) emitQuestion(qi int, f questionFit) QuestionSet {
	q := c.in.Questions[qi]
	groups := []AnswerGroup{}
	short := map[string][]answer{}
	var long []int
	for i, fa := range f.answers {
		if fa.long {
			long = append(long, i)
		} else {
			short[fa.short] = append(short[fa.short], fa.answer)
		}
	}
	groups = append(groups, c.shortGroups(short)...)

	if len(long) > 0 {
		members := make([][]int, f.k+1) // the last holds answers no group took
		for _, i := range long {
			g := f.answers[i].group
			if g < 0 {
				g = int32(f.k)
			}
			members[g] = append(members[g], i)
		}
		for g, ms := range members {
			if len(ms) == 0 {
				continue
			}
			slices.SortStableFunc(ms, func(a, b int) int { return cmp.Compare(f.answers[b].sim, f.answers[a].sim) })
			// The most central answers give the quotes (each its statement
			// nearest the group) and the statements the group is named from.
			var stmts []int
			var quotes []Quote
			for _, m := range ms {
				if len(quotes) == groupQuotes && len(stmts) >= answerLabelSample {
					break
				}
				r := c.answerStmts(f.answers[m].answer)
				if len(quotes) < groupQuotes {
					best := -1
					var bestS float32 = -2
					for _, si := range r {
						s := float32(0)
						if g < f.k && c.stmts[si].Vec != nil {
							s = dotDense(c.stmts[si].Vec, f.cents[g])
						}
						if s > bestS {
							best, bestS = si, s
						}
					}
					if best >= 0 {
						quotes = append(quotes, c.quote(&c.stmts[best]))
					}
				}
				if len(stmts) < answerLabelSample {
					stmts = append(stmts, r...)
				}
			}
			label := "other answers"
			if g < f.k {
				// Named from the statements of its most central answers (stmts is
				// in that order): an answer group is one question's, so a few name it.
				label = c.labelOf(c.topPhrases(stmts[:min(len(stmts), answerLabelSample)], 1), stmts)
			}
			ids := make([]string, len(ms))
			for i, m := range ms {
				ids[i] = c.in.Interviews[f.answers[m].iv].ID
			}
			groups = append(groups, AnswerGroup{Label: label, Count: len(ms), Quotes: quotes, Interviews: ids})
		}
	}
	slices.SortStableFunc(groups, func(a, b AnswerGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Label, b.Label))
	})
	return QuestionSet{Question: q.Text, Kind: q.Kind, Answered: len(f.answers),
		Skipped: len(c.in.Interviews) - len(f.answers), Groups: groups}
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
	// Most answers are long: count their words before folding them.
	n, in := 0, false
	for _, r := range s {
		w := isKeyRune(r)
		if w && !in {
			if n++; n > shortAnswerWords {
				return ""
			}
		}
		in = w
	}
	if n == 0 {
		return ""
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isKeyRune(r) })
	if len(words) == 0 || len(words) > shortAnswerWords {
		return ""
	}
	return strings.Join(words, " ")
}

// isKeyRune is a rune of a short answer's words. Lower-casing keeps a rune's class,
// so words are counted the same before and after it.
func isKeyRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' }
