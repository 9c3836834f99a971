package analysis

import (
	"slices"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"The price is way too high.", []string{"The", "price", "is", "way", "too", "high", "."}},
		{"I don't think so", []string{"I", "do", "n't", "think", "so"}},
		{"It can’t sync; the sign-up’s slow!", []string{"It", "ca", "n’t", "sync", ";", "the", "sign-up", "’s", "slow", "!"}},
		{"I'd love offline mode", []string{"I", "'d", "love", "offline", "mode"}},
		{"café — naïve 3rd-party", []string{"café", "—", "naïve", "3rd-party"}},
		{"'quoted' word- -dash", []string{"'", "quoted", "'", "word", "-", "-", "dash"}},
		{"", nil},
	} {
		if got := words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSuggestionWordsCoverShapes: the cheap token check in front of suggestionShape
// never hides a sentence the expression matches.
func TestSuggestionWordsCoverShapes(t *testing.T) {
	r, err := newReader()
	if err != nil {
		t.Fatal(err)
	}
	sentences := []string{
		"I wish it synced offline.", "If only the app were faster.", "It would help to see fees first.",
		"It'd help if the map loaded.", "It would be great to schedule orders.", "It’d be nice to split the bill.",
		"You should add a dark mode.", "They could offer a family plan.", "The team ought to fix search.",
		"Could you please add exports?", "Can you let me pick a time?", "Would you give refunds faster?",
		"I'd like a weekly summary.", "Id love a widget.", "I would love group orders.", "Would love a cheaper tier.",
		"Please add Apple Pay.", "The app needs to support tablets.", "You guys should allow tips.",
	}
	matched := 0
	for _, s := range sentences {
		if !suggestionShape.MatchString(strings.ToLower(strings.ReplaceAll(s, "’", "'"))) {
			continue
		}
		matched++
		if sd, ok := r.readSentence(s, newReadScratch()); !ok || !sd.Suggest {
			t.Errorf("%q matches the suggestion shape but was not read as a suggestion", s)
		}
	}
	for _, s := range []string{"The price is fair.", "I like the map.", "Help was slow to answer."} {
		if sd, _ := r.readSentence(s, newReadScratch()); sd.Suggest {
			t.Errorf("%q was read as a suggestion", s)
		}
	}
	if matched < 19 {
		t.Fatalf("only %d sentences match the suggestion shape; the test reads too few", matched)
	}
}
