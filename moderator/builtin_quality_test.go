package moderator

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"

	"interviewd/kv"
)

// The quality checks the corpus suite applies to a drafted brief. They read the brief as
// a reader would, with prose's part-of-speech tags, independently of how the engine
// wrote it: a phrase that ends on a preposition, article or conjunction, a modifier
// without its noun, a clause with no verb, a question that mixes "you" with "they", a
// phrase that stops where the guidance it came from went on, a closed or leading
// question, a repeated one, and a title or objective that does not name the subject.

// briefReport is what the checks found in one brief.
type briefReport struct {
	title      []string            // problems of the title (a cut title)
	sentences  map[string][]string // broken objectives and questions: text → problems
	questions  map[string][]string // closed, leading or repeated questions
	subject    []string            // where the subject is missing
	checked    int                 // objectives and questions checked
	researcher map[string]bool     // questions the researcher wrote, kept as written
}

func (r briefReport) problems() int {
	return len(r.title) + len(r.sentences) + len(r.questions) + len(r.subject)
}

// checkBriefQuality runs every check on brief b drafted from guidance and files; subject lists
// words of which the title and first objective must name one (none: not checked).
func checkBriefQuality(guidance string, files []FileText, subject []string, b kv.Brief) briefReport {
	r := briefReport{sentences: map[string][]string{}, questions: map[string][]string{}, researcher: map[string]bool{}}
	source := guidance
	for _, f := range files {
		source += "\n" + f.Text
	}
	for _, q := range b.VerbatimQuestions {
		if strings.Contains(source, strings.TrimSuffix(q, "?")) {
			r.researcher[q] = true // the researcher's own words: kept verbatim, not judged
		}
	}
	g := newGuidanceWords(guidance)

	title := ""
	if b.Title != nil {
		title = *b.Title
	}
	r.title = phraseProblems(title, true, g)
	if len(subject) > 0 {
		if !namesSubject(title, subject) {
			r.subject = append(r.subject, "title does not name the subject ("+strings.Join(subject, " | ")+")")
		}
		if len(b.Objectives) == 0 || !namesSubject(b.Objectives[0], subject) {
			r.subject = append(r.subject, "first objective does not name the subject ("+strings.Join(subject, " | ")+")")
		}
	}
	for _, o := range b.Objectives {
		r.checked++
		p := phraseProblems(o, false, g)
		if second.MatchString(o) {
			p = append(p, "an objective in the second person")
		}
		if len(p) > 0 {
			r.sentences[o] = p
		}
	}
	seen := map[string]bool{}
	for _, list := range [][]string{b.PreInterviewQuestions, b.VerbatimQuestions} {
		for _, q := range list {
			k := strings.Join(strings.FieldsFunc(strings.ToLower(q), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }), " ")
			if seen[k] {
				r.questions[q] = append(r.questions[q], "asked twice")
			}
			seen[k] = true
			if r.researcher[q] {
				continue
			}
			r.checked++
			if p := phraseProblems(q, false, g); len(p) > 0 {
				r.sentences[q] = p
			}
			if p := questionProblems(q); len(p) > 0 {
				r.questions[q] = append(r.questions[q], p...)
			}
		}
	}
	return r
}

// namesSubject reports whether s names one of subject's alternatives: every word of
// one of them, compared by stem.
func namesSubject(s string, subject []string) bool {
	have := map[string]bool{}
	for _, w := range checkWords(s) {
		have[english.Stem(w, false)] = true
	}
	for _, alt := range subject {
		all := true
		for _, w := range checkWords(alt) {
			all = all && have[english.Stem(w, false)]
		}
		if all {
			return true
		}
	}
	return false
}

func checkWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '\''
	})
}

var (
	second  = regexp.MustCompile(`(?i)\b(?:you|your|yours|yourself|yourselves)\b`)
	third   = regexp.MustCompile(`(?i)\b(?:they|them|their|theirs|themselves)\b`)
	hedged  = regexp.MustCompile(`(?i)\bif (?:anything|any|anyone|anywhere|ever|at all)\b`)
	vague   = regexp.MustCompile(`(?i)\b(?:about|with) this\s*[?,]`)
	judging = regexp.MustCompile(`(?i)\b(?:most|least) (?:frustrating|annoying|difficult|confusing|painful|stressful|useful|valuable|helpful|enjoyable)\b|\b(?:biggest|worst|best)\b`)
)

// checkTags tags s for checking. Title Case hides parts of speech (each capitalised word
// reads as a proper noun), so a title is tagged in lower case, as is a sentence's first
// word; words with capitals inside or all capitals ("iOS", "CRM") are kept.
func checkTags(s string, title bool) []token {
	w := strings.Fields(s)
	for i, x := range w {
		if (title || i == 0) && len(x) > 1 && strings.IndexFunc(x[1:], unicode.IsUpper) < 0 {
			w[i] = strings.ToLower(x)
		}
	}
	return tagText(strings.Join(w, " "))
}

// Parts of speech as the checks group them.
var (
	verbTags     = map[string]bool{"VB": true, "VBD": true, "VBN": true, "VBP": true, "VBZ": true, "MD": true}
	nounTags     = map[string]bool{"NN": true, "NNS": true, "NNP": true, "NNPS": true, "PRP": true, "CD": true}
	modifierTags = map[string]bool{"JJ": true, "JJR": true, "JJS": true}
	// particles end a phrasal verb ("sign up", "drop out") and may end a phrase.
	particles = map[string]bool{"up": true, "out": true, "off": true, "in": true, "on": true, "over": true, "back": true, "down": true, "away": true, "through": true, "around": true, "along": true, "ahead": true, "behind": true, "before": true, "after": true, "together": true, "apart": true}
	// linking verbs take an adjective as their complement: "feel safe".
	linking = map[string]bool{"be": true, "is": true, "are": true, "was": true, "were": true, "been": true, "being": true, "am": true, "feel": true, "feels": true, "felt": true, "seem": true, "seems": true, "look": true, "looks": true, "become": true, "becomes": true, "get": true, "gets": true, "got": true, "stay": true, "stays": true, "remain": true, "remains": true, "sound": true, "sounds": true, "make": true, "makes": true, "find": true, "keep": true, "appear": true, "go": true, "goes": true}
	// adverbial words are tagged as adjectives but end a phrase as adverbs: "look for
	// first", "do better", "recycle more".
	adverbial  = map[string]bool{"first": true, "last": true, "more": true, "less": true, "better": true, "worse": true, "most": true, "least": true, "together": true, "alone": true, "online": true, "early": true, "late": true, "long": true, "enough": true, "abroad": true, "overseas": true, "correctly": true}
	groupWords = map[string]bool{"people": true, "persons": true, "staff": true}
)

func isPunct(t token) bool {
	return t.text != "" && strings.IndexFunc(t.text, unicode.IsLetter) < 0 && strings.IndexFunc(t.text, unicode.IsDigit) < 0
}

// isBoundary reports whether t ends a phrase: a comma, colon, semicolon, bracket or stop.
func isBoundary(t token) bool {
	return isPunct(t) && strings.ContainsAny(t.text, ",;:.?!()")
}

// phraseProblems finds grammatical breakage in one title, objective or question.
func phraseProblems(s string, title bool, g guidanceWords) []string {
	var out []string
	if strings.TrimSpace(s) == "" {
		return []string{"empty"}
	}
	toks := checkTags(s, title)
	toks = dropHedges(toks)
	low := make([]string, len(toks))
	for i, t := range toks {
		low[i] = t.low
	}
	hasWh := false
	for i, t := range toks {
		if t.tag == "WP" || t.tag == "WRB" || t.tag == "WDT" {
			hasWh = true
		}
		last := i+1 == len(toks) || isBoundary(toks[i+1])
		if isPunct(t) {
			continue
		}
		final := last && (i+1 == len(toks) || i+2 == len(toks))
		if last {
			if p := endProblem(toks, i, hasWh, final); p != "" {
				out = append(out, p)
			}
		}
		// wherever the phrase leaves the guidance's words, the guidance must not go on
		// with what completes them
		next := token{}
		if i+1 < len(toks) {
			next = toks[i+1]
			if verbish(toks, i+1) {
				next.tag = "VB"
			}
		}
		if p := g.cutAt(low[:i+1], next, openClause(toks[:i+1])); p != "" {
			out = append(out, p)
		}
		if i+1 < len(toks) {
			if p := clash(t, toks[i+1], hasWh); p != "" {
				out = append(out, p)
			}
		}
		if i+2 < len(toks) && (t.low == "do" || t.low == "does" || t.low == "did") && toks[i+1].low == "you" {
			if n := toks[i+2]; !verbTags[n.tag] && n.tag != "RB" && n.tag != "NN" && n.tag != "JJ" || n.tag == "JJ" && !checkVerbCapable(n.low) {
				out = append(out, "no verb after "+t.text+" you: "+n.text)
			}
		}
		if i+2 < len(toks) && t.tag == "TO" && (toks[i+1].tag == "NNS" || toks[i+1].tag == "NN") && (toks[i+2].tag == "VBP" || toks[i+2].tag == "VB") && toks[i+1].low != "help" {
			out = append(out, "a clause after to: "+t.text+" "+toks[i+1].text+" "+toks[i+2].text)
		}
		if i+2 < len(toks) && t.low == "you" && verbish(toks, i+1) && toks[i+2].low == "you" && !youTwice[toks[i+1].low] && !(i+3 < len(toks) && verbish(toks, i+3)) {
			out = append(out, "you "+toks[i+1].text+" you")
		}
		if i+1 < len(toks) && t.low == "between" && betweenOne(toks[i+1:]) {
			out = append(out, "between one thing")
		}
		if i > 0 && i+1 < len(toks) && (modifierTags[t.tag] || t.tag == "VBN") && toks[i+1].low == "you" && nounTags[toks[i-1].tag] {
			out = append(out, "a modifier before you: "+t.text+" you")
		}
	}
	if p := g.bareVerbEnd(toks); p != "" {
		out = append(out, p)
	}
	if p := verblessClause(toks, title); p != "" {
		out = append(out, p)
	}
	if second.MatchString(s) && third.MatchString(s) {
		out = append(out, "mixes the second person with they/their")
	}
	if p := thirdPersonSubject(toks); p != "" && second.MatchString(s) {
		out = append(out, p)
	}
	return out
}

// dropHedges removes ", if anything," and its kin, which stand apart from the clause
// around them ("what, if anything, you use").
func dropHedges(toks []token) []token {
	var out []token
	for i := 0; i < len(toks); i++ {
		if i+3 < len(toks) && toks[i].text == "," && toks[i+1].low == "if" && toks[i+3].text == "," {
			i += 3
			continue
		}
		if i+4 < len(toks) && toks[i].text == "," && toks[i+1].low == "if" && toks[i+2].low == "at" && toks[i+4].text == "," {
			i += 4
			continue
		}
		out = append(out, toks[i])
	}
	return out
}

// endProblem says what is wrong with a phrase ending at toks[i]; final marks the
// sentence's end.
func endProblem(toks []token, i int, hasWh, final bool) string {
	t := toks[i]
	switch t.tag {
	case "TO":
		if !hasWh {
			return "a phrase ends on " + t.text
		}
	case "DT", "PDT", "CC", "PRP$", "MD", "POS":
		if t.tag == "DT" && (t.low == "this" || t.low == "that" || t.low == "these" || t.low == "those" || t.low == "all" || t.low == "both" || t.low == "either" || t.low == "neither" || t.low == "any") {
			return ""
		}
		return "a phrase ends on " + t.text
	case "IN":
		if particles[t.low] || (hasWh && t.low != "of") {
			return ""
		}
		return "a phrase ends on the preposition " + t.text
	case "WP", "WRB", "WDT":
		if final && i > 0 {
			return "a phrase ends on " + t.text
		}
	}
	if modifierTags[t.tag] && i > 0 && !adverbial[t.low] && !checkNounCapable(t.low) {
		p := toks[i-1]
		switch {
		case p.tag == "DT" && (p.low == "a" || p.low == "an" || p.low == "the"), p.tag == "PRP$", p.tag == "POS", p.tag == "CC", p.tag == "IN" && !particles[p.low] && p.low != "than":
			return "a modifier without its noun: " + p.text + " " + t.text
		case strings.HasPrefix(p.tag, "VB") && !linking[p.low]:
			return "a modifier without its noun: " + p.text + " " + t.text
		}
	}
	return ""
}

var nounMemo sync.Map

// checkNounCapable reports whether an adjective can also be a noun ("a flat"): the tagger
// reads it as one where only a noun fits, "the flat is".
func checkNounCapable(w string) bool {
	if v, ok := nounMemo.Load(w); ok {
		return v.(bool)
	}
	toks := tagText("the " + w + " is")
	ok := len(toks) == 3 && strings.HasPrefix(toks[1].tag, "NN")
	nounMemo.Store(w, ok)
	return ok
}

// clash says what is wrong when a and b stand side by side; stranded says a
// wh-word before them may have left a preposition behind ("what they run into and").
func clash(a, b token, stranded bool) string {
	article := a.low == "a" || a.low == "an" || a.low == "the"
	switch {
	case (a.tag == "IN" && !particles[a.low] && !stranded || article || a.tag == "PRP$" || a.tag == "TO") && b.tag == "CC":
		return "a phrase breaks off after " + a.text
	case a.tag == "CC" && (b.tag == "CC" || b.tag == "IN" && b.low == "of"):
		return "a phrase breaks off after " + a.text
	case a.tag == "IN" && !particles[a.low] && a.low != "because" && a.low != "instead" && b.tag == "IN" && b.low != "of" && !stranded:
		return "two prepositions: " + a.text + " " + b.text
	case a.tag == "TO" && b.tag == "IN" && b.low != "about" && b.low != "at":
		return "a preposition after to: " + b.text
	case article && (b.tag == "DT" || b.tag == "IN" || b.tag == "TO" || b.tag == "MD" || b.tag == "PRP$" || b.tag == "PRP"):
		return "an article before " + b.text
	case a.tag == "PRP$" && (b.tag == "IN" || b.tag == "TO" || b.tag == "DT" || b.tag == "MD" || b.tag == "CC" || b.tag == "PRP$"):
		return "a possessive before " + b.text
	}
	return ""
}

// verblessClause reports a wh-clause with no verb ("why owners of small bakeries"), or
// a sentence with none at all. A title may be a noun phrase, but not a cut clause.
func verblessClause(toks []token, title bool) string {
	anyVerb := false
	for j := range toks {
		anyVerb = anyVerb || verbish(toks, j)
	}
	if !anyVerb && !title && len(toks) > 2 {
		return "no verb"
	}
	for i, t := range toks {
		wh := t.tag == "WRB" || t.tag == "WP" || t.low == "whether"
		if !wh || i+1 >= len(toks) || isBoundary(toks[i+1]) {
			continue
		}
		verb := false
		for j := i + 1; j < len(toks) && !isBoundary(toks[j]); j++ {
			if verbish(toks, j) || nounVerb(toks, j) {
				verb = true
				break
			}
		}
		if !verb {
			return "a clause without a verb after " + t.text
		}
	}
	return ""
}

// betweenOne reports whether what follows "between" names a single thing: no plural
// and no "and" before the phrase ends ("deciding between cycling?").
func betweenOne(toks []token) bool {
	for _, t := range toks {
		if isBoundary(t) {
			break
		}
		if t.tag == "NNS" || t.tag == "NNPS" || t.low == "and" || t.low == "or" {
			return false
		}
	}
	return true
}

// youTwice are verbs "you" may be the subject and object of: "you tell you" is not one.
var youTwice = map[string]bool{"make": true, "let": true, "help": true, "get": true}

// indefinite pronouns take a verb in -s: "something breaks".
var indefinite = map[string]bool{"something": true, "anything": true, "nothing": true, "everything": true, "someone": true, "anyone": true, "everyone": true, "it": true}

// subjectPronouns are the personal pronouns a verb follows.
var subjectPronouns = map[string]bool{"i": true, "you": true, "we": true, "they": true, "he": true, "she": true, "it": true}

// verbish reports whether toks[j] is a verb: tagged as one, or standing where the verb
// of a clause stands, after a subject pronoun or a plural noun ("you book", "farmers
// plant"), which the tagger's dictionary reads as a noun whatever the context.
func verbish(toks []token, j int) bool {
	t := toks[j]
	if verbTags[t.tag] {
		return true
	}
	if j == 0 || !(t.tag == "NN" || t.tag == "VBG" || t.tag == "NNS" && (toks[j-1].tag == "NN" || toks[j-1].tag == "TO" || toks[j-1].tag == "WP" || indefinite[toks[j-1].low]) || t.tag == "RB" || t.tag == "JJ") {
		return false
	}
	p := toks[j-1]
	if p.tag == "PRP" && subjectPronouns[p.low] || p.tag == "NNS" || p.tag == "TO" {
		return true
	}
	if (p.tag == "WRB" || p.low == "while") && strings.HasSuffix(t.low, "ing") {
		return true // "when voting in person"
	}
	if t.tag == "NNS" && (indefinite[p.low] || p.tag == "WP") {
		return true // "when something breaks", "who signs off"
	}
	// after a singular noun, a word followed by what a verb takes: "a new job feels like"
	if p.tag != "NN" || j+1 >= len(toks) {
		return false
	}
	n := toks[j+1]
	return n.tag == "DT" || n.tag == "PRP$" || n.tag == "IN" || n.tag == "TO" || n.tag == "WDT" || n.tag == "WRB"
}

// nounVerb reports whether a word tagged as a noun stands between a noun and what a
// verb takes ("tenants in social housing report repairs", "nurses hand over
// patients"): the tagger's dictionary reads such verbs as nouns.
func nounVerb(toks []token, j int) bool {
	if p := toks[j-1]; j == 0 || j+1 >= len(toks) || toks[j].tag != "NN" || !nounTags[p.tag] && !(p.tag == "JJ" && strings.HasSuffix(p.low, "s")) {
		return false
	}
	n := toks[j+1]
	return n.tag == "NNS" || n.tag == "DT" || n.tag == "PRP$" || n.tag == "RP" || particles[n.low] && n.tag == "IN"
}

// thirdPersonSubject reports a wh-clause whose subject is a group of people in a sentence
// put to the participant: "how people with diabetes decide when to replace your sensor".
func thirdPersonSubject(toks []token) string {
	for i, t := range toks {
		if t.tag != "WRB" && t.tag != "WP" && t.low != "whether" {
			continue
		}
		for j := i + 1; j < len(toks) && j <= i+7; j++ {
			u := toks[j]
			if u.tag == "PRP" || u.tag == "PRP$" || verbTags[u.tag] || u.tag == "RB" || isBoundary(u) || u.tag == "WDT" || u.tag == "TO" {
				break
			}
			if (u.tag == "NNS" || u.tag == "NN") && (isGroupNoun(u.low) || groupWords[u.low]) {
				for _, v := range toks[j+1:] {
					if second.MatchString(v.low) {
						return "a clause about " + u.text + " with " + v.text + " in it"
					}
				}
				break
			}
		}
	}
	return ""
}

// questionProblems reports a closed or leading question.
func questionProblems(q string) []string {
	var out []string
	w := checkWords(q)
	if len(w) == 0 {
		return []string{"empty"}
	}
	closed := map[string]bool{"do": true, "does": true, "did": true, "is": true, "are": true, "was": true, "were": true, "have": true, "has": true, "had": true, "can": true, "could": true, "will": true, "would": true, "should": true, "shall": true, "may": true, "might": true, "must": true, "am": true}
	request := map[string]bool{"tell": true, "walk": true, "describe": true, "share": true, "talk": true, "explain": true, "show": true, "give": true}
	if closed[w[0]] && !isWrapUp(q) {
		open := len(w) > 2 && w[1] == "you" && (request[w[2]] || len(w) > 3 && w[2] == "please" && request[w[3]])
		if !open {
			out = append(out, "a yes/no question")
		}
	}
	if vague.MatchString(q) {
		out = append(out, "asks about \"this\" with nothing it stands for")
	}
	if isLeading(q) || judging.MatchString(q) && !hedged.MatchString(q) {
		out = append(out, "a leading question")
	}
	return out
}

// guidanceWords is the guidance as tagged words, for finding where a generated phrase
// was cut from it.
type guidanceWords struct{ toks []token }

func newGuidanceWords(guidance string) guidanceWords {
	var g guidanceWords
	for _, s := range splitSentences(withoutBrackets(guidance)) {
		w := strings.Fields(s)
		if len(w) > 0 && len(w[0]) > 1 && strings.IndexFunc(w[0][1:], unicode.IsUpper) < 0 {
			w[0] = strings.ToLower(w[0])
		}
		g.toks = append(g.toks, tagText(strings.Join(w, " "))...)
		g.toks = append(g.toks, token{text: ".", low: ".", tag: "."})
	}
	return g
}

// withoutBrackets drops bracketed asides: "(under 10 staff)".
func withoutBrackets(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sameKind reports whether the phrase goes on, where it leaves the guidance, with a
// word of the kind the guidance has there (its own verb, its own noun phrase): a
// substitution, not a cut.
func sameKind(guidanceNext, next token) bool {
	if next.low == "" {
		return false
	}
	gt := guidanceNext.tag
	np := func(tag string) bool {
		return nounTags[tag] || tag == "DT" || tag == "PRP$" || modifierTags[tag] || tag == "CD"
	}
	return verbTags[gt] && verbTags[next.tag] || np(gt) && np(next.tag)
}

// samePerson maps a pronoun to one spelling for every person, so "your glucose sensor"
// matches the guidance's "their glucose sensor".
func samePerson(w string) string {
	switch w {
	case "their", "your", "my", "our":
		return "your"
	case "they", "them", "you", "we", "us":
		return "you"
	case "themselves", "yourself", "ourselves":
		return "yourself"
	}
	return w
}

// checkVerbCapable reports whether an adjective can also be a verb ("you open").
func checkVerbCapable(w string) bool {
	toks := tagText("they " + w + " it")
	return len(toks) == 3 && verbTags[toks[1].tag]
}

// openClause reports whether the phrase ends inside a wh-clause that has no verb yet.
func openClause(toks []token) bool {
	open := false
	for j, t := range toks {
		switch {
		case t.tag == "WRB" || t.tag == "WP" || t.low == "whether":
			open = true
		case open && verbish(toks, j):
			open = false
		}
	}
	return open
}

// cutAt reports a phrase whose last three or more words stand in the guidance where the
// guidance goes on with what completes them: a noun, verb, article, wh-word or an "of".
func (g guidanceWords) cutAt(words []string, next token, clause bool) string {
	var tail []string
	for i := len(words) - 1; i >= 0 && len(tail) < 8; i-- {
		if strings.IndexFunc(words[i], unicode.IsLetter) < 0 && strings.IndexFunc(words[i], unicode.IsDigit) < 0 {
			break
		}
		tail = append([]string{words[i]}, tail...)
	}
	if len(tail) < 3 {
		return ""
	}
	for k := len(tail); k >= 3; k-- {
		run, found := tail[len(tail)-k:], false
		for i := 0; i+k < len(g.toks); i++ {
			match := true
			for j, w := range run {
				if samePerson(g.toks[i+j].low) != samePerson(w) {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			found = true
			if next.low != "" && samePerson(g.toks[i+k].low) == samePerson(next.low) {
				continue // the phrase goes on as the guidance does
			}
			whSubject := false
			for j := i; j < i+k; j++ {
				whSubject = whSubject || g.toks[j].tag == "WRB" || g.toks[j].tag == "WP" || g.toks[j].low == "whether"
			}
			if p := g.goesOn(i, k, clause, whSubject); p.text != "" && !sameKind(p, next) {
				return "cut where the guidance goes on: …" + strings.Join(run, " ") + " / " + p.text
			}
		}
		if found {
			break // only the longest run that ends the phrase is read
		}
	}
	return ""
}

// temporal words stand as adverbs though tagged as nouns: "track performance today".
var temporal = map[string]bool{"today": true, "now": true, "yesterday": true, "tomorrow": true, "tonight": true, "first": true, "last": true, "again": true, "instead": true}

// goesOn returns the word with which the guidance completes its k words from i, or an
// empty token when what follows them is punctuation or an adjunct (a preposition other
// than "of", an adverb, a conjunction, a clause of time).
func (g guidanceWords) goesOn(i, k int, clause, whSubject bool) token {
	at := func(j int) token {
		if j < len(g.toks) {
			return g.toks[j]
		}
		return token{text: ".", low: ".", tag: "."}
	}
	last, next, after := at(i+k-1), at(i+k), at(i+k+1)
	cut := false
	switch {
	case isPunct(next) || temporal[next.low]:
	case next.tag == "DT", next.tag == "PRP$", next.tag == "POS", next.tag == "CD", next.tag == "IN" && next.low == "of":
		cut = true
	case modifierTags[next.tag]:
		cut = strings.HasPrefix(after.tag, "NN") || modifierTags[after.tag]
	case next.tag == "TO":
		// "struggle / to connect", "with 20 / to 200"; after a noun phrase, only inside
		// a wh-clause ("what motivates players / to make"), since a complete group
		// ("players of puzzle games") may stand without what the verb it followed takes
		cut = after.tag == "CD" || (verbTags[after.tag] || after.tag == "NN" && !strings.HasPrefix(at(i+k+2).tag, "NN")) && (!nounTags[last.tag] || clause || whSubject)
	case next.tag == "WDT", next.tag == "WP", next.tag == "WRB", next.low == "whether":
		// after a verb a wh-word opens its object ("decide which crops"); "when" and
		// "where" do so only before "to" ("decide when to").
		verb := verbTags[last.tag] || k > 1 && verbish(g.toks, i+k-1)
		cut = verb && (next.low != "when" && next.low != "where" || after.tag == "TO")
	case verbTags[next.tag] || verbish(g.toks, i+k):
		// a verb after a noun phrase is its clause's verb: a cut where the phrase is a
		// clause still waiting for it ("why owners of small bakeries") or a wh-clause
		// whose subject it ends ("how team leads in retail chains / make")
		cut = clause || whSubject && (next.tag == "VBP" || next.tag == "VBD" || next.tag == "MD")
	case nounTags[next.tag] && next.tag != "PRP":
		// a noun goes on a phrase that a noun can follow ("a monthly / budget"), not one
		// an adverb ended ("people living alone / prepare")
		cut = last.tag != "RB" && last.tag != "RP"
	case next.tag == "CC":
		// "sort / and store recycling": a second verb shares the object the phrase lost
		v := at(i + k + 1)
		cut = (verbTags[v.tag] || v.tag == "NN") && (strings.HasPrefix(at(i+k+2).tag, "NN") || at(i+k+2).tag == "DT" || at(i+k+2).tag == "PRP$" || at(i+k+2).tag == "VBG") && (verbTags[last.tag] || verbish(g.toks, i+k-1))
	}
	if cut {
		return next
	}
	return token{}
}

// bareVerbEnd reports a phrase that ends on a verb the guidance never leaves without
// what completes it ("How often do you keep?" from "keep in touch").
func (g guidanceWords) bareVerbEnd(toks []token) string {
	i := len(toks) - 1
	for i >= 0 && isPunct(toks[i]) {
		i--
	}
	if i < 1 || !verbish(toks, i) || toks[i].tag == "VBN" || toks[i].tag == "VBD" || linking[toks[i].low] || toks[i].low == "do" || toks[i].low == "have" {
		return ""
	}
	w, seen := toks[i].low, false
	for j := 0; j+1 < len(g.toks); j++ {
		if g.toks[j].low != w {
			continue
		}
		if t := g.toks[j].tag; t != "VB" && t != "VBP" && !(t == "NN" && j > 0 && (g.toks[j-1].tag == "PRP" || g.toks[j-1].tag == "NNS")) {
			return "" // the guidance has the word as something other than a verb
		}
		seen = true
		n := g.toks[j+1]
		if isPunct(n) || n.tag == "CC" || n.tag == "RB" || n.tag == "WRB" || n.tag == "IN" && !particles[n.low] {
			return "" // the guidance itself ends a phrase on it
		}
	}
	if !seen {
		return ""
	}
	return "a clause cut after the bare verb " + toks[i].text
}
