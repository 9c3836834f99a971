package moderator

import (
	"strings"
)

// How the built-in engine turns a topic written about participants ("why customers
// cancel their plan") into words put to a participant ("why you cancel your plan"): a
// wh-word, a subject naming a group of people, and the rest as predicate, read with
// word tables rather than a grammar.

// builtinCausative verbs take the participants as object: "what stops them from ...".
var builtinCausative = wordSet("makes", "make", "stops", "stop", "drives", "drive", "helps", "help", "causes", "cause", "leads", "lead", "motivates", "motivate", "encourages", "encourage", "prevents", "prevent", "keeps", "keep", "gets", "get", "pushes", "push", "convinces", "convince", "persuades", "persuade", "brings", "bring", "attracts", "attract", "puts", "turns", "lets", "frustrates", "worries", "excites")

// builtinHowMods extend "how": "how often", "how much".
var builtinHowMods = wordSet("often", "much", "many", "long", "far", "frequently", "well")

// builtinClauseBreak words end a noun phrase being read as a subject.
var builtinClauseBreak = wordSet("is", "are", "was", "were", "do", "does", "did", "have", "has", "had", "can", "could", "will", "would", "should", "may", "might", "must", "not", "to", "and", "or", "but", "when", "why", "how", "what", "who", "that", "which", "if", "about", "with", "for", "from", "in", "on", "at", "by", "of", "so", "because", "than", "then", "as", "into", "it", "this", "i", "we", "you", "they")

// clauseParse is an indirect question read as wh-word, subject and predicate.
type clauseParse struct {
	ok      bool
	head    string // "why", "how often do"
	subject string // "customers", "small business owners", "they"
	pred    string // "cancel their plan"
	pred2   string // "cancel your plan"
	topic2  string // "why you cancel your plan"; the whole clause addressed to the participant
}

// parseClause reads "why customers cancel their plan" as an indirect question about a
// group of people so questions can put it to the participant. When the clause has no
// such subject, only the pronouns are swapped and ok is false.
func parseClause(topic string) clauseParse {
	t := strings.Fields(topic)
	cp := clauseParse{topic2: secondPerson(topic)}
	if len(t) > 0 && builtinWhWords.has(lowerWord(t[0])) {
		t2 := strings.Fields(cp.topic2)
		t2[0] = lowerWord(t2[0])
		if t2[0] == "if" {
			t2[0] = "whether"
		}
		cp.topic2 = strings.Join(t2, " ")
	}
	if len(t) < 3 || !builtinWhWords.has(lowerWord(t[0])) {
		return cp
	}
	i := 1
	if lowerWord(t[0]) == "how" && builtinHowMods.has(lowerWord(t[i])) {
		i++
	}
	aux := ""
	if i < len(t) {
		if w := lowerWord(t[i]); w == "do" || w == "did" {
			aux = w
			i++
		}
	}
	if i < len(t)-2 && aux == "" && builtinCausative.has(lowerWord(t[i])) {
		// "what makes freelancers switch tools": the group is the verb's object.
		for k := i + 1; k < len(t)-1 && k <= i+4; k++ {
			w := lowerWord(t[k])
			if w == "them" || w == "people" || isGroupNoun(w) {
				pred := t[k+1:]
				if len(pred) > 1 && lowerWord(pred[0]) == "to" {
					pred = pred[1:]
				}
				head := append([]string(nil), t[:i+1]...)
				head[0] = lowerWord(head[0])
				cp.ok = true
				cp.head = strings.Join(t[:i+1], " ")
				cp.subject = strings.Join(t[i+1:k+1], " ")
				cp.pred = strings.Join(pred, " ")
				cp.pred2 = secondPerson(cp.pred)
				cp.topic2 = strings.Join(append(head, "you", secondPerson(strings.Join(t[k+1:], " "))), " ")
				return cp
			}
			if builtinClauseBreak.has(w) || strings.ContainsAny(t[k], ",;:") {
				break
			}
		}
	}
	end := -1
	for k := i; k < len(t) && k <= i+3; k++ {
		w := lowerWord(t[k])
		if w == "they" || w == "we" || isGroupNoun(w) {
			end = k
			break
		}
		if builtinClauseBreak.has(w) || strings.ContainsAny(t[k], ",;:") || (strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")) {
			break // a word like "makes" before the group is a verb, not a modifier
		}
	}
	if end < 0 || end+1 >= len(t) {
		return cp
	}
	if w := lowerWord(t[end+1]); w == "who" || w == "that" || w == "which" || w == "whose" {
		return cp
	}
	if w := lowerWord(t[end+1]); w == "with" || w == "without" || w == "in" || w == "from" || w == "on" || w == "at" || w == "aged" || w == "over" || w == "under" {
		// "people with diabetes plan their meals": the verb is the word before the
		// first determiner; without one the clause cannot be read.
		d := -1
		for k := end + 3; k < len(t) && k <= end+6; k++ {
			if builtinDeterminers.has(lowerWord(t[k])) {
				d = k
				break
			}
		}
		if d < 0 {
			return cp
		}
		end = d - 2
	}
	head := append([]string(nil), t[:i]...)
	if aux == "do" { // an embedded question drops "do": "why you cancel"
		head = head[:len(head)-1]
	}
	head[0] = lowerWord(head[0])
	if head[0] == "if" {
		head[0] = "whether"
	}
	cp.ok = true
	cp.head = strings.Join(t[:i], " ")
	cp.subject = strings.Join(t[i:end+1], " ")
	cp.pred = strings.Join(t[end+1:], " ")
	cp.pred2 = secondPerson(cp.pred)
	if lowerWord(cp.subject) == "we" { // "how we support customers": the organisation acts
		cp.pred2 = cp.pred
		cp.topic2 = strings.Join(append(head, "we", cp.pred2), " ")
		return cp
	}
	cp.topic2 = strings.Join(append(head, "you", cp.pred2), " ")
	return cp
}

// Words read around a clause's predicate and object, by refining and titleFrom.
var (
	builtinAuxLead     = wordSet("don't", "do", "does", "did", "didn't", "doesn't", "not", "are", "is", "aren't", "isn't", "have", "haven't", "has", "can", "can't", "cannot", "could", "will", "won't", "would", "wouldn't", "should", "were", "was", "still", "often", "usually", "sometimes", "always", "never", "really", "actually", "currently", "regularly", "rarely", "even", "also", "just", "typically", "frequently", "generally", "ever", "already", "first", "end", "ending")
	builtinDeterminers = wordSet("the", "a", "an", "your", "our", "their", "my", "his", "her", "this", "that", "these", "those", "some", "any", "its")
	builtinObjectCut   = wordSet("after", "before", "during", "when", "while", "because", "if", "so", "without", "instead", "rather", "than", "every", "each", "at", "in", "on", "from", "for", "to", "with", "by", "via", "compared", "across", "within", "since", "until", "over", "and", "or", "but", "who", "that", "which")
)
