package analysis

import (
	"math"
	"slices"
	"sync"
)

// ent is one weighted dimension of a statement's TF-IDF vector.
type ent struct {
	ID int32
	W  float32
}

// stmt is one statement of the corpus: where it is and its vector.
type stmt struct {
	Iv   int32 // index into Input.Interviews
	Msg  int32 // message index in that interview
	Sent *sentDoc
	Vec  []ent // L2-normalised, sorted by ID; nil when every feature is unique
	Key  uint64
}

// corpus is a study's statements with their vectors over a shared vocabulary.
type corpus struct {
	in    Input
	stmts []stmt
	dim   int
	// vocab and idf are the vocabulary's ids and weights (a refresh weighs new
	// statements by them).
	vocab map[uint64]int32
	idf   []float32
	// byMsg maps interview index and message index to its statements' range.
	byMsg []map[int32][2]int32
	// rd tags the statements that name groups, each text once (tagged).
	rd     *reader
	tagged *tagMemo
	// marks counts the statements each mark (word triple, subject–judgement pair)
	// appears in.
	marks counts
	// df counts the statements each raw feature appears in.
	df counts
	// answers holds each interview's answers to the scripted questions, found by
	// keys.
	answers [][]Answer
	keys    questionIndex
	// short marks the messages (by interview) that are short answers.
	short []map[int32]bool
	// byID maps an interview id to its first index in the input.
	byID map[string]int
}

// counts is how many statements carry each hash: those of a full run, and over
// them those a refresh added (so a refresh does not copy the full run's counts).
type counts struct {
	base, extra map[uint64]int32
}

func (n counts) get(h uint64) int32 { return n.base[h] + n.extra[h] }

// newCorpus weighs every statement by TF-IDF over features that occur in at least
// two statements (a word said once links nothing).
func newCorpus(in Input, rd *reader, docs []*ivDoc) *corpus {
	c := &corpus{in: in, rd: rd, tagged: &tagMemo{}, byMsg: make([]map[int32][2]int32, len(docs)),
		marks: counts{base: map[uint64]int32{}}, df: counts{base: map[uint64]int32{}},
		answers: make([][]Answer, len(docs)), short: make([]map[int32]bool, len(docs))}
	total := 0
	for _, d := range docs {
		for _, m := range d.Msgs {
			total += len(m.Sents)
		}
	}
	c.stmts = make([]stmt, 0, total)
	c.keys = questionKeys(in.Questions)
	for i, d := range docs {
		c.add(i, d, c.df.base, c.marks.base)
	}
	c.indexIDs()

	c.vocab = map[uint64]int32{}
	n := float64(len(c.stmts))
	for si := range c.stmts {
		for _, f := range c.stmts[si].Sent.Feats {
			df := c.df.base[f.H]
			if df < 2 {
				continue
			}
			if _, ok := c.vocab[f.H]; !ok {
				c.vocab[f.H] = int32(len(c.idf))
				c.idf = append(c.idf, float32(math.Log((n+1)/(float64(df)+1))+1))
			}
		}
	}
	c.dim = len(c.idf)
	for si := range c.stmts {
		c.weigh(&c.stmts[si])
	}
	return c
}

// add appends interview i's statements (read as d), counting their features into
// df and their marks into marks.
func (c *corpus) add(i int, d *ivDoc, df, marks map[uint64]int32) {
	in := c.in
	c.answers[i] = c.keys.answersOf(in.Interviews[i])
	c.byMsg[i] = make(map[int32][2]int32, len(d.Msgs))
	c.short[i] = map[int32]bool{}
	for _, m := range d.Msgs {
		if shortKey(boundText(in.Interviews[i].Messages[m.Index].Text, 256)) != "" {
			c.short[i][m.Index] = true
		}
		from := int32(len(c.stmts))
		for si := range m.Sents {
			s := &m.Sents[si]
			c.stmts = append(c.stmts, stmt{Iv: int32(i), Msg: m.Index, Sent: s,
				Key: hashKey(in.Interviews[i].ID) ^ (uint64(m.Index)<<32|uint64(uint32(s.Start)))*0x9E3779B97F4A7C15})
			for _, f := range s.Feats {
				df[f.H]++
			}
			for mi, h := range s.Marks {
				if !slices.Contains(s.Marks[:mi], h) {
					marks[h]++
				}
			}
		}
		c.byMsg[i][m.Index] = [2]int32{from, int32(len(c.stmts))}
	}
}

// indexIDs maps each interview id to its first index in the input.
func (c *corpus) indexIDs() {
	c.byID = make(map[string]int, len(c.in.Interviews))
	for i, iv := range c.in.Interviews {
		if _, dup := c.byID[iv.ID]; !dup {
			c.byID[iv.ID] = i
		}
	}
}

// weigh sets s's TF-IDF vector over the vocabulary (features outside it dropped).
func (c *corpus) weigh(s *stmt) {
	var v []ent
	for _, f := range s.Sent.Feats {
		id, ok := c.vocab[f.H]
		if !ok {
			continue
		}
		tf := float64(f.W)
		if tf > 1 {
			tf = 1 + math.Log(tf)
		}
		v = append(v, ent{ID: id, W: float32(tf) * c.idf[id]})
	}
	s.Vec = normalise(v)
}

// normalise sorts v by ID and scales it to unit length; nil stays nil.
func normalise(v []ent) []ent {
	if len(v) == 0 {
		return nil
	}
	if !slices.IsSortedFunc(v, byID) {
		slices.SortFunc(v, byID)
	}
	var sum float64
	for _, e := range v {
		sum += float64(e.W) * float64(e.W)
	}
	if sum == 0 {
		return nil
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i].W = float32(float64(v[i].W) * inv)
	}
	return v
}

func byID(a, b ent) int { return int(a.ID - b.ID) }

// dot is the inner product of two ID-sorted sparse vectors.
func dot(a, b []ent) float32 {
	var s float32
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].ID < b[j].ID:
			i++
		case a[i].ID > b[j].ID:
			j++
		default:
			s += a[i].W * b[j].W
			i++
			j++
		}
	}
	return s
}

// dotDense is the inner product of a sparse vector with a dense one.
func dotDense(a []ent, d []float32) float32 {
	var s float32
	for _, e := range a {
		s += e.W * d[e.ID]
	}
	return s
}

// interviewIDs returns the ids of a set of interviews (by index), in input order.
func (c *corpus) interviewIDs(set map[int32]bool) []string {
	out := make([]string, 0, len(set))
	for i, iv := range c.in.Interviews {
		if set[int32(i)] {
			out = append(out, iv.ID)
		}
	}
	return out
}

// labelsOf returns statement i's noun and predicate phrases, tagging it the first
// time they are asked for.
func (c *corpus) labelsOf(i int) []phrase {
	s := c.stmts[i]
	slot := s.Sent.labels
	slot.once.Do(func() { slot.phrases = c.tagged.phrases(c.rd, c.text(&s)) })
	return slot.phrases
}

// tagMemo shares the tagger's phrases between statements of one analysis that say
// exactly the same thing ("It's too expensive." from forty interviews): the
// tagger reads each text once. Safe for concurrent use.
type tagMemo struct {
	mu sync.Mutex
	m  map[string]*labelSlot
}

// phrases returns text's noun and predicate phrases, each surface once.
func (t *tagMemo) phrases(rd *reader, text string) []phrase {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*labelSlot{}
	}
	e := t.m[text]
	if e == nil {
		e = &labelSlot{}
		t.m[text] = e
	}
	t.mu.Unlock()
	e.once.Do(func() {
		for _, ph := range phrases(rd.tokens(text, nil)) {
			if !slices.ContainsFunc(e.phrases, func(o phrase) bool { return o.surface == ph.surface }) {
				e.phrases = append(e.phrases, ph)
			}
		}
	})
	return e.phrases
}

// statementsWith estimates how many statements of the study carry phrase p, from
// the counts every reading keeps (the tagger reads only the few that name groups).
func (c *corpus) statementsWith(p phrase) int32 {
	h, mark := p.countKey()
	if mark {
		return c.marks.get(h)
	}
	return c.df.get(h)
}

// text returns the statement's exact text in its message.
func (c *corpus) text(s *stmt) string {
	return c.in.Interviews[s.Iv].Messages[s.Msg].Text[s.Sent.Start:s.Sent.End]
}

func (c *corpus) quote(s *stmt) Quote {
	return Quote{InterviewID: c.in.Interviews[s.Iv].ID, MessageIndex: int(s.Msg), Text: c.text(s)}
}

// polarity is +1, -1 or 0 for a statement.
func (s *stmt) polarity() int {
	switch {
	case s.Sent.Pos > s.Sent.Neg:
		return 1
	case s.Sent.Neg > s.Sent.Pos:
		return -1
	}
	return 0
}

// shortMsg reports whether the statement's message is a short answer ("Laptop and
// phone."), which answer groups count and themes leave alone.
func (c *corpus) shortMsg(s *stmt) bool { return c.short[s.Iv][s.Msg] }

// msgRanges lists the statement ranges of interview iv's messages in message order.
func (c *corpus) msgRanges(iv int) [][2]int32 {
	out := make([][2]int32, 0, len(c.byMsg[iv]))
	for _, r := range c.byMsg[iv] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b [2]int32) int { return int(a[0] - b[0]) })
	return out
}

// summer sums sparse vectors in one dense scratch accumulator, so summing many
// groups allocates only the results. Each goroutine needs its own.
type summer struct {
	acc     []float32
	touched []int32
}

func newSummer(dim int) *summer { return &summer{acc: make([]float32, dim)} }

// stmts is the normalised sum of the statements' vectors, nil when they have none.
func (s *summer) stmts(c *corpus, members []int) []ent {
	if len(members) == 1 {
		return c.stmts[members[0]].Vec
	}
	for _, si := range members {
		s.add(c.stmts[si].Vec)
	}
	return s.take()
}

// of is the normalised sum of vecs[i] over members.
func (s *summer) of(vecs [][]ent, members []int) []ent {
	if len(members) == 1 {
		return vecs[members[0]]
	}
	for _, i := range members {
		s.add(vecs[i])
	}
	return s.take()
}

// add adds v (whose weights are positive, as every vector's here are).
func (s *summer) add(v []ent) {
	for _, e := range v {
		if s.acc[e.ID] == 0 {
			s.touched = append(s.touched, e.ID)
		}
		s.acc[e.ID] += e.W
	}
}

// take returns the normalised sum so far and clears the accumulator.
func (s *summer) take() []ent {
	slices.Sort(s.touched)
	v := make([]ent, len(s.touched))
	for i, id := range s.touched {
		v[i] = ent{ID: id, W: s.acc[id]}
		s.acc[id] = 0
	}
	s.touched = s.touched[:0]
	return normalise(v)
}

// answerUnits groups each interview's statements by the scripted question they
// answer (the reply and the replies to follow-up probes together); messages before
// any scripted question are units of their own.
func (c *corpus) answerUnits() [][]int {
	var out [][]int
	for iv := range c.in.Interviews {
		taken := map[int32]bool{}
		for _, a := range c.answers[iv] {
			var unit []int
			for _, mi := range a.Messages {
				taken[int32(mi)] = true
				if r, ok := c.byMsg[iv][int32(mi)]; ok {
					for i := r[0]; i < r[1]; i++ {
						unit = append(unit, int(i))
					}
				}
			}
			if len(unit) > 0 {
				out = append(out, unit)
			}
		}
		for _, r := range c.msgRanges(iv) {
			if taken[c.stmts[r[0]].Msg] {
				continue
			}
			var unit []int
			for i := r[0]; i < r[1]; i++ {
				unit = append(unit, int(i))
			}
			out = append(out, unit)
		}
	}
	return out
}

// unitInterviews gives the interview of each unit.
func (c *corpus) unitInterviews(units [][]int) []int32 {
	out := make([]int32, len(units))
	for i, u := range units {
		out[i] = c.stmts[u[0]].Iv
	}
	return out
}
