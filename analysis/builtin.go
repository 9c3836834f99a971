package analysis

import (
	"cmp"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// NewBuiltin returns the offline, deterministic engine ("builtin"): the same input
// gives byte-identical JSON. It keeps a bounded cache of read interviews (see
// DefaultCacheBytes), so one engine value should serve every analysis of a process.
func NewBuiltin() Engine { return newBuiltin(DefaultCacheBytes) }

func newBuiltin(cacheBytes int64) *builtin {
	return &builtin{cache: newDocCache(cacheBytes), models: newModelCache(DefaultModelBytes), workers: max(1, runtime.GOMAXPROCS(0))}
}

type builtin struct {
	once    sync.Once
	rd      *reader
	rdErr   error
	cache   *docCache
	models  *modelCache // each study's last full-run fit, for refreshes
	workers int
	// refreshes counts the analyses drawn from a fitted model (tests read it).
	refreshes atomic.Int64
}

func (*builtin) Name() string { return "builtin" }

// reader loads the language models on first use: a second or so, once.
func (b *builtin) reader() (*reader, error) {
	b.once.Do(func() { b.rd, b.rdErr = newReader() })
	return b.rd, b.rdErr
}

// Analyse reads each interview (or takes its reading from the cache), then finds
// themes, objective findings, answer groups and suggestions over the whole study:
// by refreshing the study's last full run when the input only adds a little to it
// (see studyModel), otherwise by a full run, whose fit it then keeps.
func (b *builtin) Analyse(ctx context.Context, in Input) (*Analysis, error) {
	a := Empty(in, b.Name())
	if len(in.Interviews) == 0 {
		a.Summary = summarise(in, a)
		return a, nil
	}
	r, err := b.reader()
	if err != nil {
		return nil, err
	}
	docs, keys, err := b.read(ctx, r, in.Interviews)
	if err != nil {
		return nil, err
	}
	if in.StudyID != "" {
		if m := b.models.get(in.StudyID); m != nil {
			if p, ok := m.plan(in, keys, docs); ok {
				b.refreshes.Add(1)
				c, cl, qs := m.refresh(in, docs, p)
				return b.emit(a, c, cl, qs), nil
			}
		}
	}
	c := newCorpus(in, r, docs)
	// Answer groups need nothing of the themes: they are found beside them, so the
	// single-threaded parts of the theme search do not leave a core idle.
	var qs []questionFit
	var questionsErr error
	questionsDone := make(chan struct{})
	go func() {
		defer close(questionsDone)
		qs, a.Questions, questionsErr = findAnswerGroups(ctx, c, b.workers)
	}()
	fit, cl, err := fitThemes(ctx, c, b.workers)
	if err == nil {
		b.drawThemes(a, c, cl)
	}
	<-questionsDone
	if err = cmp.Or(err, questionsErr); err != nil {
		return nil, err
	}
	if in.StudyID != "" {
		b.models.put(in.StudyID, newStudyModel(in, keys, c, fit, cl, qs))
	}
	a.Summary = summarise(in, a)
	return a, nil
}

// emit draws an analysis from a refreshed corpus: the same steps as after a full
// run's fit.
func (b *builtin) emit(a *Analysis, c *corpus, cl clusters, qs []questionFit) *Analysis {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Questions = c.emitQuestions(qs, b.workers)
	}()
	b.drawThemes(a, c, cl)
	<-done
	a.Summary = summarise(c.in, a)
	return a
}

// drawThemes sets a's themes, objective findings and suggestions from the
// statements' theme clusters.
func (b *builtin) drawThemes(a *Analysis, c *corpus, cl clusters) {
	th := c.emitThemes(cl)
	a.Themes = th.themes
	a.Objectives = findObjectives(b.rd, c, th)
	a.Suggestions = findSuggestions(c)
}

// read returns every interview's reading and its key in input order, reading the
// ones the cache lacks on b.workers goroutines.
func (b *builtin) read(ctx context.Context, r *reader, ivs []Interview) ([]*ivDoc, []string, error) {
	docs := make([]*ivDoc, len(ivs))
	keys := make([]string, len(ivs))
	var todo []int
	for i, iv := range ivs {
		keys[i] = cacheKey(iv)
		if d, ok := b.cache.get(keys[i]); ok {
			docs[i] = d
		} else {
			todo = append(todo, i)
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(b.workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newReadScratch()
			for i := range next {
				docs[i] = r.readInterview(ivs[i], sc)
				b.cache.put(keys[i], docs[i])
			}
		}()
	}
	var err error
	for _, i := range todo {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return docs, keys, err
}

// Empty returns an analysis of in with nothing found yet: every objective a gap with
// no findings, every question listed as skipped, and every list non-nil.
func Empty(in Input, engine string) *Analysis {
	a := &Analysis{
		StudyID:            in.StudyID,
		Engine:             engine,
		InterviewsIncluded: len(in.Interviews),
		Objectives:         make([]Objective, len(in.Objectives)),
		Themes:             []Theme{},
		Questions:          make([]QuestionSet, len(in.Questions)),
		Suggestions:        []Suggestion{},
	}
	for i, o := range in.Objectives {
		a.Objectives[i] = Objective{Objective: o, Findings: []Finding{}, Coverage: coverage(0, len(in.Interviews)), Gap: true}
	}
	for i, q := range in.Questions {
		a.Questions[i] = QuestionSet{Question: q.Text, Kind: q.Kind, Skipped: len(in.Interviews), Groups: []AnswerGroup{}}
	}
	return a
}
