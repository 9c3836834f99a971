package moderator

import (
	"strings"
)

// How the built-in engine reads the phrases of tagged guidance: noun phrases (a group of
// people, what they act on), verb phrases (what they do, and the object and complement
// that complete it) and indirect questions ("why owners of small bakeries abandon
// onboarding"), each as a span of tokens that is a whole phrase. The brief is written
// only from whole phrases, so nothing it says stops mid-phrase.
//
// The tagger is right about most words but reads some verbs as nouns when they are
// also common nouns ("patients book appointments", "farmers plant crops"). Where a verb
// must stand (after a subject) the chunker takes the word there as the verb; where a
// plural noun ends a subject, a next word that is not itself plural is its verb, since
// English compounds put the plural last ("sales managers", but "bakeries abandon").

// span is the tokens [from, to) of a sentence.
type span struct{ from, to int }

func (s span) empty() bool { return s.to <= s.from }

// Penn Treebank tags as the chunker groups them.
func isNoun(tag string) bool    { return tag == "NN" || tag == "NNS" || tag == "NNP" || tag == "NNPS" }
func isAdj(tag string) bool     { return tag == "JJ" || tag == "JJR" || tag == "JJS" }
func isVerbTag(tag string) bool { return strings.HasPrefix(tag, "VB") || tag == "MD" }

// Words the chunker reads by their role rather than their tag.
var (
	// builtinAdverbs may stand between a subject and its verb: "customers often cancel".
	builtinAdverbs = wordSet("often", "usually", "still", "actually", "really", "rarely", "always", "never", "sometimes", "currently", "regularly", "typically", "also", "just", "even", "ever", "already", "not", "n't", "generally", "frequently", "mostly", "first", "eventually", "finally", "quickly", "easily")
	// builtinParticles complete a phrasal verb: "sign up", "drop out", "hand off".
	builtinParticles = wordSet("up", "out", "off", "down", "back", "away", "over", "in", "on", "around", "through")
	// builtinPostPreps attach a phrase to a group of people: "owners of small bakeries",
	// "people with diabetes", "adults over 70".
	builtinPostPreps = wordSet("of", "with", "in", "at", "from", "on", "under", "over", "without", "across", "aged", "between", "outside", "inside", "near", "within", "like", "for")
	// builtinQuantity words count a group rather than describe it: "8 freelancers".
	builtinQuantity = wordSet("a", "few", "several", "many", "some", "all", "both", "most", "least", "at", "fewer", "more", "than", "less", "about", "around", "roughly", "approximately", "up", "to", "dozen", "handful", "couple", "of", "over", "under", "between", "and")
	// builtinSubjectPronouns can be the subject of a clause about participants.
	builtinSubjectPronouns = wordSet("they", "we", "you", "i", "people", "everyone", "someone", "he", "she", "it")
)

// chunk is a tagged sentence being read.
type chunk struct{ t []token }

func (c chunk) at(i int) token {
	if i >= 0 && i < len(c.t) {
		return c.t[i]
	}
	return token{}
}

// boundary reports whether t ends a phrase: punctuation other than a hyphen or an
// apostrophe's clitic.
func (t token) boundary() bool {
	if t.text == "" {
		return true
	}
	switch t.text {
	case ",", ";", ":", ".", "?", "!", "(", ")", "\"", "“", "”", "--", "–", "—", "[", "]", "...", "…":
		return true
	}
	return false
}

// wh reports whether t opens an indirect question.
func (t token) wh() bool {
	return t.tag == "WRB" || t.tag == "WP" || t.tag == "WDT" || t.tag == "WP$" || t.low == "whether"
}

// clauseEnd returns where the clause that starts at i ends: at punctuation, at a
// conjunction that opens another clause ("and what", "and learn", "so that",
// "because"), or at the end of the sentence.
func (c chunk) clauseEnd(i int) int {
	for j := i; j < len(c.t); j++ {
		t := c.t[j]
		if t.boundary() {
			return j
		}
		switch t.low {
		case "because", "although", "though", "unless":
			return j
		case "so":
			if n := c.at(j + 1).low; n == "that" || n == "we" || n == "i" || n == "they" || n == "our" {
				return j
			}
		case "in":
			if c.at(j+1).low == "order" && c.at(j+2).low == "to" {
				return j
			}
		case "as":
			if c.at(j+1).low == "well" && c.at(j+2).low == "as" {
				return j
			}
		case "and", "but", "or", "then":
			n := c.at(j + 1)
			if n.low == "then" || n.low == "also" {
				n = c.at(j + 2)
			}
			if n.wh() || intentVerb(n.low) != "" || n.low == "to" && intentVerb(c.at(j+2).low) != "" || n.low == "see" ||
				(n.tag == "PRP" && builtinSubjectPronouns.has(n.low) && n.low != "you") {
				return j
			}
		}
	}
	return len(c.t)
}

// nounPhrase reads the noun phrase at i and returns its span and head (the last noun of
// its core), or ok false. Post-modifiers ("of small bakeries", "who signed up last
// month") are taken when people is set (a group of people is named by them) and only
// "of" otherwise (what follows an object is the verb's, not the object's). Plural heads
// end the phrase before a word that is not plural.
func (c chunk) nounPhrase(i, limit int, people bool) (sp span, head int, ok bool) {
	return c.nounPhraseAs(i, limit, people, true)
}

// nounPhraseAs is nounPhrase; clauses says whether a clause with its own subject may
// describe a thing ("items they bought"), which it may not after a wh-word ("what
// information they trust").
func (c chunk) nounPhraseAs(i, limit int, people, clauses bool) (sp span, head int, ok bool) {
	j := i
	if j >= limit {
		return span{}, -1, false
	}
	if t := c.at(j); t.tag == "PRP" {
		if builtinSubjectPronouns.has(t.low) || t.low == "them" {
			return span{i, j + 1}, j, true
		}
		return span{}, -1, false
	}
	// "some of them", "many of them": part of a group named before
	if builtinQuantity.has(c.at(j).low) && c.at(j+1).low == "of" && c.at(j+2).low == "them" {
		return span{i, j + 3}, j + 2, true
	}
	if c.at(j).tag == "PDT" {
		j++
	}
	// counts before a group are not how it is named: "8 freelancers", "at least five
	// clients", "fewer than 50 hectares" (a count alone is kept: "over 70")
	for k := j; k < limit && k < j+5; k++ {
		t := c.at(k)
		if t.tag == "CD" {
			if n := c.at(k + 1); isNoun(n.tag) || isAdj(n.tag) {
				if people && i == j {
					i = k + 1
				}
				j = k + 1
				break
			}
			continue
		}
		if !builtinQuantity.has(t.low) || t.low == "a" && c.at(k+1).tag != "CD" && !builtinQuantity.has(c.at(k+1).low) {
			break
		}
	}
	if t := c.at(j); t.tag == "DT" || t.tag == "PRP$" {
		j++
	}
	head = -1
core:
	for ; j < limit; j++ {
		t := c.at(j)
		switch {
		case t.tag == "POS" && head == j-1:
			// "the app's onboarding": the possessive goes on to its noun
		case isNoun(t.tag) || t.tag == "CD" && head < 0 && j+1 < limit && isNoun(c.at(j+1).tag):
			head = j
			if t.tag == "NNS" || t.tag == "NNPS" {
				n := c.at(j + 1)
				plural := (n.tag == "NNS" || n.tag == "NNPS" || n.tag == "VBZ" || n.tag == "VBP" || n.tag == "NN") && pluralForm(n.low)
				if j+1 >= limit || !plural && n.tag != "POS" {
					j++
					break core
				}
			}
		case people && t.tag == "VBZ" && (head < 0 && j > i || head == j-1) && pluralForm(t.low) && (c.at(j+1).tag == "IN" || c.at(j+1).tag == "VBP" || c.at(j+1).tag == "VB" || c.at(j+1).tag == "MD"):
			// "team leads in retail chains make": a plural noun the tagger read as a verb
			// (if no verb follows, the clause is read again with it as the verb)
			head = j
		case isAdj(t.tag) || t.tag == "VBN" || t.tag == "CD" || t.tag == "HYPH" || t.tag == "VBG" && c.nounAfter(j+1, limit):
		case t.tag == "VBG" && head < 0 && (!people || c.at(j+1).low == "of"):
			head = j // "onboarding", "checkout", "budgeting" read as nouns
		case (t.tag == "VB" || t.tag == "VBP") && head < 0 && j+1 < limit && (c.at(j+1).tag == "NN" || c.at(j+1).tag == "NNS") && (!people || namesPeople(c, j+1)):
			// "handle leave requests": a verb's form read before a noun is its modifier
		case t.tag == "CC" && head == j-1 && (people && c.continuesGroup(j+1, limit) || !people && c.continuesThing(j+1, limit)):
			// "patients and their carers", "leave requests and approvals"
		case (t.tag == "DT" || t.tag == "PRP$") && c.at(j-1).tag == "CC":
		default:
			break core
		}
		if builtinTemporal.has(c.at(j + 1).low) {
			if head == j {
				j++
			}
			break // "track performance today": "today" says when, not what
		}
	}
	if head < 0 {
		// an adjective the tagger prefers that can be a noun: "a flat"
		if k := j - 1; k >= i && isAdj(c.at(k).tag) && nounCapable(c.at(k).low) {
			head = k
		} else {
			return span{}, -1, false
		}
	}
	end := head + 1
	// post-modifiers
	for end < limit {
		t := c.at(end)
		if t.low == "of" || people && (builtinPostPreps.has(t.low) || t.low == "to" && (c.at(end+1).tag == "DT" || c.at(end+1).tag == "PRP$")) {
			if sub, _, ok := c.nounPhrase(end+1, limit, people); ok {
				end = sub.to
				continue
			}
			if people && c.at(end+1).tag == "CD" { // "adults over 70"
				end += 2
				continue
			}
			break
		}
		if !people {
			// "items they bought": a clause with its own subject describes the thing
			if p := c.at(end); clauses && p.tag == "PRP" && builtinSubjectPronouns.has(p.low) && p.low != "it" && c.verbAt(end+1, false) {
				if vp, ok := c.verbPhrase(end+1, limit, true); ok && vp.core > end+1 {
					end = vp.core
				}
			}
			break
		}
		switch {
		case t.low == "who" || t.low == "that" && t.tag == "WDT":
			// "couples who share finances": the relative clause's core; what follows
			// it may be the main verb
			if vp, ok := c.verbPhrase(end+1, limit, true); ok {
				end = vp.core
				continue
			}
		case (t.tag == "VBG" || t.tag == "VBN") && end == head+1 && namesPeople(c, head):
			// "people claiming benefits", "customers affected by the outage"
			if vp, ok := c.verbPhrase(end, limit, true); ok {
				end = vp.core
				continue
			}
		case t.tag == "CC" && c.continuesGroup(end+1, limit):
			// "patients and their carers"
			if sub, _, ok := c.nounPhrase(end+1, limit, true); ok {
				end = sub.to
				continue
			}
		}
		break
	}
	return span{i, end}, head, true
}

// pluralForm reports whether w looks like a plural noun: "reps", "managers", but not
// "process", "status" or "analysis". A present-tense verb after a plural subject has
// no -s, so such a word continues a compound ("sales reps") rather than being its verb.
func pluralForm(w string) bool {
	return len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// builtinTemporal words say when, though the tagger reads them as nouns.
var builtinTemporal = wordSet("today", "tonight", "tomorrow", "yesterday", "now", "nowadays")

// continuesThing reports whether the words after a conjunction at a noun's head go on
// with more things ("requests and approvals"), not a verb ("invoices and chase late
// payments").
func (c chunk) continuesThing(i, limit int) bool {
	if i >= limit || c.coordinatedVerb(i, limit, false) {
		return false
	}
	for k := i; k < limit && k < i+4; k++ {
		t := c.at(k)
		if isNoun(t.tag) {
			return !namesPeople(c, k)
		}
		if t.tag != "DT" && t.tag != "PRP$" && !isAdj(t.tag) && t.tag != "VBG" {
			return false
		}
	}
	return false
}

// nounAfter reports whether a noun follows at i, after any modifiers: a VBG before it
// is a modifier ("our ordering app").
func (c chunk) nounAfter(i, limit int) bool {
	for ; i < limit; i++ {
		t := c.at(i)
		if isNoun(t.tag) {
			return true
		}
		if !isAdj(t.tag) && t.tag != "VBG" && t.tag != "VBN" {
			return false
		}
	}
	return false
}

// continuesGroup reports whether the words after a conjunction at a group's head name
// more people ("and their carers"), not a verb ("and chase").
func (c chunk) continuesGroup(i, limit int) bool {
	for k := i; k < limit && k < i+4; k++ {
		t := c.at(k)
		if isNoun(t.tag) {
			return isGroupNoun(t.low) || builtinGroupNouns.has(t.low)
		}
		if t.tag != "DT" && t.tag != "PRP$" && !isAdj(t.tag) {
			return false
		}
	}
	return false
}

// verbPhrase is a predicate: the verb group, what completes it, and the rest of its clause.
type verbPhrase struct {
	start   int   // the first token: an auxiliary, adverb or the verb
	verbs   []int // the main verbs ("book and reschedule")
	obj     span  // the object noun phrase, or empty
	objPrep int   // the preposition before a prepositional object ("deal with"), or -1
	core    int   // the end of the verb group and its object or complement
	end     int   // the end of the clause
	negated bool  // "do not give"
	modal   bool  // "would switch"
	tense   string
	// inner is the verb phrase a causative or an infinitive takes ("motivates players
	// to make purchases": "make purchases"), or nil.
	inner *verbPhrase
	bare  bool // an infinitive ("to make", "makes them come"): its verbs are base forms
}

// verbPhrase reads the predicate at i. expected says a verb must stand there (it
// follows a subject), so a word the tagger read as a noun is taken as the verb.
func (c chunk) verbPhrase(i, limit int, expected bool) (verbPhrase, bool) {
	vp := verbPhrase{start: i, objPrep: -1}
	if end := c.clauseEnd(i); end < limit {
		limit = end
	}
	j := i
	for ; j < limit; j++ {
		t := c.at(j)
		switch {
		case t.tag == "MD":
			vp.modal = true
			continue
		case (t.low == "do" || t.low == "does" || t.low == "did") && (c.at(j+1).low == "not" || c.at(j+1).low == "n't"):
			vp.tense = t.low
			continue
		case t.low == "not" || t.low == "n't":
			vp.negated = true
			continue
		case builtinAdverbs.has(t.low) && t.tag != "VBP" && t.tag != "VB" && j+1 < limit && c.verbAt(j+1, true):
			continue
		}
		break
	}
	if j >= limit || !c.verbAt(j, expected) {
		return vp, false
	}
	vp.verbs = append(vp.verbs, j)
	if vp.tense == "" {
		vp.tense = c.at(j).tag
	}
	j++
	j = c.particles(j, limit)
	// coordinated verbs sharing an object: "book and reschedule appointments"
	for j+1 < limit && (c.at(j).low == "and" || c.at(j).low == "or") && c.coordinatedVerb(j+1, limit, true) {
		vp.verbs = append(vp.verbs, j+1)
		j = c.particles(j+2, limit)
	}
	j = c.complement(&vp, j, limit)
	vp.core = j
	vp.end = limit
	return vp, true
}

// verbAt reports whether a verb stands at i; expected lets a word tagged as a noun,
// adjective or adverb be one where the sentence needs a verb.
func (c chunk) verbAt(i int, expected bool) bool {
	t := c.at(i)
	if t.text == "" || t.boundary() || t.wh() {
		return false
	}
	if isVerbTag(t.tag) {
		return true
	}
	if !expected {
		return false
	}
	switch t.tag {
	case "NN", "JJ", "RB", "NNP":
		return true
	case "IN": // "customers use/IN the programme": the tagger's slip on a verb
		return !builtinPrepositions.has(t.low)
	case "NNS": // "plans", "feels": a verb after a singular subject
		n := c.at(i + 1)
		return n.tag == "DT" || n.tag == "PRP$" || n.tag == "IN" || n.tag == "TO" || n.tag == "PRP"
	}
	return false
}

// coordinatedVerb reports whether the word after "and" at i is another verb: tagged as
// one, or a bare noun that an object follows ("and chase late payments"); afterVerb
// says a verb stands before "and", so a noun object may follow ("sort and store
// recycling").
func (c chunk) coordinatedVerb(i, limit int, afterVerb bool) bool {
	t := c.at(i)
	if i >= limit || t.wh() || t.tag == "PRP" || t.tag == "DT" || t.tag == "PRP$" {
		return false
	}
	if t.tag == "VB" || t.tag == "VBP" || t.tag == "VBD" || t.tag == "VBZ" {
		return true
	}
	if t.tag != "NN" {
		return false
	}
	n := c.at(i + 1)
	return n.tag == "DT" || n.tag == "PRP$" || isAdj(n.tag) || n.tag == "IN" || n.tag == "RP" || n.tag == "TO" || (n.tag == "NN" || n.tag == "NNS" || n.tag == "VBG") && afterVerb
}

// particles skips the particles of a phrasal verb at i.
func (c chunk) particles(i, limit int) int {
	for i < limit {
		t := c.at(i)
		if t.tag == "RP" || builtinParticles.has(t.low) && t.tag != "TO" && c.particleEnds(i+1, limit) {
			i++
			continue
		}
		break
	}
	return i
}

// particleEnds reports whether what follows a word like "up" shows it to be a particle
// ("sign up for shifts", "set up controls") rather than a preposition ("up the hill").
func (c chunk) particleEnds(i, limit int) bool {
	if i >= limit {
		return true
	}
	t := c.at(i)
	if isNoun(t.tag) || t.tag == "DT" || t.tag == "PRP$" {
		// "set up controls", "roll out updates"; but "keep in touch", "turn on time"
		// read "in" and "on" as prepositions
		p := c.at(i - 1).low
		return p != "in" && p != "on"
	}
	return t.tag == "IN" || t.tag == "TO" || t.boundary() || t.tag == "CC"
}

// complement reads what completes a verb at j: an object, an indirect question, an
// infinitive or gerund, an adjective; and returns where the core of the predicate ends.
func (c chunk) complement(vp *verbPhrase, j, limit int) int {
	if j >= limit {
		return j
	}
	t := c.at(j)
	switch {
	case t.wh() || t.low == "if" && c.at(j-1).tag != "," || t.low == "that" && t.tag == "IN":
		// "decide when to replace", "choose which games to stock": the question is the object
		return limit
	case t.tag == "RB" && t.low != "not" && t.low != "n't" && (j+1 >= limit || c.at(j+1).boundary() || c.at(j+1).tag == "IN" || isVerbTag(c.at(j+1).tag) || c.at(j+1).tag == "NN"):
		// "people living alone", "go without": an adverb completes a verb without an object
		return j + 1
	case t.tag == "TO" && c.verbAt(j+1, true) && !isNoun(c.at(j+1).tag) || t.tag == "TO" && isVerbTag(c.at(j+1).tag):
		if sub, ok := c.verbPhrase(j+1, limit, true); ok {
			sub.bare = true
			vp.inner = &sub
			return sub.core
		}
		return limit
	case t.tag == "VBG" && !c.nounAfter(j+1, limit) && c.at(j+1).low != "of":
		if sub, ok := c.verbPhrase(j, limit, true); ok {
			vp.inner = &sub
			return sub.core
		}
		return limit
	case isAdj(t.tag) && !c.nounAfter(j+1, limit) && !(j+1 < limit && isNoun(c.at(j+1).tag)):
		// "feel trustworthy", "are reluctant to switch", "make sure their staff ..."
		j++
		if n := c.at(j); n.tag == "TO" || n.low == "about" || n.low == "of" || n.low == "with" || n.low == "that" || n.tag == "DT" || n.tag == "PRP$" || n.tag == "PRP" {
			return limit
		}
		return j
	}
	// a prepositional object: "deal with", "apply for", "think of", "switch between"
	if t.tag == "IN" || t.tag == "TO" {
		if builtinSubordinators.has(t.low) || builtinAdjunctPreps.has(t.low) {
			return j // "cook at home", "wait while ...": where or when, not what
		}
		if np, _, ok := c.nounPhrase(j+1, limit, false); ok && !c.subjectPronoun(np) {
			if t.low == "between" && (c.at(np.to).low == "and" || c.at(np.to).low == "or") {
				// "between cycling and taking the train": both things are the object
				k := np.to + 1
				for k < limit && !c.at(k).boundary() && !(c.at(k).tag == "IN" && c.at(k).low != "of") && !c.at(k).wh() {
					k++
				}
				np.to = k
			}
			vp.obj, vp.objPrep = np, j
			return c.afterObject(vp, np.to, limit)
		}
		if n := c.at(j + 1); j+1 >= limit || n.boundary() || n.tag == "IN" || n.tag == "CC" {
			return j + 1 // a preposition whose object the wh-word is: "what it feels like"
		}
		return j
	}
	// "couples who share finances plan": a plural noun the tagger read as a verb
	if t.tag == "VBZ" && j+1 < limit && (c.at(j+1).tag == "VBP" || c.at(j+1).tag == "VB") {
		vp.obj = span{j, j + 1}
		return j + 1
	}
	if np, _, ok := c.nounPhrase(j, limit, false); ok && !c.subjectPronoun(np) {
		vp.obj = np
		return c.afterObject(vp, np.to, limit)
	}
	return j
}

// builtinPrepositions are English prepositions and subordinators (a closed class), so
// a word the tagger read as one but is not one may be a verb.
var builtinPrepositions = wordSet("about", "above", "across", "after", "against", "along", "among", "amongst", "around", "as", "at", "before", "behind", "below", "beneath", "beside", "besides", "between", "beyond", "but", "by", "despite", "down", "during", "except", "for", "from", "in", "inside", "into", "like", "near", "of", "off", "on", "onto", "out", "outside", "over", "past", "per", "since", "than", "through", "throughout", "till", "to", "toward", "towards", "under", "underneath", "unlike", "until", "up", "upon", "via", "with", "within", "without", "whether", "while", "because", "although", "though", "if", "unless", "whereas", "once", "so", "that")

// builtinAdjunctPreps say where or when, so what follows them is not the verb's
// object: "cooking at home", "grade essays during the evening".
var builtinAdjunctPreps = wordSet("at", "in", "during", "after", "before", "near", "within", "across", "around", "throughout", "by", "via", "per", "inside", "outside", "under", "above", "below", "beyond", "since", "until", "till", "despite")

// builtinSubordinators open a clause, not a prepositional phrase: "while they wait".
var builtinSubordinators = wordSet("while", "because", "although", "though", "if", "unless", "whereas", "once", "as", "than", "so", "until", "since", "whether")

// subjectPronoun reports whether a noun phrase is a pronoun that only stands as a
// subject ("they"), so cannot be an object.
func (c chunk) subjectPronoun(sp span) bool {
	if sp.to-sp.from != 1 {
		return false
	}
	switch c.at(sp.from).low {
	case "they", "we", "i", "he", "she":
		return true
	}
	return false
}

// afterObject reads what completes a verb after its object: the verb a causative takes
// ("motivates players to make purchases", "stops them from cooking"), or a particle.
func (c chunk) afterObject(vp *verbPhrase, j, limit int) int {
	// a particle after the object: "puts them off", "send them back"
	for j < limit && (c.at(j).tag == "RP" || builtinParticles.has(c.at(j).low) && c.at(j).tag != "TO") {
		if n := c.at(j + 1); j+1 < limit && !n.boundary() && n.tag != "IN" && n.tag != "TO" && n.tag != "CC" && n.tag != "RB" {
			break
		}
		j++
	}
	t := c.at(j)
	switch {
	case t.tag == "TO" && (isVerbTag(c.at(j+1).tag) || c.verbAt(j+1, true) && c.at(j+1).tag == "NN" && !isNoun(c.at(j+2).tag)), t.low == "from" && c.at(j+1).tag == "VBG":
		if sub, ok := c.verbPhrase(j+1, limit, true); ok {
			sub.bare = t.tag == "TO"
			vp.inner = &sub
			return sub.core
		}
		return limit
	case c.causative(vp.verbs[0]) && (c.verbAt(j, false) || c.peopleSpan(vp.obj) && c.verbAt(j, true) && !c.at(j).boundary() && c.at(j).tag != "IN"):
		// "makes them switch", "makes a video call feel trustworthy"
		if sub, ok := c.verbPhrase(j, limit, true); ok {
			sub.bare = true
			vp.inner = &sub
			return sub.core
		}
	case c.at(j).low == "and" && c.coordinatedVerb(j+1, limit, false):
		// "send invoices and chase late payments": a second predicate shares the subject
		if sub, ok := c.verbPhrase(j+1, limit, true); ok {
			vp.verbs = append(vp.verbs, sub.verbs...)
			return sub.core
		}
	}
	return j
}

// builtinCausatives take an object and a bare verb: "makes them switch".
var builtinCausatives = wordSet("make", "makes", "made", "let", "lets", "help", "helps", "helped", "have", "has", "had")

func (c chunk) causative(verb int) bool { return builtinCausatives.has(c.at(verb).low) }

// peopleSpan reports whether a noun phrase names people or is a pronoun for them.
func (c chunk) peopleSpan(sp span) bool {
	if sp.empty() {
		return false
	}
	h := c.headOf(sp)
	return h >= 0 && (namesPeople(c, h) || c.at(h).low == "them" || c.at(h).low == "us" || c.at(h).low == "you")
}

// whClause is an indirect question: "why owners of small bakeries abandon onboarding",
// "what stops them from cooking", "which crops to plant".
type whClause struct {
	c       chunk
	wh      span // "why", "how often", "which tools"
	subj    span // the subject; empty when the wh-word is it or the clause is an infinitive
	whSubj  bool // "what stops them": the wh-word is the subject
	inf     bool // "which crops to plant"
	vp      verbPhrase
	pronoun string // the subject when it is a pronoun: "they", "we"
}

// readWh reads the indirect question at i, which must start with a wh-word.
func (c chunk) readWh(i int) (whClause, bool) {
	w := whClause{c: c}
	limit := c.clauseEnd(i + 1)
	t := c.at(i)
	if !t.wh() && t.low != "if" {
		return w, false
	}
	j := i + 1
	if t.low == "how" && builtinHowMods.has(c.at(j).low) {
		j++
	}
	// "which tools they use", "what information they trust": the wh-word asks about a
	// noun; but in "what retail investors think" the noun is the subject
	if (t.low == "which" || t.low == "what" || t.low == "whose") && !c.whSubject(j, limit) {
		if n := c.at(j + 1); !isNoun(c.at(j).tag) && !isAdj(c.at(j).tag) && n.tag == "PRP" && builtinSubjectPronouns.has(n.low) && c.at(j).tag != "DT" && c.at(j).tag != "PRP$" {
			j++ // "what scams they run into": a noun the tagger read as a verb
		} else if np, head, ok := c.nounPhraseAs(j, limit, false, false); ok && np.to < limit && !namesPeople(c, head) && (isNoun(c.at(j).tag) || isAdj(c.at(j).tag)) {
			j = np.to
		}
	}
	w.wh = span{i, j}
	if c.at(j).tag == "TO" {
		vp, ok := c.verbPhrase(j+1, limit, true)
		w.inf, w.vp = true, vp
		return w, ok
	}
	// a question's do-support: "how do farmers decide"
	if l := c.at(j).low; (l == "do" || l == "does" || l == "did") && (c.at(j+1).tag == "PRP" || !c.verbAt(j+1, false)) {
		w.vp.tense = l
		j++
	}
	if w.wh.to == i+1 && (t.low == "what" || t.low == "who" || t.low == "which") && c.whSubject(j, limit) {
		vp, ok := c.verbPhrase(j, limit, true)
		w.whSubj, w.vp = true, vp
		return w, ok
	}
	tense := w.vp.tense
	np, _, ok := c.nounPhrase(j, limit, true)
	if !ok || np.to >= limit {
		return w, false
	}
	vp, ok := c.verbPhrase(np.to, limit, true)
	// "the first day of a new job feels like", "customers of our coffee chain use the
	// programme": the tagger read the verb as a noun of the subject; end it sooner
	for pass := 0; pass < 2 && !ok; pass++ {
		// first where the tagger saw a verb, then where it saw a noun
		for cut := np.to - 1; !ok && cut > j; cut-- {
			if t := c.at(cut); pass == 0 && !isVerbTag(t.tag) && t.tag != "IN" || pass == 1 && !isNoun(t.tag) {
				continue
			}
			if sub, _, found := c.nounPhrase(j, cut, true); found && sub.to == cut {
				if v, found := c.verbPhrase(cut, limit, true); found {
					np, vp, ok = sub, v, true
				}
			}
		}
	}
	if !ok {
		return w, false
	}
	w.subj = np
	if np.to-np.from == 1 && c.at(np.from).tag == "PRP" {
		w.pronoun = c.at(np.from).low
	}
	if np.to-np.from == 3 && c.at(np.to-1).low == "them" {
		w.pronoun = "they" // "some of them": the participants, or some of them
	}
	if tense != "" && vp.tense != "do" && vp.tense != "does" && vp.tense != "did" {
		vp.tense = tense
	}
	w.vp = vp
	return w, true
}

// whSubject reports whether the word at j is the verb of a wh-word that is its subject
// ("what stops them", "who signs off"), rather than a noun the wh-word asks about
// ("what scams they run into") or the start of the clause's subject.
func (c chunk) whSubject(j, limit int) bool {
	t, n := c.at(j), c.at(j+1)
	if j >= limit || t.boundary() || t.tag == "DT" || t.tag == "PRP$" || t.tag == "PRP" {
		return false
	}
	if n.tag == "PRP" && builtinSubjectPronouns.has(n.low) {
		return false // "what scams they run into"
	}
	if t.tag == "MD" || t.tag == "VBZ" || t.tag == "VBD" {
		return true
	}
	if t.tag == "NNS" || t.tag == "NN" {
		// a verb the tagger read as a noun: "who signs off", "what gets in the way"
		return strings.HasSuffix(t.low, "s") && (n.tag == "RP" || n.tag == "IN" || n.tag == "DT" || n.tag == "PRP" || n.tag == "PRP$" || j+1 >= limit)
	}
	return false
}
