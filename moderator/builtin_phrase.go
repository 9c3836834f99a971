package moderator

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/tagger"
)

// What a follow-up refers to: the noun phrases of the participant's answer, found with
// the shared part-of-speech tagger ("we keep the rota on paper" gives "the rota" and
// "paper"), so that a probe can name something the participant said. Only short
// answers are followed up, so only they are tagged; word tables then drop what the
// tagger lets through that would read badly in a question ("every week", "a lot",
// "nobody quite knows").

const (
	builtinPhraseMaxWords = 4  // a longer noun phrase is a clause, not a thing to name
	builtinPhraseMaxBytes = 40 // and reads badly inside a question
)

// builtinPhraseHeadless are nouns too vague or too much about time to follow up on:
// "You mentioned every week" says nothing.
var builtinPhraseHeadless = wordSet(
	"thing", "things", "stuff", "lot", "lots", "bit", "way", "ways", "kind", "sort", "part",
	"example", "instance", "case", "point", "fact", "reason", "question", "answer", "time",
	"times", "day", "days", "week", "weeks", "month", "months", "year", "years", "hour",
	"hours", "minute", "minutes", "morning", "evening", "afternoon", "weekend", "today",
	"yesterday", "tomorrow", "moment", "while", "monday", "tuesday", "wednesday", "thursday",
	"friday", "saturday", "sunday", "people", "everyone", "someone", "anyone", "nobody",
	"somebody", "anybody", "everybody", "nothing", "something", "anything", "everything",
	"one", "ones", "yes", "no", "ok", "okay", "sure", "honestly", "mostly", "well", "hmm",
	"i", "you", "it", "that", "this", "what", "picture", "question", "idea",
)

// builtinPhraseNoise are words that never belong inside a named phrase; the tagger
// sometimes reads them as adjectives or nouns ("nobody/JJ quite/JJ knows/NNS").
var builtinPhraseNoise = wordSet(
	"nobody", "somebody", "anybody", "everybody", "someone", "anyone", "everyone", "quite",
	"really", "very", "just", "honestly", "actually", "basically", "pretty", "so", "too",
	"also", "still", "even", "maybe", "probably", "every", "each", "no", "any", "another",
	"all", "most", "much", "many", "more", "less", "few", "last", "next", "other", "such",
	"same", "own", "sure", "ok", "okay", "yes", "well", "thing", "things", "lot", "bit",
)

// builtinPhraseOpen are the tags a noun phrase is made of; it ends on a noun.
var builtinPhraseOpen = wordSet("DT", "PRP$", "JJ", "JJR", "JJS", "CD", "NN", "NNS", "NNP", "NNPS")

// builtinPhraseArticles may start a named phrase; other determiners ("every", "no")
// make it a quantity, not a thing.
var builtinPhraseArticles = wordSet("the", "a", "an", "this", "that", "these", "those", "my", "our", "your", "his", "her", "their", "its")

// builtinToInterviewer puts the participant's words in the interviewer's mouth: "my
// bakers" is "your bakers".
var builtinToInterviewer = map[string]string{"my": "your", "our": "your", "mine": "yours", "ours": "yours"}

// answerPhrases returns the noun phrases of answer a follow-up may name, best first:
// those whose head noun the question does not already use (something the participant
// brought up), then those of more than one word, each group in the answer's order. It
// returns nil when the tagger cannot be loaded or nothing is worth naming.
func answerPhrases(answer, question string) []string {
	toks, err := tagger.Tag(answer)
	if err != nil {
		return nil
	}
	asked := map[string]bool{}
	for _, w := range wordsOf(strings.ToLower(question)) {
		asked[stemWord(w)] = true
	}
	type found struct {
		text  string
		score int
	}
	var all []found
	seen := map[string]bool{}
	for i := 0; i < len(toks); {
		if !builtinPhraseOpen.has(toks[i].Tag) {
			i++
			continue
		}
		j := i
		for j < len(toks) && (j == i || !isDeterminerTag(toks[j].Tag)) && inPhrase(toks, j) {
			j++
		}
		if text, head, ok := namedPhrase(toks[i:j], i == 0); ok && !seen[strings.ToLower(text)] && !selfDescribed(toks, i) {
			seen[strings.ToLower(text)] = true
			score := 0
			if !asked[stemWord(head)] {
				score += 2
			}
			if strings.Contains(text, " ") {
				score++
			}
			all = append(all, found{text, score})
		}
		i = j
	}
	out := make([]string, 0, len(all))
	for score := 3; score >= 0; score-- {
		for _, f := range all {
			if f.score == score {
				out = append(out, f.text)
			}
		}
	}
	return out
}

// selfDescribed reports whether the phrase starting at toks[i] is the participant saying
// who they are ("I'm a night nurse", "as a baker"): their identity, not a topic to
// follow up.
func selfDescribed(toks []tagger.Token, i int) bool {
	prev := func(k int) string {
		if i-k < 0 {
			return ""
		}
		return strings.ToLower(strings.ReplaceAll(toks[i-k].Text, "’", "'"))
	}
	return prev(1) == "as" || ((prev(1) == "'m" || prev(1) == "am") && prev(2) == "i")
}

func isDeterminerTag(tag string) bool { return tag == "DT" || tag == "PRP$" }

// inPhrase reports whether toks[j] can be part of a noun phrase: a word of its tags, or
// a gerund or participle before a noun ("the online ordering system").
func inPhrase(toks []tagger.Token, j int) bool {
	if builtinPhraseOpen.has(toks[j].Tag) {
		return true
	}
	return (toks[j].Tag == "VBG" || toks[j].Tag == "VBN") && j+1 < len(toks) && strings.HasPrefix(toks[j+1].Tag, "NN")
}

// namedPhrase reads a run of noun-phrase tokens as the phrase a follow-up names, cut
// back to its last noun, and returns it with its head noun; ok is false when it reads
// badly (see the tables above). first: the run starts the answer, so a capital there
// is the sentence's, not a name's.
func namedPhrase(run []tagger.Token, first bool) (text, head string, ok bool) {
	end := len(run)
	for end > 0 && !strings.HasPrefix(run[end-1].Tag, "NN") {
		end--
	}
	if end == 0 {
		return "", "", false
	}
	run = run[:end]
	words := make([]string, 0, len(run))
	for k, t := range run {
		w := trimPhrase(t.Text) // the tokenizer may leave a full stop on a word ("Yes.")
		low := strings.ToLower(w)
		switch {
		case !hasLetterOrDigit(w), strings.ContainsAny(w, "\"“”<>{}[]|\\/"):
			return "", "", false
		case k == 0 && isDeterminerTag(t.Tag):
			if !builtinPhraseArticles.has(low) {
				return "", "", false
			}
			w = swapWords(low, builtinToInterviewer)
		case builtinPhraseNoise.has(low):
			return "", "", false
		case k == 0 && first && t.Tag != "NNP" && t.Tag != "NNPS":
			w = lowerFirst(w)
		}
		words = append(words, w)
	}
	head = strings.ToLower(trimPhrase(run[len(run)-1].Text))
	if len(words) > builtinPhraseMaxWords || builtinPhraseHeadless.has(head) || utf8.RuneCountInString(head) < 3 {
		return "", "", false
	}
	if len(run) == 1 && run[0].Tag == "CD" {
		return "", "", false
	}
	text = strings.Join(words, " ")
	if len(text) > builtinPhraseMaxBytes || (len(words) == 1 && isDeterminerTag(run[0].Tag)) {
		return "", "", false
	}
	return text, head, true
}

func hasLetterOrDigit(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
