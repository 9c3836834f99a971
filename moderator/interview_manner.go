package moderator

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// closingMaxWords: an answer with more words says more than that the topic is closed.
const closingMaxWords = 12

// How any interviewer behaves, whatever the engine: a participant who says they have
// nothing more is not pressed, a follow-up never suggests its own answer, and the
// wrap-up question ("anything else?") stays last. These are the script's rules, so an
// engine that proposes otherwise is overruled.

var (
	// mannerClosingPhrase ends a topic in a short answer: "No, that's everything",
	// "nothing else really", "I think that covers it". It must end the answer or a
	// clause of it, so "that's all I do" and "I'm good at it" do not close anything.
	mannerClosingPhrase = newLazyRegexp(`\b(?:that(?:'s| is| was) (?:everything|all|it|about it)|nothing (?:else|more|further|to add)|not (?:anything|much) (?:else|more)|no(?:thing)? more to (?:add|say)|(?:that )?(?:covers|covered) it|i(?:'m| am) (?:done|good|all set)|all good|can(?:'t|not) think of anything(?: else| more)?)(?:,? (?:really|i think|for now|thanks|thank you|from me|to add|to say))*(?:[.!,;]|$)`)
	// mannerBareNo is a whole answer of plain "no" and its kin.
	mannerBareNo = newLazyRegexp(`^(?:no|nope|nah|none|nothing|no thanks|no thank you|not really|n/?a|not that i can think of|i don't think so|i do not think so)$`)
	// mannerWrapUp is a question that invites the participant to close: "Is there
	// anything else you'd like to share?"
	mannerWrapUp = newLazyRegexp(`\banything (?:else|more|further)\b|\bother (?:thoughts|comments)\b|\banything (?:we|i) (?:haven't|have not|didn't|did not)\b|\banything to add\b`)
	// mannerLeading are follow-ups that suggest their answer or the interviewer's view:
	// negative questions ("Don't you think…", "Wasn't it…"), tags ("…, right?"),
	// exclamations of feeling ("How frustrating!") and assumed feelings ("must have
	// been", "I'm sure").
	mannerLeading = newLazyRegexp(`^(?:(?:don't|doesn't|didn't|isn't|wasn't|aren't|weren't|wouldn't|won't|can't|couldn't|shouldn't|haven't|hasn't|hadn't)\b|surely\b|obviously\b|clearly\b|i bet\b|how (?:frustrating|annoying|awful|terrible|great|wonderful|amazing|lovely|stressful|exciting|difficult|hard|nice)\b|so you (?:agree|think|feel|like|liked|hated|prefer)\b|you (?:must|probably|surely)\b|(?:would|do) you agree\b)` +
		`|,\s*(?:right|correct|yes|surely|isn't it|wasn't it|didn't you|don't you|did you not|no)\s*\?*$` +
		`|\b(?:wouldn't you agree|don't you think|don't you agree|isn't that right|must have (?:been|felt)|i(?:'m| am) sure (?:you|it|that)|how much did you (?:love|hate|like|enjoy)|what did you (?:love|hate|enjoy)(?: most)? about|why (?:was|is) it so (?:bad|good|great|hard|frustrating|annoying))\b`)
)

// closesTopic reports whether answer, given to question, says the participant has
// nothing more to say on it: a closing phrase in a short answer, or a bare "no" to a
// wrap-up question. Such an answer gets no follow-up.
func closesTopic(question, answer string) bool {
	// A closing phrase counts only in a short answer, so a longer answer is read no
	// further unless the question is a wrap-up, where a bare "no" padded with
	// punctuation ("No . . . .") still closes it. mannerText keeps the words as they
	// are, so the answer's words are counted as they stand.
	short := wordCount(answer) <= closingMaxWords
	if !short && (spokenWords(answer) > bareNoMaxWords || !isWrapUp(question)) {
		return false
	}
	a := mannerText(answer)
	if a == "" {
		return false
	}
	if short && mannerClosingPhrase.MatchString(a) {
		return true
	}
	return mannerBareNo.MatchString(strings.Trim(a, " .!,")) && isWrapUp(question)
}

// bareNoMaxWords is the most words a bare "no" has ("not that i can think of").
const bareNoMaxWords = 6

// spokenWords counts s's words that are not only the punctuation a bare "no" may be
// padded with (".", "!" and ","): more than bareNoMaxWords of them and s is no bare "no".
func spokenWords(s string) int {
	n, spoken := 0, false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			spoken = false
		case r == '.' || r == '!' || r == ',':
		case !spoken:
			n, spoken = n+1, true
		}
	}
	return n
}

// isWrapUp reports whether question invites the participant to add anything else.
func isWrapUp(question string) bool { return mannerWrapUp.MatchString(mannerText(question)) }

// isLeading reports whether a follow-up suggests its answer or takes a side.
func isLeading(probe string) bool {
	return mannerLeading.MatchString(strings.TrimRight(mannerText(probe), " .!"))
}

// mannerText lowercases s, straightens apostrophes and collapses space, so the phrase
// tables need one spelling.
// It runs on answers and probes, so it is one pass with one allocation, and ASCII (most
// text) is handled byte by byte: lowercasing rune by rune is what strings.ToLower does,
// and invalid bytes become U+FFFD as there.
func mannerText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for i := 0; i < len(s); {
		var r rune
		if c := s[i]; c < utf8.RuneSelf {
			r = rune(c)
			if 'A' <= c && c <= 'Z' {
				r += 'a' - 'A'
			}
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			r = unicode.ToLower(r)
			i += size
		}
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
