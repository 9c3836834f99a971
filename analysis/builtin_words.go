package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words splits a sentence into word and punctuation tokens the way the features
// need them: runs of letters and digits (with apostrophes and hyphens inside a
// word), clitics split off as prose's tokenizer splits them ("don't" → "do" "n't",
// "price's" → "price" "'s"), and every other visible character a token of its own.
// Statements are read with it and not with prose's tokenizer, whose regular
// expressions cost more than everything else a statement's reading does; the few
// statements that name groups are still tokenized and tagged by prose.
func words(s string) []string { return appendWords(nil, s) }

// appendWords appends s's words (as words splits them) to out.
func appendWords(out []string, s string) []string {
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(c):
			i += size
		case isWordRune(c):
			j := i + size
			for j < len(s) {
				d, n := utf8.DecodeRuneInString(s[j:])
				if isWordRune(d) {
					j += n
					continue
				}
				// An apostrophe or hyphen joins two parts of one word.
				if d == '\'' || d == '’' || d == '-' {
					if e, _ := utf8.DecodeRuneInString(s[j+n:]); j+n < len(s) && isWordRune(e) {
						j += n
						continue
					}
				}
				break
			}
			out = appendClitics(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+size])
			i += size
		}
	}
	return out
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsMark(c) }

// clitics are the endings split off a word as tokens of their own.
var clitics = []string{"n't", "'s", "'re", "'ve", "'ll", "'d", "'m"}

// appendClitics appends w, split before a clitic ending when it has one.
func appendClitics(out []string, w string) []string {
	norm := strings.ReplaceAll(w, "’", "'")
	lower := strings.ToLower(norm)
	for _, c := range clitics {
		if len(lower) > len(c) && strings.HasSuffix(lower, c) {
			// Cut w as many runes from its end as the clitic has: its apostrophe
			// may be the three-byte ’.
			cut := len(w)
			for range utf8.RuneCountInString(c) {
				_, n := utf8.DecodeLastRuneInString(w[:cut])
				cut -= n
			}
			return append(out, w[:cut], w[cut:])
		}
	}
	return append(out, w)
}
