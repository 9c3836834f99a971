package tagger

import (
	"sync"
	"testing"
)

// TestModelLoadedOnce: every caller, from any goroutine, gets the same decoded model.
func TestModelLoadedOnce(t *testing.T) {
	first, err := Model()
	if err != nil || first == nil {
		t.Fatalf("Model: %v %v", first, err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m, err := Model(); err != nil || m != first {
				t.Errorf("another caller got %p %v, want the shared %p", m, err, first)
			}
		}()
	}
	wg.Wait()
}

func TestTag(t *testing.T) {
	toks, err := Tag("I own a small bakery in Leeds.")
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{{"I", "PRP"}, {"own", "VBP"}, {"a", "DT"}, {"small", "JJ"}, {"bakery", "NN"}, {"in", "IN"}, {"Leeds", "NNP"}, {".", "."}}
	if len(toks) != len(want) {
		t.Fatalf("tokens %v, want %v", toks, want)
	}
	for i := range want {
		if toks[i] != want[i] {
			t.Fatalf("token %d: %v, want %v (all: %v)", i, toks[i], want[i], toks)
		}
	}
}
