package moderator

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// How the built-in engine writes the phrases it read back out: about the participants
// (objectives: "why owners of small bakeries abandon onboarding"), in a title (short:
// "Why Small Bakery Owners Abandon Onboarding of Our Ordering App") or put to the
// participant (questions: "what, if anything, you use instead"), with the verb agreeing
// with its new subject and the researcher's "my" become the organisation's "our".

// voice is who a phrase is written for.
type voice int

const (
	voiceThird  voice = iota // about the participants, in an objective
	voiceTitle               // about the participants, in a title
	voiceSecond              // to the participant, in a question
)

// joinTokens writes tokens as text, with swap (when not nil) rewriting each token.
func joinTokens(toks []token, swap func(i int, t token) string) string {
	var b strings.Builder
	prev := ""
	for i, t := range toks {
		text := t.text
		if swap != nil {
			text = swap(i, t)
		}
		if text == "" {
			continue
		}
		if b.Len() > 0 && !noSpaceBefore(text) && !noSpaceAfter(prev) {
			b.WriteByte(' ')
		}
		b.WriteString(text)
		prev = text
	}
	return b.String()
}

func noSpaceBefore(s string) bool {
	switch strings.ToLower(s) {
	case ",", ".", ";", ":", "?", "!", ")", "]", "%", "'s", "'re", "'ve", "'ll", "'d", "'m", "n't", "'", "”":
		return true
	}
	return false
}

func noSpaceAfter(s string) bool {
	return s == "(" || s == "[" || s == "$" || s == "“" || s == "£" || s == "€"
}

// builtinToYou turns the researcher's third person into the interviewer's second
// person, and the researcher's first person into the organisation's.
var builtinToYou = map[string]string{
	"they": "you", "them": "you", "their": "your", "theirs": "yours", "themselves": "yourself",
	"my": "our", "me": "us", "myself": "ourselves", "mine": "ours",
}

// builtinBase gives the base form of verbs a singular subject inflects irregularly.
var builtinBase = map[string]string{"is": "are", "was": "were", "has": "have", "does": "do", "goes": "go", "'s": "are"}

// builtinBaseOf gives the infinitive of forms builtinBase does not.
var builtinBaseOf = map[string]string{"is": "be", "are": "be", "was": "be", "were": "be", "am": "be", "has": "have", "does": "do", "goes": "go"}

// baseForm returns a present-tense verb's base form ("plans" → "plan", "is" → "be"), or
// "" for a past form, which has no regular way back.
func baseForm(t token) string {
	if b, ok := builtinBaseOf[t.low]; ok {
		return b
	}
	switch t.tag {
	case "VBD", "VBN", "VBG":
		return ""
	case "VBZ":
		return deS(t.low)
	}
	if strings.HasSuffix(t.low, "ed") && t.tag != "VB" && t.tag != "VBP" {
		return ""
	}
	if t.tag == "NNS" {
		return deS(t.low)
	}
	return t.low
}

// deS strips a third-person -s: "tries" → "try", "watches" → "watch", "plans" → "plan".
func deS(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"), strings.HasSuffix(w, "oes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// keepCase gives to the capitalisation of as written.
func keepCase(to, as string) string {
	if r, _ := utf8.DecodeRuneInString(as); unicode.IsUpper(r) && as != "I" {
		return capitalise(to)
	}
	return to
}

// people names the participants in a phrase about them: short in a title.
func (p *draftPlan) people(v voice) string {
	n := p.who
	if n == nil {
		n = p.subject
	}
	if n == nil {
		n = p.group
	}
	if n == nil {
		return "people"
	}
	if v == voiceTitle {
		return n.titleText()
	}
	return n.shortText()
}

// whoText is the participants as the guidance names them, or "".
func (p *draftPlan) whoText() string {
	for _, n := range []*nounRead{p.who, p.subject, p.group} {
		if n != nil {
			return n.text(voiceThird)
		}
	}
	return ""
}

// text writes a noun phrase in voice v.
func (n *nounRead) text(v voice) string {
	toks := n.c.t[n.sp.from:n.sp.to]
	return joinTokens(toks, func(i int, t token) string {
		if k := n.sp.from + i; v == voiceSecond && k >= n.you.from && k < n.you.to {
			if k == n.you.from {
				return "you"
			}
			return ""
		}
		if v == voiceSecond {
			if to, ok := builtinToYou[t.low]; ok {
				return keepCase(to, t.text)
			}
		} else if to, ok := builtinToOrg[t.low]; ok {
			return keepCase(to, t.text)
		}
		return t.text
	})
}

// shortText is a group of people without what a relative clause adds: "bakery owners"
// for "bakery owners who signed up in the last 3 months". A one-word group keeps the
// phrase after it ("owners of small bakeries", "adults over 70").
func (n *nounRead) shortText() string {
	c, sp := n.c, n.sp
	head := c.headOf(sp)
	end := head + 1
	if head < 0 {
		return n.text(voiceThird)
	}
	if head == sp.from || head == sp.from+1 && (c.at(sp.from).tag == "DT" || c.at(sp.from).tag == "PRP$") {
		// one word: keep its first post-modifier
		switch k := end; {
		case k >= sp.to:
		case c.at(k).tag == "IN" || c.at(k).tag == "TO":
			if sub, _, ok := c.nounPhrase(k+1, sp.to, false); ok {
				end = sub.to
			} else if c.at(k+1).tag == "CD" {
				end = k + 2
			}
		case c.at(k).tag == "VBG" || c.at(k).tag == "VBN":
			// "people claiming unemployment benefits"
			if vp, ok := c.verbPhrase(k, sp.to, true); ok {
				end = vp.core
			}
		}
	}
	// "people who bought a book from us": a generic word is named by its clause
	if builtinGenericPeople.has(c.at(head).low) && end < sp.to && (c.at(end).low == "who" || c.at(end).tag == "VBG" || c.at(end).tag == "VBN") {
		return n.text(voiceThird)
	}
	// "regular customers of our coffee chain": an "of" says whose
	if c.at(end).low == "of" {
		if sub, _, ok := c.nounPhrase(end+1, sp.to, false); ok {
			end = sub.to
		}
	}
	// a coordinated group keeps its second part: "patients and their carers"
	if c.at(end).tag == "CC" {
		if sub, _, ok := c.nounPhrase(end+1, sp.to, false); ok {
			end = sub.to
		}
	}
	return (&nounRead{c: c, sp: span{sp.from, end}}).text(voiceThird)
}

// builtinGenericPeople name anyone, so the clause after them says who is meant.
var builtinGenericPeople = wordSet("people", "persons", "individuals", "those", "anyone", "someone", "participants", "respondents", "adults", "users")

// builtinRoleNouns name people by what they have or use, so "owners of small bakeries"
// reads "small bakery owners" in a title.
var builtinRoleNouns = wordSet("owners", "users", "managers", "staff", "employees", "customers", "members", "operators", "founders", "buyers", "players", "administrators", "admins", "leaders", "subscribers", "readers", "viewers", "listeners", "drivers", "visitors")

// titleText is a group's short name with "owners of small bakeries" turned into "small
// bakery owners", as a title says it.
func (n *nounRead) titleText() string {
	c, sp := n.c, n.sp
	head := c.headOf(sp)
	if head == sp.from && builtinRoleNouns.has(c.at(head).low) && c.at(head+1).low == "of" {
		if sub, h, ok := c.nounPhrase(head+2, sp.to, false); ok && h == sub.to-1 && c.at(sub.from).tag != "DT" && c.at(sub.from).tag != "PRP$" && c.at(h).tag == "NNS" {
			var w []string
			for k := sub.from; k < h; k++ {
				w = append(w, c.at(k).text)
			}
			w = append(w, singular(c.at(h).text), c.at(head).text)
			return strings.Join(w, " ")
		}
	}
	return n.shortText()
}

// singular returns the singular of a regular plural noun: "bakeries" → "bakery".
func singular(w string) string {
	low := strings.ToLower(w)
	switch {
	case strings.HasSuffix(low, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(low, "sses"), strings.HasSuffix(low, "shes"), strings.HasSuffix(low, "ches"), strings.HasSuffix(low, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(low, "s") && !strings.HasSuffix(low, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// addressed reports whether the clause's subject is the participants, so a question
// puts it to them as "you": a pronoun for them, a group of people, the group the
// guidance interviews, or a subject whose own things the clause names ("why small
// offices struggle to connect ... their network").
func (p *draftPlan) addressed(w *whClause) bool {
	if w.whSubj || w.inf {
		return false
	}
	switch w.pronoun {
	case "they", "people", "you", "everyone", "someone":
		return true
	case "":
	default:
		return false
	}
	c := w.c
	head := c.headOf(w.subj)
	if head < 0 || c.at(w.subj.from).tag == "PRP$" {
		return false // "their managers" are someone else
	}
	if namesPeople(c, head) {
		return true
	}
	if p.who != nil {
		if h := p.who.c.headOf(p.who.sp); h >= 0 && p.who.c.at(h).low == c.at(head).low {
			return true
		}
	}
	if c.at(head).tag != "NNS" && c.at(head).tag != "NNPS" {
		return false
	}
	for k := w.vp.start; k < w.vp.end; k++ {
		if l := c.at(k).low; l == "their" || l == "themselves" || l == "theirs" {
			return true
		}
	}
	return false
}

// subjectText writes the clause's subject in voice v.
func (p *draftPlan) subjectText(w *whClause, v voice) string {
	c := w.c
	if v == voiceSecond && p.addressed(w) {
		// "patients and their carers" → "you and your carers"
		for k := w.subj.from; k < w.subj.to; k++ {
			if c.at(k).tag == "CC" && k > w.subj.from {
				return "you " + (&nounRead{c: c, sp: span{k, w.subj.to}}).text(voiceSecond)
			}
		}
		return "you"
	}
	if w.pronoun == "they" || w.pronoun == "people" {
		if w.subj.to-w.subj.from == 3 {
			return c.at(w.subj.from).low + " " + p.people(v) // "some customers"
		}
		return p.people(v)
	}
	if h := c.headOf(w.subj); v == voiceTitle && h >= 0 && namesPeople(c, h) {
		return (&nounRead{c: c, sp: w.subj}).titleText()
	}
	return (&nounRead{c: c, sp: w.subj}).text(v)
}

// whText writes the clause's wh-word (and the noun it asks about) in lower case.
func (w *whClause) whText(v voice) string {
	s := (&nounRead{c: w.c, sp: w.wh}).text(v)
	f := strings.Fields(s)
	f[0] = strings.ToLower(f[0])
	if f[0] == "if" {
		f[0] = "whether"
	}
	return strings.Join(f, " ")
}

// predicate writes the clause's predicate from its first token to end in voice v.
// Put to the participant, the verb agrees with "you", and a group the verb acts on
// ("what makes developers trust") becomes "you"; a "them" that is not the participants
// ("why volunteers miss them") names what it stands for.
func (p *draftPlan) predicate(w *whClause, end int, v voice) string {
	c, vp := w.c, w.vp
	addressed := p.addressed(w)
	toYou := v == voiceSecond && addressed
	objYou := false
	if w.whSubj && !vp.obj.empty() {
		head := c.headOf(vp.obj)
		objYou = head >= 0 && (c.at(head).low == "them" || v == voiceSecond && namesPeople(c, head))
	}
	second := v == voiceSecond && (addressed || w.whSubj || w.pronoun == "we")
	toks := c.t[vp.start:end]
	sawThey := false
	return joinTokens(toks, func(i int, t token) string {
		k := vp.start + i
		if v == voiceSecond {
			// the participants named in the predicate: "what the first day feels like
			// for people who joined a hospital" asks what it feels like for you
			if n := p.participantsAt(c, k); n != nil {
				if k == n.sp.from {
					return "you"
				}
				return ""
			}
		}
		if objYou && k >= vp.obj.from && k < vp.obj.to {
			if k == vp.obj.from {
				if v == voiceSecond {
					return "you"
				}
				return p.people(v)
			}
			return ""
		}
		if t.low == "they" {
			if !sawThey && v != voiceSecond && w.whSubj && !objYou {
				// "what happens after they report them": name them once
				sawThey = true
				return p.people(v)
			}
			sawThey = true
		}
		if t.low == "them" && (addressed || w.pronoun == "we" || sawThey) || t.low == "it" && k > vp.verbs[0] {
			// "why volunteers miss them", "after they report them": not the participants
			if a := p.antecedent(w, k, t.low == "them"); a != nil {
				return a.text(v)
			}
			return t.text
		}
		if toYou && (k == vp.verbs[0] || k < vp.verbs[0] && (t.low == "does" || t.low == "is" || t.low == "has" || t.low == "was")) {
			if b, ok := builtinBase[t.low]; ok {
				return b
			}
			if t.tag == "VBZ" {
				return deS(t.low)
			}
		}
		if second {
			if to, ok := builtinToYou[t.low]; ok {
				return keepCase(to, t.text)
			}
		} else if to, ok := builtinToOrg[t.low]; ok {
			return keepCase(to, t.text)
		}
		return t.text
	})
}

// participantsAt returns the participants' noun phrase when it starts at or covers k
// in c, or nil.
func (p *draftPlan) participantsAt(c chunk, k int) *nounRead {
	named := []*nounRead{p.who, p.subject}
	if p.who == nil && p.subject == nil && p.groupFor {
		named = append(named, p.group) // "what it feels like for people who joined"
	}
	for _, n := range named {
		if n != nil && len(n.c.t) > 0 && len(c.t) > 0 && &n.c.t[0] == &c.t[0] && k >= n.sp.from && k < n.sp.to {
			return n
		}
	}
	return nil
}

// antecedent returns what a "them" or "it" at k of w's clause stands for: a noun phrase
// (not people) before it in the clause, or else what the topic before w is about; nil
// when there is none.
func (p *draftPlan) antecedent(w *whClause, k int, plural bool) *nounRead {
	if a := w.c.antecedent(w.wh.from, k, plural); a != nil {
		return a
	}
	var prev *whClause
	for _, t := range append([]topicRead{*p.topic}, p.extras...) {
		if t.wh == w {
			break
		}
		prev = t.wh
	}
	if prev == nil {
		return nil
	}
	for _, sp := range []span{prev.subj, prev.vp.obj} {
		if h := prev.c.headOf(sp); h >= 0 && isNoun(prev.c.at(h).tag) && !namesPeople(prev.c, h) && (prev.c.at(h).tag == "NNS" || prev.c.at(h).tag == "NNPS") == plural {
			return &nounRead{c: prev.c, sp: sp}
		}
	}
	return nil
}

// antecedent returns the noun phrase (not people, plural for "them", singular for
// "it") in [from, k) nearest before k, or nil.
func (c chunk) antecedent(from, k int, plural bool) *nounRead {
	var found *nounRead
	for i := from; i < k; {
		np, head, ok := c.nounPhraseAs(i, k, false, false)
		if !ok || np.to <= i || head < 0 {
			i++
			continue
		}
		t := c.at(head)
		if (t.tag == "NNS" || t.tag == "NNPS") == plural && isNoun(t.tag) && t.tag != "NNP" && !namesPeople(c, head) && !builtinTimeNouns.has(t.low) && !builtinMetaNouns.has(t.low) {
			found = &nounRead{c: c, sp: np}
		}
		i = np.to
	}
	return found
}

// clauseText writes the whole indirect question in voice v; core cuts it after the
// verb's object or complement.
func (p *draftPlan) clauseText(w *whClause, v voice, core bool) string {
	end := w.vp.end
	if core {
		end = w.vp.core
	}
	parts := []string{w.whText(v)}
	if v == voiceSecond {
		if h := w.hedge(); h != "" {
			parts[0] += ", " + h + ","
		}
	}
	if !w.whSubj && !w.inf {
		parts = append(parts, p.subjectText(w, v))
	}
	if w.inf {
		parts = append(parts, "to")
	}
	parts = append(parts, p.predicate(w, end, v))
	return strings.Join(parts, " ")
}

// builtinStative verbs describe a view, not something done: "what you think of it"
// assumes nothing, and "how often do you think of X" makes no sense.
var builtinStative = wordSet("think", "feel", "believe", "know", "want", "like", "prefer", "expect", "perceive", "view", "see", "understand", "value", "trust", "need", "hope", "wish", "mean", "care", "love", "hate", "dislike", "remember", "imagine", "consider", "look", "matter", "matters")

// stative reports whether a verb, in any tense, is one of builtinStative.
func stative(t token) bool {
	w := t.low
	if builtinStative.has(w) || builtinStative.has(deS(w)) {
		return true
	}
	if p, ok := strings.CutSuffix(w, "ed"); ok {
		return builtinStative.has(p) || builtinStative.has(p+"e") || len(p) > 2 && p[len(p)-1] == p[len(p)-2] && builtinStative.has(p[:len(p)-1])
	}
	return false
}

// hedge is what keeps a question from assuming its answer: "what, if anything, you use
// instead" does not assume there is something; "" when nothing is assumed.
func (w *whClause) hedge() string {
	if w.inf || len(w.vp.verbs) == 0 {
		return ""
	}
	if stative(w.c.at(w.vp.verbs[0])) {
		return ""
	}
	switch w.c.at(w.wh.from).low {
	case "what":
		if w.wh.to > w.wh.from+1 {
			return "if any"
		}
		return "if anything"
	case "which", "whose":
		return "if any"
	case "who":
		return "if anyone"
	case "where":
		return "if anywhere"
	}
	return ""
}

// verbForms writes the verb phrase's core from its first main verb with each main verb
// rewritten by form ("" when a verb has no such form), in voice v.
func (p *draftPlan) verbForms(w *whClause, end int, v voice, form func(base string) string) string {
	return p.verbFormsAs(w, end, v, form, false)
}

// verbFormsAs is verbForms; ing says form makes gerunds, so a verb already one
// ("stops them from cooking") is kept.
func (p *draftPlan) verbFormsAs(w *whClause, end int, v voice, form func(base string) string, ing bool) string {
	c, vp := w.c, w.vp
	if len(vp.verbs) == 0 {
		return ""
	}
	main := map[int]bool{}
	for _, k := range vp.verbs {
		main[k] = true
	}
	ok := true
	s := joinTokens(c.t[vp.verbs[0]:end], func(i int, t token) string {
		k := vp.verbs[0] + i
		if main[k] {
			if ing && t.tag == "VBG" {
				return t.low
			}
			b := baseForm(t)
			if b == "" && vp.bare && t.tag != "VBG" {
				b = t.low // "makes them come/VBN back": an infinitive, whatever the tag
			}
			if b == "" {
				ok = false
				return t.text
			}
			return form(b)
		}
		if v == voiceSecond {
			if to, found := builtinToYou[t.low]; found {
				return keepCase(to, t.text)
			}
		} else if to, found := builtinToOrg[t.low]; found {
			return keepCase(to, t.text)
		}
		return t.text
	})
	if !ok {
		return ""
	}
	if vp.negated {
		s = "not " + s
	}
	return s
}

// gerundText is the predicate's core as a gerund phrase: "choosing a school for your
// children", "sending invoices and chasing late payments"; "" when a verb is in the past.
func (p *draftPlan) gerundText(w *whClause, v voice) string {
	return p.verbFormsAs(w, w.coreEnd(), v, gerund, true)
}

// coreEnd is where the predicate's core ends, with a verb that stands alone given the
// phrase after it: "keep in touch", "cook at home".
func (w *whClause) coreEnd() int {
	end := w.vp.core
	if c := w.c; len(w.vp.verbs) == 1 && end == w.vp.verbs[0]+1 && c.at(end).tag == "IN" && !builtinSubordinators.has(c.at(end).low) {
		if np, _, ok := c.nounPhrase(end+1, w.vp.end, false); ok {
			end = np.to
		}
	}
	return end
}

// baseText is the whole predicate in the infinitive: "abandon onboarding of our ordering
// app in the first week"; "" when a verb is in the past.
func (p *draftPlan) baseText(w *whClause, v voice) string {
	return p.verbForms(w, w.vp.end, v, func(b string) string { return b })
}

// objectText is the predicate's object in voice v, or "" when it has none worth asking
// about (a pronoun or a group of people).
func (p *draftPlan) objectText(w *whClause, v voice) string {
	c, o := w.c, w.vp.obj
	if o.empty() {
		return ""
	}
	head := c.headOf(o)
	if head < 0 || c.at(head).tag == "PRP" || namesPeople(c, head) || builtinTimeNouns.has(c.at(head).low) {
		return ""
	}
	return (&nounRead{c: c, sp: o}).text(v)
}

// builtinTimeNouns head phrases that say when or how often ("a second time", "each
// season"), not what is acted on.
var builtinTimeNouns = wordSet("time", "times", "day", "days", "week", "weeks", "month", "months", "year", "years", "season", "seasons", "hour", "hours", "minute", "minutes", "morning", "evening", "night", "weekend", "weekends", "while", "moment")

// ownedObject reports whether the object is the organisation's ("our ordering app"),
// which questions ask about directly.
func (w *whClause) ownedObject() bool {
	return ownedSpan(w.c, w.vp.obj)
}

func ownedSpan(c chunk, sp span) bool {
	for k := sp.from; k < sp.to; k++ {
		switch c.at(k).low {
		case "our", "my":
			return true
		}
	}
	return false
}

// gerund returns the -ing form of a verb: "plan" → "planning", "choose" → "choosing",
// "debug" → "debugging", "cancel" → "cancelling" (as British English spells it).
func gerund(v string) string {
	n := len(v)
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	switch {
	case v == "be" || v == "see" || v == "flee" || v == "agree":
		return v + "ing"
	case n >= 3 && strings.HasSuffix(v, "ie"):
		return v[:n-2] + "ying"
	case n >= 3 && strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee") && !strings.HasSuffix(v, "ye") && !strings.HasSuffix(v, "oe"):
		return v[:n-1] + "ing"
	case n >= 3 && !vowel(v[n-1]) && vowel(v[n-2]) && !vowel(v[n-3]) && strings.IndexByte("wxy", v[n-1]) < 0 &&
		(n <= 4 || v[n-1] == 'l' || builtinStressedLast.has(v)):
		return v + v[n-1:] + "ing"
	}
	return v + "ing"
}

// builtinStressedLast are longer verbs stressed on their last syllable, which double
// its consonant: "submitting", "referring", "debugging".
var builtinStressedLast = wordSet("submit", "commit", "admit", "permit", "omit", "emit", "transmit", "refer", "prefer", "defer", "infer", "confer", "transfer", "occur", "recur", "incur", "begin", "forget", "regret", "upset", "reset", "debug", "unplug", "equip", "control", "patrol", "compel", "expel", "propel", "rebel", "forbid", "outfit", "acquit", "embed", "unwrap", "kidnap", "overlap", "handicap")
