package analysis

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
)

// A refresh: when the engine has fitted a study in a full run (its vocabulary,
// related terms, theme centroids and each question's answer groups), and the next
// analysis of it holds every interview of that run unchanged, in the same order,
// plus new ones that add at most refreshShare to its statements, the new
// interviews' statements and answers are weighed by the fitted vocabulary and join
// the nearest fitted theme and answer group; nothing is clustered again. Counts,
// quotes, labels, findings and suggestions are then drawn afresh from every
// statement, old and new, exactly as after a full run. Anything else (a cold
// engine, a changed design, an interview edited, redacted or erased, the new
// material past the share) is a full run, which fits the study again.
//
// What this promises: a full run's result is a function of its input alone, cold
// or warm (TestBuiltinDeterministic); a refresh's is a function of the input of
// the full run it extends and its own input (TestBuiltinRefreshDeterministic), so
// two engines that fitted the same study give the same bytes; a refresh with
// nothing new gives the full run's bytes; and a refresh keeps the study's themes,
// adding the new interviews to them (TestBuiltinRefreshKeepsThemes). The share
// bounds how far a refresh can drift from what a full run would find: past it, the
// next analysis is a full run.
const (
	refreshShare = 0.10
	// DefaultModelBytes bounds the fitted studies the engine keeps, by an estimate
	// of what each holds, the readings it points into included. A study larger
	// than the whole bound is not kept, so each of its analyses is a full run.
	DefaultModelBytes = 64 << 20
)

// studyModel is a full run's fit of one study. It is never changed once made, so
// refreshes on several goroutines may share it.
type studyModel struct {
	design string           // fingerprint of the objectives and questions
	keys   map[string]int32 // each interview's reading key → its index in the run
	n      int              // the run's interviews (more than keys holds if one was listed twice)
	c      *corpus          // the run's corpus, without its input
	themes themeFit
	cl     clusters // each statement's theme cluster
	qs     []questionFit
	size   int64
}

// designKey fingerprints what besides the interviews shapes an analysis.
func designKey(in Input) string {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(in.StudyID)
	for _, o := range in.Objectives {
		put(o)
	}
	put("\x00questions")
	for _, q := range in.Questions {
		put(q.Text)
		put(q.Kind)
	}
	return string(h.Sum(nil))
}

// newStudyModel keeps what a full run over c fitted; keys are its interviews'
// reading keys in input order.
func newStudyModel(in Input, keys []string, c *corpus, themes themeFit, cl clusters, qs []questionFit) *studyModel {
	m := &studyModel{design: designKey(in), keys: make(map[string]int32, len(keys)), n: len(keys), themes: themes, cl: cl, qs: qs}
	for i, k := range keys {
		m.keys[k] = int32(i)
	}
	kept := *c
	kept.in = Input{} // a refresh brings its own: the run's transcripts are not kept
	kept.tagged = nil // and its own memo of tagged texts
	m.c = &kept
	size := int64(len(keys))*96 + int64(len(c.stmts))*(64+8) + int64(len(c.df.base)+len(c.marks.base)+len(c.vocab))*48 +
		int64(c.dim)*int64(4+4*len(themes.cents)) + 1024
	for _, s := range c.stmts {
		// The readings the statements point into are counted too: the model keeps
		// them even after the cache of readings lets them go.
		size += 8*int64(len(s.Vec)) + 112 + 16*int64(cap(s.Sent.Feats)) + 8*int64(cap(s.Sent.Marks))
	}
	for _, r := range themes.rel {
		size += 8*int64(len(r)) + 24
	}
	for _, q := range qs {
		size += int64(len(q.answers))*72 + int64(c.dim)*int64(8*q.k)
	}
	m.size = size
	return m
}

// refreshPlan says how an input extends a model: for each interview its index in
// the fitted run, or -1 when it is new.
type refreshPlan struct {
	old   []int32
	fresh int // new interviews
}

// plan returns how in (whose interviews have the reading keys keys and readings
// docs) extends m, or false when it does not: m's design differs, or one of m's
// interviews is missing, changed or out of order, or the new ones bring more than
// refreshShare of m's statements.
func (m *studyModel) plan(in Input, keys []string, docs []*ivDoc) (refreshPlan, bool) {
	if designKey(in) != m.design {
		return refreshPlan{}, false
	}
	p := refreshPlan{old: make([]int32, len(keys))}
	last, found, stmts := int32(-1), 0, 0
	for i, k := range keys {
		o, ok := m.keys[k]
		if !ok {
			p.old[i] = -1
			p.fresh++
			for _, md := range docs[i].Msgs {
				stmts += len(md.Sents)
			}
			continue
		}
		if o <= last {
			return refreshPlan{}, false
		}
		p.old[i], last = o, o
		found++
	}
	if found != m.n || float64(stmts) > refreshShare*float64(len(m.c.stmts)) {
		return refreshPlan{}, false
	}
	return p, true
}

// refresh builds the corpus of in over m's fit (the old statements first, in
// m's order, then the new interviews'), assigns the new statements and answers,
// and returns what the analysis is drawn from.
func (m *studyModel) refresh(in Input, docs []*ivDoc, p refreshPlan) (*corpus, clusters, []questionFit) {
	c := &corpus{in: in, rd: m.c.rd, tagged: &tagMemo{}, dim: m.c.dim, vocab: m.c.vocab, idf: m.c.idf, keys: m.c.keys,
		df: counts{base: m.c.df.base, extra: map[uint64]int32{}}, marks: counts{base: m.c.marks.base, extra: map[uint64]int32{}},
		byMsg: make([]map[int32][2]int32, len(docs)), answers: make([][]Answer, len(docs)), short: make([]map[int32]bool, len(docs))}
	// The old statements keep their indexes; only their interview's index moves.
	moved := make([]int32, m.n)
	for i, o := range p.old {
		if o >= 0 {
			moved[o] = int32(i)
			c.byMsg[i], c.answers[i], c.short[i] = m.c.byMsg[o], m.c.answers[o], m.c.short[o]
		}
	}
	c.stmts = make([]stmt, len(m.c.stmts), len(m.c.stmts)+len(m.c.stmts)/8)
	copy(c.stmts, m.c.stmts)
	for i := range c.stmts {
		c.stmts[i].Iv = moved[c.stmts[i].Iv]
	}
	from := len(c.stmts)
	var fresh []int
	for i, o := range p.old {
		if o < 0 {
			c.add(i, docs[i], c.df.extra, c.marks.extra)
			fresh = append(fresh, i)
		}
	}
	for i := from; i < len(c.stmts); i++ {
		c.weigh(&c.stmts[i])
	}
	c.indexIDs()

	cl := clusters{k: m.cl.k, centroids: m.cl.centroids, assign: make([]int32, len(c.stmts)), sim: make([]float32, len(c.stmts))}
	copy(cl.assign, m.cl.assign)
	copy(cl.sim, m.cl.sim)
	for i := from; i < len(c.stmts); i++ {
		cl.assign[i] = -1
	}
	m.themes.assign(c, from, &cl)

	// Each question's old answers, their interview indexes moved, then the new.
	newByQ := make([][]answer, len(m.qs))
	for _, i := range fresh {
		for qi, as := range c.answersOf(i) {
			newByQ[qi] = append(newByQ[qi], as...)
		}
	}
	qs := make([]questionFit, len(m.qs))
	for qi, f := range m.qs {
		f.answers = slices.Clone(f.answers)
		for a := range f.answers {
			f.answers[a].iv = moved[f.answers[a].iv]
		}
		qs[qi] = f.extend(c, newByQ[qi])
	}
	return c, cl, qs
}

// modelCache keeps the fitted model of recently analysed studies, bounded by an
// estimate of their bytes, least recently used evicted first. Safe for
// concurrent use.
type modelCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	order *list.List // of *modelEntry, front most recent
	items map[string]*list.Element
}

type modelEntry struct {
	study string
	m     *studyModel
}

func newModelCache(limit int64) *modelCache {
	return &modelCache{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

func (mc *modelCache) get(study string) *studyModel {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	el, ok := mc.items[study]
	if !ok {
		return nil
	}
	mc.order.MoveToFront(el)
	return el.Value.(*modelEntry).m
}

// put keeps m as study's model, replacing any earlier one.
func (mc *modelCache) put(study string, m *studyModel) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if el, ok := mc.items[study]; ok {
		mc.used -= el.Value.(*modelEntry).m.size
		mc.order.Remove(el)
		delete(mc.items, study)
	}
	if m.size > mc.limit {
		return
	}
	mc.items[study] = mc.order.PushFront(&modelEntry{study: study, m: m})
	mc.used += m.size
	for mc.used > mc.limit {
		el := mc.order.Back()
		e := el.Value.(*modelEntry)
		mc.order.Remove(el)
		delete(mc.items, e.study)
		mc.used -= e.m.size
	}
}
