package analysis

import (
	"context"
	"testing"
)

// TestTaggerReadsEachTextOnce: statements of one analysis that say exactly the same
// thing share one tagging, and get the phrases tagging either alone would give.
func TestTaggerReadsEachTextOnce(t *testing.T) {
	in := smallStudy(8) // four answers, each said by two interviews
	e := newBuiltin(DefaultCacheBytes)
	r, err := e.reader()
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := e.read(context.Background(), r, in.Interviews)
	if err != nil {
		t.Fatal(err)
	}
	c := newCorpus(in, r, docs)
	byText := map[string][]int{}
	for i := range c.stmts {
		byText[c.text(&c.stmts[i])] = append(byText[c.text(&c.stmts[i])], i)
	}
	shared := 0
	for text, same := range byText {
		first := c.labelsOf(same[0])
		alone := (&tagMemo{}).phrases(r, text)
		if len(first) != len(alone) {
			t.Fatalf("%q: %d phrases shared, %d tagged alone", text, len(first), len(alone))
		}
		for k := range alone {
			if first[k] != alone[k] {
				t.Errorf("%q: phrase %d is %+v, tagged alone %+v", text, k, first[k], alone[k])
			}
		}
		for _, i := range same[1:] {
			if got := c.labelsOf(i); len(got) > 0 && &got[0] != &first[0] {
				t.Errorf("%q: statement %d was tagged again", text, i)
			}
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no text said twice: the study does not test sharing")
	}
	if len(c.tagged.m) != len(byText) {
		t.Errorf("%d texts tagged, want %d", len(c.tagged.m), len(byText))
	}
}
