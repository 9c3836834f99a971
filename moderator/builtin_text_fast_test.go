package moderator

import (
	"hash/fnv"
	"strings"
	"testing"
	"unicode"
)

// The text helpers every turn runs have shortcuts; each must give what the plain
// version gives.

// mannerTextRune is mannerText rune by rune, as it was written first.
func mannerTextRune(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range s {
		r = unicode.ToLower(r)
		switch {
		case r == '’' || r == '‘' || r == '`':
			r = '\''
		case unicode.IsSpace(r):
			gap = true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte(' ')
		}
		gap = false
		b.WriteRune(r)
	}
	return b.String()
}

func fnvStrings(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

var textSeeds = []string{"", " ", "Could you tell me more about that?", "  Could you\n say   more?  ", "a\u00a0b", "No, THAT’S everything.",
	"tab\there", "trailing ", " leading", "\xff\xfe bad bytes", "ÀÉÎ straße İ", "one\u2028two\u0085three", "`quoted`"}

func FuzzTextHelpers(f *testing.F) {
	for _, s := range textSeeds {
		f.Add(s, "What gets in the way?")
	}
	f.Fuzz(func(t *testing.T, s, q string) {
		if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
		if got, want := wordCount(s), len(strings.Fields(s)); got != want {
			t.Errorf("wordCount(%q) = %d, want %d", s, got, want)
		}
		m := mannerText(s)
		if want := mannerTextRune(s); m != want {
			t.Errorf("mannerText(%q) = %q, want %q", s, m, want)
		}
		if wordCount(m) != wordCount(s) {
			t.Errorf("mannerText(%q) = %q changed the words", s, m)
		}
		if got, want := hashStrings(q, s), fnvStrings(q, s); got != want {
			t.Errorf("hashStrings(%q, %q) = %x, want %x", q, s, got, want)
		}
		f := probeFacts(s)
		if f.leading != isLeading(s) || f.words != normalisedWords(s) {
			t.Errorf("probeFacts(%q) = %+v", s, f)
		}
	})
}

// TestFixedProbesKnown: the fixed probes' facts are worked out once, not per probe.
func TestFixedProbesKnown(t *testing.T) {
	for _, p := range builtinProbes {
		if f, ok := fixedProbes()[p]; !ok || f.leading || f.words != normalisedWords(p) {
			t.Errorf("fixed probe %q: %+v %v", p, f, ok)
		}
	}
}

// TestQuestionWordsMemoBounded: the remembered questions start over when full, and
// every answer is normalisedWords'.
func TestQuestionWordsMemoBounded(t *testing.T) {
	for i := range questionWordsMemoSize + 10 {
		q := "Question number " + strings.Repeat("x", i%7) + string(rune('A'+i%26)) + "?" + strings.Repeat(" ", i)
		if got := questionWords(q); got != normalisedWords(q) {
			t.Fatalf("%q: %q", q, got)
		}
		if n := questionWordsMemo.n.Load(); n > questionWordsMemoSize {
			t.Fatalf("%d questions remembered", n)
		}
	}
}

// closesTopicPlain is closesTopic as it was first written: every answer read in full.
func closesTopicPlain(question, answer string) bool {
	a := mannerTextRune(answer)
	if a == "" {
		return false
	}
	if len(strings.Fields(a)) <= 12 && mannerClosingPhrase.MatchString(a) {
		return true
	}
	return mannerBareNo.MatchString(strings.Trim(a, " .!,")) && isWrapUp(question)
}

// FuzzClosesTopic: the shortcut for long answers gives what reading them in full gives,
// a bare "no" padded with punctuation to a wrap-up question included.
func FuzzClosesTopic(f *testing.F) {
	wrapUp := "Is there anything else you'd like to share?"
	for _, a := range []string{"No . . . . . . . . . . . . .", "no , , , , , , , , , , , , , ! ! !", "That's all, thanks.",
		"Answer 12 from participant 7: we keep the rota on paper and it changes every week.", "Nope", "", "  ",
		"Not that I can think of . . . . . . . . .", "Not that I can think of, no . . . . . . . . .", "no!!! ... ,,, !!! ... ,,, !!! ... ,,, !!! ... ,,, !!!"} {
		f.Add(wrapUp, a)
		f.Add("What would you change?", a)
	}
	f.Fuzz(func(t *testing.T, question, answer string) {
		if got, want := closesTopic(question, answer), closesTopicPlain(question, answer); got != want {
			t.Fatalf("closesTopic(%q, %q) = %v, read in full %v", question, answer, got, want)
		}
	})
}
