package analysis

import (
	"regexp"
	"strings"

	"github.com/kljensen/snowball/english"
)

// The word lists below are this package's own, written for interview answers about
// products and services; they are deliberately small and general.

// positiveWords carry a favourable judgement.
const positiveWords = `good great excellent fair reasonable affordable cheap worth valuable love
loved liked enjoy enjoyed easy easier simple simpler intuitive clear helpful useful
handy fast quick quicker smooth smoothly reliable stable responsive friendly nice pleasant
happy glad satisfied impressed impressive amazing awesome fantastic wonderful brilliant
perfect best better fine solid decent convenient effortless painless straightforward
clean polished powerful flexible efficient productive accurate transparent generous
recommend appreciate appreciated thrilled delighted comfortable confident seamless
improved improvement success successful favourite favorite fun elegant speedy snappy
bargain sensible acceptable`

// negativeWords carry an unfavourable judgement.
const negativeWords = `bad poor terrible awful horrible expensive pricey costly overpriced steep
unfair unaffordable hate hated dislike disliked annoying annoyed annoys frustrating
frustrated frustration confusing confused confuse unclear hard harder difficult
complicated complex clunky slow slower sluggish laggy lag lags buggy bug bugs broken
crash crashes crashed crashing freeze freezes froze unreliable unstable useless
pointless painful tedious tiresome cumbersome awkward messy cluttered ugly outdated
disappointing disappointed disappointment worse worst fail fails failed failure problem
problems issue issues struggle struggled struggling lost stuck worried worry concern
concerned unhappy angry upset missing lacking lacks lack waste wasted ridiculous
rip ripoff nightmare glitch glitches glitchy error errors wrong hassle unresponsive
inaccurate hidden exhausting overwhelming overwhelmed excessive outrageous silly
extortionate rip-off exorbitant unreasonable off-putting`

// negators flip the polarity of the judgement that follows them closely.
var negators = map[string]bool{
	"not": true, "n't": true, "never": true, "no": true, "hardly": true, "barely": true,
	"without": true, "nothing": true, "nor": true, "isnt": true, "dont": true, "cannot": true,
}

// fillers are content-looking words that say nothing about a subject in speech.
var fillers = map[string]bool{
	"yeah": true, "yes": true, "um": true, "uh": true, "okay": true, "ok": true, "really": true,
	"just": true, "actually": true, "honestly": true, "basically": true, "guess": true,
	"think": true, "mean": true, "kind": true, "sort": true, "thing": true, "things": true,
	"stuff": true, "lot": true, "bit": true, "also": true, "maybe": true, "probably": true,
	"would": true, "could": true, "should": true, "might": true, "get": true, "got": true,
	"one": true, "'s": true, "n't": true, "'re": true, "'m": true, "'ll": true, "'ve": true,
	"'d": true, "much": true, "many": true, "pretty": true, "quite": true, "even": true,
	"still": true, "well": true, "way": true, "lots": true, "definitely": true, "though": true,
	"anyway": true, "like": true, "said": true, "say": true, "feel": true, "felt": true,
	"overall": true, "etc": true, "know": true, "sure": true, "right": true, "oh": true,
	// Stock phrases ("nothing else comes to mind", "anything else?") recur in every
	// study without saying anything.
	"else": true, "mind": true, "nothing": true, "anything": true, "something": true,
	"everything": true, "come": true, "comes": true, "came": true, "hmm": true, "ah": true,
	"question": true, "questions": true,
}

// objectiveFrame is the wording research objectives are framed in ("understand how
// users perceive ..."); it says what to learn, not what about, so it never counts as
// evidence.
var objectiveFrame = map[string]bool{
	"understand": true, "learn": true, "explore": true, "find": true, "identify": true,
	"assess": true, "evaluate": true, "measure": true, "know": true, "discover": true,
	"see": true, "determine": true, "gauge": true, "investigate": true, "uncover": true,
	"test": true, "validate": true, "check": true, "study": true, "examine": true,
	"user": true, "users": true, "customer": true, "customers": true, "participant": true,
	"participants": true, "people": true, "person": true, "respondent": true,
	"respondents": true, "perceive": true, "perception": true, "perceptions": true,
	"feel": true, "think": true, "view": true, "views": true, "opinion": true,
	"opinions": true, "attitude": true, "attitudes": true, "experience": true,
	"experiences": true, "whether": true, "why": true, "how": true, "what": true,
	"main": true, "key": true, "biggest": true, "current": true, "overall": true,
	"use": true, "using": true, "uses": true, "product": true, "our": true,
}

// suggestionShape finds a sentence shaped like a request or an idea.
var suggestionShape = regexp.MustCompile(`\b(i wish|if only|it would help|it'd help|` +
	`it would be (great|nice|good|helpful|useful|awesome|better|cool|handy|lovely)|` +
	`it'd be (great|nice|good|helpful|useful|awesome|better|cool|handy|lovely)|` +
	`(you|they|you guys|the team) (should|could|ought to)|(could|can|would) you (please )?(add|make|let|give|offer|allow|include|build|support)|` +
	`i'?d (like|love)|i would (like|love)|would love|please (add|make|let|give|offer|include)|` +
	`(should|needs to|need to) (add|have|offer|support|include|allow|let))\b`)

// suggestionWords: a sentence has at least one of these tokens when suggestionShape
// can match it (kept in step with it; TestSuggestionWordsCoverShapes checks).
var suggestionWords = map[string]bool{
	"wish": true, "only": true, "help": true, "would": true, "'d": true, "should": true, "could": true,
	"ought": true, "can": true, "please": true, "like": true, "love": true, "need": true, "needs": true, "id": true,
}

// lexicon maps words to polarity (+1, -1). It matches words as written (with a
// plural "s" dropped), not stems: "helpful" judges, "help" does not.
type lexicon map[string]int8

func newLexicon() lexicon {
	l := lexicon{}
	for _, w := range strings.Fields(positiveWords) {
		l[w] = 1
	}
	for _, w := range strings.Fields(negativeWords) {
		l[w] = -1
	}
	return l
}

func (l lexicon) of(word string) int8 {
	if p, ok := l[word]; ok {
		return p
	}
	if w, ok := strings.CutSuffix(word, "s"); ok {
		return l[w]
	}
	return 0
}

// stemSet stems each word of a set so lookups work on stems.
func stemSet(words map[string]bool) map[string]bool {
	out := make(map[string]bool, len(words))
	for w := range words {
		out[w] = true
		out[english.Stem(w, false)] = true
	}
	return out
}
