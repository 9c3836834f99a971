package analysis

import (
	"cmp"
	"context"
	"runtime"
	"sync"
)

// NewBuiltin returns the offline, deterministic engine ("builtin"): the same input
// gives byte-identical JSON. It keeps a bounded cache of read interviews (see
// DefaultCacheBytes), so one engine value should serve every analysis of a process.
func NewBuiltin() Engine { return newBuiltin(DefaultCacheBytes) }

func newBuiltin(cacheBytes int64) *builtin {
	return &builtin{cache: newDocCache(cacheBytes), workers: max(1, runtime.GOMAXPROCS(0))}
}

type builtin struct {
	once    sync.Once
	rd      *reader
	rdErr   error
	cache   *docCache
	workers int
}

func (*builtin) Name() string { return "builtin" }

// reader loads the language models on first use: a second or so, once.
func (b *builtin) reader() (*reader, error) {
	b.once.Do(func() { b.rd, b.rdErr = newReader() })
	return b.rd, b.rdErr
}

// Analyse reads each interview (or takes its reading from the cache), then finds
// themes, objective findings, answer groups and suggestions over the whole study.
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
	docs, err := b.read(ctx, r, in.Interviews)
	if err != nil {
		return nil, err
	}
	c := newCorpus(in, r, docs)
	docs = nil
	// Answer groups need nothing of the themes: they are found beside them, so the
	// single-threaded theme search does not leave a core idle.
	var questionsErr error
	questionsDone := make(chan struct{})
	go func() {
		defer close(questionsDone)
		a.Questions, questionsErr = findAnswerGroups(ctx, c, b.workers)
	}()
	th, err := findThemes(ctx, c)
	if err == nil {
		a.Themes = th.themes
		a.Objectives = findObjectives(r, c, th)
		a.Suggestions = findSuggestions(c)
	}
	<-questionsDone
	if err = cmp.Or(err, questionsErr); err != nil {
		return nil, err
	}
	a.Summary = summarise(in, a)
	return a, nil
}

// read returns every interview's reading in input order, reading the ones the cache
// lacks on b.workers goroutines.
func (b *builtin) read(ctx context.Context, r *reader, ivs []Interview) ([]*ivDoc, error) {
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
			stems := stemMemo{}
			for i := range next {
				docs[i] = r.readInterview(ivs[i], stems)
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
	return docs, err
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
