package moderator

import (
	"strings"
	"testing"
	"unicode"
)

// referenceNormalisedWords is normalisedWords as first written: lowercase, split on
// anything but letters and digits, join with single spaces.
func referenceNormalisedWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

var normalisedWordsSamples = []string{
	"", " ", "Walk me through the first day.", "  What ALMOST made you stop?!  ",
	"Ça va — \"quoted\"\n", "İstanbul ΣΊΣΥΦΟΣ straße", "don't, won't; can't", "3 × 4 = 12",
	"\xff\xfeinvalid\xc3", "tab\there\u00a0nbsp", "日本語のテキスト、句読点。", "a", "--a--b--",
}

// TestNormalisedWords_AsReference keeps the one-pass normalisedWords equal to the
// plain definition, whatever the script, case or invalid bytes.
func TestNormalisedWords_AsReference(t *testing.T) {
	for _, s := range normalisedWordsSamples {
		if got, want := normalisedWords(s), referenceNormalisedWords(s); got != want {
			t.Errorf("normalisedWords(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzNormalisedWords(f *testing.F) {
	for _, s := range normalisedWordsSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalisedWords(s), referenceNormalisedWords(s); got != want {
			t.Fatalf("normalisedWords(%q) = %q, want %q", s, got, want)
		}
	})
}

// referenceMannerText is mannerText as first written.
func referenceMannerText(s string) string {
	s = strings.NewReplacer("’", "'", "‘", "'", "`", "'").Replace(strings.ToLower(s))
	return strings.Join(strings.Fields(s), " ")
}

// TestMannerText_AsReference keeps the one-pass mannerText equal to the plain
// definition: lowercase, straight apostrophes, single spaces.
func TestMannerText_AsReference(t *testing.T) {
	for _, s := range append(normalisedWordsSamples, "No, that’s ‘everything’ `really`", " \t\nI'M  DONE\u2003thanks ") {
		if got, want := mannerText(s), referenceMannerText(s); got != want {
			t.Errorf("mannerText(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzMannerText(f *testing.F) {
	for _, s := range normalisedWordsSamples {
		f.Add(s)
	}
	f.Add("No, that’s ‘everything’ `really`")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := mannerText(s), referenceMannerText(s); got != want {
			t.Fatalf("mannerText(%q) = %q, want %q", s, got, want)
		}
	})
}
