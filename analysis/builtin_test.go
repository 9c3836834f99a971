package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// smallStudy is a few interviews saying a few things several ways.
func smallStudy(n int) Input {
	says := []string{
		"The price is too high for a small team. We nearly cancelled because of the cost.",
		"Setup took a whole weekend. The onboarding guide was confusing.",
		"I wish the mobile app worked offline. It would help on the train.",
		"The price is fair for what we get. It is good value for money.",
	}
	in := Input{
		StudyID:    "s",
		Objectives: []string{"Understand how customers see the price.", "Explore demand for invoicing."},
		Questions: []Question{
			{Text: "What do you think of it?", Kind: QuestionVerbatim},
			{Text: "What would you change?", Kind: QuestionVerbatim},
			{Text: "Anything else?", Kind: QuestionVerbatim},
		},
	}
	for i := range n {
		msgs := []Message{
			{Speaker: SpeakerInterviewer, Text: "What do you think of it?"},
			{Speaker: SpeakerParticipant, Text: says[i%len(says)]},
			{Speaker: SpeakerInterviewer, Text: "Could you say more?"},
			{Speaker: SpeakerParticipant, Text: says[(i+1)%len(says)]},
			{Speaker: SpeakerInterviewer, Text: "what would you change"},
			{Speaker: SpeakerParticipant, Text: "skip"},
		}
		in.Interviews = append(in.Interviews, Interview{ID: fmt.Sprintf("iv%d", i), Context: map[string]string{"plan": []string{"free", "pro"}[i%2]}, Messages: msgs})
	}
	return in
}

func TestBuiltinQuestionsByPosition(t *testing.T) {
	in := smallStudy(6)
	a, err := NewBuiltin().Analyse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	q := a.Questions
	// Asked and answered (probe replies belong to it); asked and skipped; never asked.
	if q[0].Answered != 6 || q[0].Skipped != 0 {
		t.Errorf("first question %d answered %d skipped, want 6 and 0", q[0].Answered, q[0].Skipped)
	}
	if q[1].Answered != 0 || q[1].Skipped != 6 {
		t.Errorf("second question (answered \"skip\") %d answered %d skipped, want 0 and 6", q[1].Answered, q[1].Skipped)
	}
	if q[2].Answered != 0 || q[2].Skipped != 6 {
		t.Errorf("unasked question %d answered %d skipped, want 0 and 6", q[2].Answered, q[2].Skipped)
	}
	count := 0
	for _, g := range q[0].Groups {
		count += g.Count
	}
	if count != 6 {
		t.Errorf("first question's groups count %d answers, want 6", count)
	}
	if n := Ground(in, a); n != 0 {
		t.Errorf("Ground dropped %d quotes", n)
	}
}

// TestBuiltinHugeAnswer: a 1 MB answer is read only up to MaxReadBytes, and what is
// quoted from it is still an exact span of it.
func TestBuiltinHugeAnswer(t *testing.T) {
	in := smallStudy(8)
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("the price keeps going up and up and nobody explains why ")
	}
	huge := b.String()
	in.Interviews[0].Messages[1].Text = huge
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newBuiltin(DefaultCacheBytes)
	a, err := e.Analyse(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if n := Ground(in, a); n != 0 {
		t.Errorf("Ground dropped %d quotes", n)
	}
	d, ok := e.cache.get(cacheKey(in.Interviews[0]))
	if !ok {
		t.Fatal("the interview was not cached")
	}
	for _, m := range d.Msgs {
		for _, s := range m.Sents {
			if s.End > MaxReadBytes || s.End-s.Start > maxSentenceBytes {
				t.Fatalf("a statement spans [%d,%d), past the read bound %d or the statement bound %d", s.Start, s.End, MaxReadBytes, maxSentenceBytes)
			}
		}
		if len(m.Sents) > maxSentences {
			t.Errorf("%d statements from one message, want at most %d", len(m.Sents), maxSentences)
		}
	}
}

// TestBuiltinConcurrent: one engine serves analyses at once, and each gets the same
// bytes as a lone run.
func TestBuiltinConcurrent(t *testing.T) {
	in := smallStudy(12)
	e := NewBuiltin()
	want, err := e.Analyse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			study := in
			if i%2 == 1 {
				study = smallStudy(12 + i) // a different study through the same cache
			}
			a, err := e.Analyse(context.Background(), study)
			if err != nil {
				errs <- err
				return
			}
			if i%2 == 0 {
				if got, _ := json.Marshal(a); !bytes.Equal(got, wantJSON) {
					errs <- fmt.Errorf("run %d differs from the lone run", i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDocCacheBounded(t *testing.T) {
	d := &ivDoc{Msgs: []msgDoc{{Sents: []sentDoc{{Feats: make([]feat, 10), Marks: make([]uint64, 3)}}}}}
	limit := 10 * (d.size() + 200)
	c := newDocCache(limit)
	for i := range 100 {
		c.put(fmt.Sprintf("k%d", i), d)
	}
	if c.used > limit {
		t.Errorf("cache holds %d bytes, over its limit %d", c.used, limit)
	}
	if n, most := c.len(), int(limit/(d.size()+128)); n == 0 || n > most {
		t.Errorf("cache holds %d entries, want between 1 and %d", n, most)
	}
	if _, ok := c.get("k99"); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, ok := c.get("k0"); ok {
		t.Error("the oldest entry is still cached")
	}
}

func TestIsNonAnswer(t *testing.T) {
	for text, want := range map[string]bool{
		"skip": true, " Pass. ": true, "No comment!": true, "": true, "I'd rather not say.": true,
		"(skipped)": true, "Nothing.": false, "I don't know": false, "The price.": false,
	} {
		if got := IsNonAnswer(text); got != want {
			t.Errorf("IsNonAnswer(%q) = %v, want %v", text, got, want)
		}
	}
}

// FuzzGround: whatever an engine returns, Ground leaves only exact participant
// spans, counts every drop, and never panics.
func FuzzGround(f *testing.F) {
	f.Add("a", 1, "The price", "zz", -1, "")
	f.Add("b", 0, "How was it?", "a", 1, "price is too high")
	f.Fuzz(func(t *testing.T, id1 string, mi1 int, text1, id2 string, mi2 int, text2 string) {
		in := groundInput()
		qs := []Quote{{InterviewID: id1, MessageIndex: mi1, Text: text1}, {InterviewID: id2, MessageIndex: mi2, Text: text2}}
		a := &Analysis{
			Objectives:  []Objective{{Findings: []Finding{{Support: qs, Contrary: qs}}, Coverage: Coverage{Interviews: 3}}},
			Themes:      []Theme{{Quotes: qs}},
			Questions:   []QuestionSet{{Groups: []AnswerGroup{{Count: 2, Quotes: qs}}}},
			Suggestions: []Suggestion{{Quotes: qs}},
		}
		bad := 0
		g := grounder{in: in, byID: map[string]int{"a": 0, "b": 1, "c": 2}}
		for _, q := range qs {
			if !g.valid(q) {
				bad++
			}
		}
		if n := Ground(in, a); n != 5*bad {
			t.Fatalf("dropped %d, want %d", n, 5*bad)
		}
		each := func(qs []Quote) {
			for _, q := range qs {
				if !g.valid(q) {
					t.Fatalf("quote %+v survived", q)
				}
			}
		}
		for _, o := range a.Objectives {
			if o.Coverage.Interviews < 0 || o.Coverage.Interviews > 3 {
				t.Fatalf("coverage %+v", o.Coverage)
			}
			for _, f := range o.Findings {
				each(f.Support)
				each(f.Contrary)
			}
		}
		for _, th := range a.Themes {
			each(th.Quotes)
		}
		for _, s := range a.Suggestions {
			each(s.Quotes)
		}
	})
}
