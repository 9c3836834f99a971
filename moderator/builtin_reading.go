package moderator

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How the built-in engine reads creation guidance as a researcher would: each sentence
// is tagged with parts of speech and read for what the study wants to learn (an intent
// verb such as "understand" or "learn" and the indirect question or noun phrase it
// takes), who to interview ("interview bakery owners who signed up last month",
// "participants: ..."), and what the team will decide with the findings ("we will
// decide whether to ..."). Questions the researcher wrote come from quoted text and from
// lines of the files ending in '?'.

var (
	builtinMinutesRe   = newLazyRegexp(`(?i)\b(\d{1,3})\s*(?:-\s*|\s)?(?:minutes?|mins?)\b`)
	builtinHoursRe     = newLazyRegexp(`(?i)\b(half\s+an\s+hour|an\s+hour\s+and\s+a\s+half|(?:an|one|1)\s*-?\s*hours?|([2-8])\s*-?\s*hours?)\b`)
	builtinQuotedQRe   = newLazyRegexp(`["“]([^"“”\n]{3,300}?\?)\s*["”]`)
	builtinNumberingRe = newLazyRegexp(`^(?:[-*•·–—>]+|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|[Qq](?:uestion)?\s*\d{0,3}\s*[.:)])\s*`)
)

// Bounds on the reading, so the longest guidance costs little more than a long one:
// the topic, the participants and the decision are said early.
const (
	builtinMaxSentences = 40       // sentences read
	builtinMaxReadBytes = 12 << 10 // bytes of guidance tagged in all
	builtinMaxFileRead  = 4 << 10  // bytes of the files tagged for their themes
	builtinMaxIntents   = 4        // further things to learn kept
)

// topicRead is one thing the study sets out to learn: an indirect question ("why
// owners abandon onboarding") or a noun phrase ("night shifts").
type topicRead struct {
	verb string    // the objective's verb: "understand", "learn", "find out", ...
	wh   *whClause // an indirect question, or nil
	np   *nounRead // a noun phrase, or nil
}

// nounRead is a noun phrase of a tagged sentence.
type nounRead struct {
	c  chunk
	sp span
	// ofPeople says an "of" and the people it named were taken off the end ("the
	// experience of refugees"), who are then the participants.
	ofPeople bool
	// you is the participants inside the phrase, when a clause in it is about them
	// ("the barriers disabled voters face"): put to the participant, "you".
	you span
}

// draftPlan is what the engine read out of creation guidance.
type draftPlan struct {
	topic    *topicRead
	extras   []topicRead // further things to learn
	asks     []topicRead // things to ask about ("ask about medication and wound care")
	who      *nounRead   // who to interview, as the guidance names them
	subject  *nounRead   // a group of people the topic is about, when who is not said
	group    *nounRead   // any group of people the guidance mentions ("for busy parents")
	groupFor bool        // the group is who something is for ("for people who joined")
	// bareTopic is the noun phrase a guidance with no verb opens with ("Usability of
	// the new self-checkout machines"), or nil.
	bareTopic *nounRead
	decision  string               // what the team will decide: "whether to shorten the form"
	nouns     map[string]int       // how often each head noun (not people) is named
	first     map[string]*nounRead // each head noun's first noun phrase
	order     map[string]int       // the order in which head nouns were first named
}

// builtinIntents map an intent verb to the verb its objective starts with.
var builtinIntents = map[string]string{
	"understand": "understand", "learn": "learn", "explore": "explore", "discover": "discover",
	"uncover": "uncover", "investigate": "understand", "research": "understand", "study": "understand",
	"assess": "assess", "evaluate": "evaluate", "examine": "understand", "gauge": "gauge",
	"measure": "measure", "test": "test", "validate": "validate", "know": "understand",
	"see": "understand", "hear": "understand", "map": "map",
}

// intentVerb returns the objective verb for an intent word, or "".
func intentVerb(low string) string { return builtinIntents[low] }

// readGuidance reads creation guidance into a plan.
func readGuidance(g string) draftPlan { return readText(g, builtinMaxReadBytes) }

// readText reads text into a plan, tagging at most budget bytes of it.
func readText(g string, budget int) draftPlan {
	p := draftPlan{nouns: map[string]int{}, first: map[string]*nounRead{}, order: map[string]int{}}
	seen := map[string]bool{}
	for n, s := range splitSentences(g) {
		if n >= builtinMaxSentences || budget <= 0 {
			break
		}
		if seen[s] {
			continue // a repeated line (a template, a spreadsheet) says nothing new
		}
		seen[s] = true
		budget -= len(s)
		for _, piece := range labelled(s) {
			c := tagSentence(piece)
			if len(c.t) > 0 {
				p.read(c)
			}
		}
	}
	return p
}

// labelled splits "Research question: How do ...?" or "Participants: parents of ..." at
// the colon after a short label; other sentences are returned whole.
func labelled(s string) []string {
	s = strings.TrimSpace(builtinNumberingRe.ReplaceAllString(strings.TrimSpace(s), ""))
	label, rest, ok := strings.Cut(s, ":")
	if !ok || wordCount(label) > 3 || strings.TrimSpace(rest) == "" {
		return []string{s}
	}
	low := strings.ToLower(label)
	if strings.Contains(low, "participant") || strings.Contains(low, "audience") || strings.Contains(low, "who") || strings.Contains(low, "recruit") {
		return []string{"Interview " + strings.TrimSpace(rest)}
	}
	return []string{strings.TrimSpace(rest)}
}

// tagSentence tags one sentence of guidance, without its bracketed asides and quoted
// text. Its first word is tagged in lower case (a capital reads as a proper noun to the
// tagger) and kept so unless it is one.
func tagSentence(s string) chunk {
	s = strings.TrimSpace(builtinNumberingRe.ReplaceAllString(withoutAsides(s), ""))
	w := strings.Fields(s)
	if len(w) == 0 {
		return chunk{}
	}
	capital := w[0]
	if r, size := utf8.DecodeRuneInString(capital); unicode.IsUpper(r) && strings.IndexFunc(capital[size:], unicode.IsUpper) < 0 {
		w[0] = strings.ToLower(capital[:size]) + capital[size:]
	}
	toks := tagText(strings.Join(w, " "))
	if len(toks) > 0 && (toks[0].tag == "NNP" || toks[0].tag == "NNPS") && w[0] != capital {
		toks[0].text = capital[:len(toks[0].text)]
	}
	return chunk{t: toks}
}

// withoutAsides drops bracketed asides ("(under 10 staff)") and double-quoted text (a
// researcher's own question, taken word for word elsewhere).
func withoutAsides(s string) string {
	var b strings.Builder
	depth, quoted := 0, false
	for _, r := range s {
		switch {
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case r == '"' || r == '“' || r == '”':
			quoted = r == '“' || r == '"' && !quoted
		case depth == 0 && !quoted:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// read collects what one tagged sentence says.
func (p *draftPlan) read(c chunk) {
	p.countNouns(c)
	if p.bareTopic == nil && len(p.order) <= len(p.nouns) && !c.hasVerb() {
		// a heading rather than a sentence: "Usability of the new self-checkout machines"
		i := 0
		for i < len(c.t) && (builtinTopicNoise.has(c.at(i).low) || c.at(i).low == "on" || c.at(i).low == "of") {
			i++
		}
		if np, head, ok := c.nounPhrase(i, len(c.t), false); ok && !namesPeople(c, head) && !builtinMetaNouns.has(c.at(head).low) {
			// the whole heading is the phrase and what qualifies it ("in our
			// supermarkets"), not a verb the tagger missed ("Draft a study ...")
			if r := c.at(np.to); np.to == len(c.t) || r.boundary() || r.tag == "IN" || r.tag == "TO" {
				p.bareTopic = &nounRead{c: c, sp: np}
			}
		}
	}
	if c.t[len(c.t)-1].text == "?" && c.t[0].wh() {
		// a question the researcher asks themselves: "How do farmers decide ...?", and
		// any that follow it: ", and why do some of them go without?"
		if _, ok := c.readWh(0); ok {
			p.readTopic(c, 0, "understand")
			return
		}
	}
	for i, t := range c.t {
		// "a meal kit for busy parents": a group the study may be about
		if l := t.low; p.group == nil && (l == "for" || l == "with" || l == "among" || l == "amongst") {
			if np, head, ok := c.nounPhrase(i+1, c.clauseEnd(i+1), true); ok && namesPeople(c, head) {
				p.group, p.groupFor = &nounRead{c: c, sp: np}, l != "with"
			}
		}
	}
	for i := 0; i < len(c.t); {
		if n := p.readAt(c, i); n > i {
			i = n
			continue
		}
		i++
	}
}

// hasVerb reports whether the tagger found a verb in the sentence.
func (c chunk) hasVerb() bool {
	for _, t := range c.t {
		if isVerbTag(t.tag) {
			return true
		}
	}
	return false
}

// readAt reads a participants phrase, a decision or an intent starting at i and returns
// where it ends, or i when none starts there.
func (p *draftPlan) readAt(c chunk, i int) int {
	t := c.at(i)
	if j := interviewObject(c, i); j > i {
		limit := c.clauseEnd(j)
		np, head, ok := c.nounPhrase(j, limit, true)
		if !ok || !namesPeople(c, head) && c.at(head).tag != "NNS" {
			return i
		}
		who := np
		for k := np.from; k < np.to; k++ {
			if c.at(k).low == "who" || c.at(k).tag == "WDT" {
				// "who started an application last quarter but did not submit it"
				if a := c.at(who.to).low; a != "about" && a != "on" && a != "regarding" {
					who.to = limit
				}
				break
			}
		}
		if p.who == nil {
			p.who = &nounRead{c: c, sp: who}
		}
		if a := c.at(np.to).low; a == "about" || a == "on" || a == "regarding" {
			return p.readTopic(c, np.to+1, "understand")
		}
		return np.to
	}
	if d := decisionAt(c, i); d != "" {
		if p.decision == "" {
			p.decision = d
		}
		return c.clauseEnd(i)
	}
	if v, n := intentAt(c, i); v != "" {
		return p.readTopic(c, i+n, v)
	}
	if t.low == "ask" && c.at(i+1).low != "for" {
		j := i + 1
		if c.at(j).tag == "PRP" || c.at(j).low == "participants" || c.at(j).low == "them" {
			j++
		}
		if c.at(j).low == "about" {
			return p.readAsks(c, j+1)
		}
	}
	return i
}

// interviewObject returns where the people after "interview", "talk to", "speak with",
// "recruit" ... start, or i when no such verb stands at i.
func interviewObject(c chunk, i int) int {
	switch c.at(i).low {
	case "participants", "respondents", "interviewees":
		// "Participants are adults on the waiting list", "participants will be ..."
		j := i + 1
		for c.at(j).tag == "MD" || c.at(j).low == "be" || c.at(j).low == "are" || c.at(j).low == "should" || c.at(j).low == "will" {
			j++
		}
		if j > i+1 && c.at(j-1).low != "should" && c.at(j-1).low != "will" {
			return j
		}
	case "interview", "interviews", "interviewing", "recruit", "recruiting", "survey":
		if c.at(i-1).tag == "DT" || c.at(i-1).tag == "PRP$" || c.at(i-1).tag == "JJ" {
			return i // "one hour interviews", "our survey"
		}
		if c.at(i+1).low == "with" {
			return i + 2
		}
		return i + 1
	case "talk", "speak", "chat", "meet":
		if n := c.at(i + 1).low; n == "to" || n == "with" {
			return i + 2
		}
	}
	return i
}

// namesPeople reports whether the noun at head names people.
func namesPeople(c chunk, head int) bool {
	t := c.at(head)
	return isGroupNoun(t.low) || builtinGroupNouns.has(t.low) || t.low == "staff" || t.low == "people" || t.low == "everyone"
}

// intentAt returns the objective verb of an intent phrase at i and how many tokens it
// takes ("find out" is two), or "".
func intentAt(c chunk, i int) (string, int) {
	t := c.at(i)
	n := 1
	verb := intentVerb(t.low)
	if (t.low == "find" || t.low == "figure") && c.at(i+1).low == "out" {
		verb, n = t.low+" out", 2
	}
	if verb == "" {
		return "", 0
	}
	prev := c.at(i - 1)
	if prev.tag == "DT" || prev.tag == "PRP$" || isAdj(prev.tag) || isNoun(prev.tag) && prev.low != "me" || prev.low == "who" || prev.low == "that" {
		return "", 0 // "our research", "user research", "people who want to learn"
	}
	next := c.at(i + n)
	switch t.low {
	case "know", "see", "hear":
		if !next.wh() {
			return "", 0
		}
	case "research", "study", "test", "map", "measure":
		if !next.wh() && next.tag != "DT" && next.tag != "PRP$" && next.low != "about" && next.low != "into" && next.low != "how" {
			return "", 0
		}
	}
	return verb, n
}

// decisionAt returns what the team will decide when a decision is named at i: "we
// need to decide whether to ...", "use the findings to decide between ...".
func decisionAt(c chunk, i int) string {
	switch c.at(i).low {
	case "decide", "choose", "prioritise", "prioritize", "determine":
	default:
		return ""
	}
	team := false
	for k := i - 1; k >= 0 && !c.at(k).boundary(); k-- {
		t := c.at(k)
		if t.wh() {
			return "" // "how pet owners decide when ...": the participants decide
		}
		switch t.low {
		case "we", "i", "us", "findings", "results", "team", "insights", "research", "study", "this":
			team = true
		}
	}
	n := c.at(i + 1)
	if !team || !(n.wh() || n.low == "between" || n.low == "on" || n.low == "if") {
		return ""
	}
	from := i + 1
	if n.low == "on" {
		from++
	}
	end := c.clauseEnd(i + 2)
	if end-from < 2 {
		return ""
	}
	return joinTokens(c.t[from:end], nil)
}

// readTopic reads what an intent verb at i takes: one or more indirect questions ("what
// they expected, where they got stuck, and what they use instead") or a noun phrase.
func (p *draftPlan) readTopic(c chunk, i int, verb string) int {
	for c.at(i).low == "more" || c.at(i).low == "better" || c.at(i).low == "about" || c.at(i).low == "into" || c.at(i).low == "on" || c.at(i).low == "regarding" || c.at(i).low == "in" && c.at(i+1).low == "depth" || c.at(i).low == "depth" {
		i++
	}
	if c.at(i).wh() || c.at(i).low == "if" {
		end := i
		for {
			w, ok := c.readWh(i)
			if !ok {
				return c.clauseEnd(i + 1)
			}
			p.addTopic(topicRead{verb: verb, wh: &w})
			end = w.vp.end
			// a list of questions sharing the verb: ", where they got stuck, and what ..."
			j := end
			for c.at(j).text == "," || c.at(j).low == "and" || c.at(j).low == "or" {
				j++
			}
			if j == end || !c.at(j).wh() {
				return end
			}
			i = j
		}
	}
	limit := c.clauseEnd(i)
	np, head, ok := c.nounPhrase(i, limit, false)
	if !ok {
		return limit
	}
	if h := c.at(head).low; (h == "reasons" || h == "reason" || h == "way" || h == "ways") && c.at(np.to).wh() {
		// "the reasons why gym members stop going": the question is the topic
		return p.readTopic(c, np.to, verb)
	}
	sp := np
	// "the barriers disabled voters face when voting": a clause describes the noun
	sub, _, ok := c.nounPhrase(np.to, limit, true)
	if m := c.at(np.to); !ok && (m.tag == "VBD" || m.tag == "VBN" || isAdj(m.tag)) {
		sub, _, ok = c.nounPhrase(np.to+1, limit, true) // "disabled" read as a verb
		sub.from = np.to
	}
	var you span
	if ok && sub.to < limit {
		if _, ok := c.verbPhrase(sub.to, limit, true); ok {
			sp.to = limit
			if head := c.headOf(sub); head >= 0 && namesPeople(c, head) {
				you = sub
				if p.subject == nil {
					p.subject = &nounRead{c: c, sp: sub}
				}
			}
		}
	}
	// "the onboarding experience of new hires": the people are the participants
	ofPeople := false
	for k := sp.from; k < sp.to; k++ {
		if c.at(k).low != "of" || k == sp.from {
			continue
		}
		if g, head, ok := c.nounPhrase(k+1, limit, true); ok && namesPeople(c, head) {
			if p.subject == nil {
				p.subject = &nounRead{c: c, sp: g}
				ofPeople = true
			}
			sp.to = k
			break
		}
	}
	for j := sp.to; j < limit; j++ {
		if l := c.at(j).low; l == "with" || l == "for" || l == "among" {
			if g, head, ok := c.nounPhrase(j+1, limit, true); ok && namesPeople(c, head) && p.group == nil {
				p.group = &nounRead{c: c, sp: g}
			}
			break
		}
	}
	if sp.empty() {
		return limit
	}
	p.addTopic(topicRead{verb: verb, np: &nounRead{c: c, sp: sp, you: you, ofPeople: ofPeople}})
	return limit
}

// readAsks reads the things to ask about at i: "medication, wound care and when they
// decided to call for help".
func (p *draftPlan) readAsks(c chunk, i int) int {
	limit := len(c.t)
	for i < limit && len(p.asks) < builtinMaxIntents {
		switch t := c.at(i); {
		case t.wh():
			w, ok := c.readWh(i)
			if !ok {
				return c.clauseEnd(i + 1)
			}
			p.asks = append(p.asks, topicRead{verb: "understand", wh: &w})
			i = w.vp.end
		default:
			np, _, ok := c.nounPhrase(i, c.clauseEnd(i), false)
			if !ok {
				return i
			}
			p.asks = append(p.asks, topicRead{verb: "understand", np: &nounRead{c: c, sp: np}})
			i = np.to
		}
		if c.at(i).text != "," && c.at(i).low != "and" {
			return i
		}
		for c.at(i).text == "," || c.at(i).low == "and" {
			i++
		}
	}
	return i
}

// addTopic records the topic, or a further thing to learn.
func (p *draftPlan) addTopic(t topicRead) {
	if t.wh != nil {
		if t.wh.subj.empty() && !t.wh.whSubj && !t.wh.inf {
			return
		}
		if o := t.wh.vp.obj; t.wh.whSubj && p.subject == nil && t.wh.c.peopleSpan(o) && t.wh.c.at(o.from).tag != "PRP" && t.wh.c.at(o.from).tag != "PRP$" {
			p.subject = &nounRead{c: t.wh.c, sp: o} // "what makes freelancers switch"
		}
		if g := t.wh.subj; !g.empty() && t.wh.pronoun == "" && p.subject == nil && t.wh.c.at(g.from).tag != "PRP$" {
			if head := t.wh.c.headOf(g); namesPeople(t.wh.c, head) {
				p.subject = &nounRead{c: t.wh.c, sp: g}
			}
		}
	}
	if p.topic == nil {
		p.topic = &t
		return
	}
	if len(p.extras) < builtinMaxIntents {
		p.extras = append(p.extras, t)
	}
}

// headOf returns the head noun of a noun phrase span: the last noun of its first run
// of modifiers and nouns ("sales managers" in "sales managers at small firms"), or a
// pronoun; -1 when it has none.
func (c chunk) headOf(sp span) int {
	head := -1
	for k := sp.from; k < sp.to; k++ {
		t := c.at(k)
		switch {
		case isNoun(t.tag) || t.tag == "PRP":
			head = k
			if t.tag == "PRP" {
				return k
			}
		case t.tag == "DT" || t.tag == "PRP$" || t.tag == "PDT" || t.tag == "CD" || isAdj(t.tag) || t.tag == "VBN" || t.tag == "HYPH" || t.tag == "POS" || (t.tag == "VBG" || t.tag == "VB" || t.tag == "VBP" || t.tag == "VBZ") && head < 0:
			if t.tag == "VBG" && k+1 < sp.to && !isNoun(c.at(k+1).tag) && !isAdj(c.at(k+1).tag) {
				head = k // "onboarding of our app"
			}
		default:
			if head >= 0 {
				return head
			}
		}
		if head >= 0 && k+1 < sp.to {
			if n := c.at(k + 1); n.tag == "IN" || n.tag == "TO" || n.tag == "WP" || n.tag == "WDT" || n.tag == "CC" || n.tag == "VBG" || n.tag == "VBN" {
				return head
			}
			if n := c.at(k + 1); (n.tag == "VBZ" || n.tag == "VBP") && pluralForm(n.low) {
				head = k + 1 // "IT admins/VBZ": a plural the tagger read as a verb
			}
		}
	}
	if head < 0 && !sp.empty() && isAdj(c.at(sp.to-1).tag) {
		head = sp.to - 1 // "retirees/JJ": the phrase has no other head
	}
	return head
}

// countNouns counts the head nouns of the sentence's noun phrases (not people), for a
// topic when no intent names one.
func (p *draftPlan) countNouns(c chunk) {
	for i := 0; i < len(c.t); {
		if !isNoun(c.at(i).tag) && !isAdj(c.at(i).tag) && c.at(i).tag != "DT" && c.at(i).tag != "PRP$" {
			i++
			continue
		}
		if v, n := intentAt(c, i); v != "" {
			i += n // "Figure out ...": the verb, though tagged as a noun
			continue
		}
		np, head, ok := c.nounPhrase(i, len(c.t), false)
		if !ok || np.to <= i {
			i++
			continue
		}
		if h := c.at(head); !namesPeople(c, head) && len(contentWords(h.low, 3)) > 0 && isNoun(h.tag) && !builtinTimeNouns.has(h.low) && !builtinMetaNouns.has(h.low) && !c.verbSlot(i) {
			p.nouns[h.low]++
			if p.first[h.low] == nil {
				from := np.from
				for from < head && (c.at(from).tag == "DT" && c.at(from).low != "the" || c.at(from).tag == "PRP$" && c.at(from).low != "our" && c.at(from).low != "my" || c.at(from).tag == "CD") {
					from++
				}
				p.first[h.low] = &nounRead{c: c, sp: span{from, head + 1}}
				p.order[h.low] = len(p.order)
			}
		}
		i = np.to
	}
}

// builtinMetaNouns name the research itself, never its topic.
var builtinMetaNouns = wordSet("study", "studies", "research", "interview", "interviews", "session", "sessions", "question", "questions", "notes", "note", "file", "files", "attachment", "attachments", "document", "documents", "guide", "brief", "survey", "findings", "material", "materials", "template", "goal", "goals", "context", "minutes", "hour", "hours", "participant", "participants", "export")

// verbSlot reports whether the word at i stands where a verb does, after a subject
// pronoun or a relative pronoun ("who share finances"), so is not a noun to count.
func (c chunk) verbSlot(i int) bool {
	p := c.at(i - 1)
	return p.tag == "WP" || p.tag == "PRP" && builtinSubjectPronouns.has(p.low)
}

// keyNoun returns the noun phrase of the noun the guidance names most (the first named
// on a tie), or nil.
func (p *draftPlan) keyNoun() *nounRead {
	best := ""
	for w, n := range p.nouns {
		if best == "" || n > p.nouns[best] || n == p.nouns[best] && p.order[w] < p.order[best] {
			best = w
		}
	}
	if best == "" {
		return nil
	}
	return p.first[best]
}

// questionsIn returns the questions written in file text: lines ending in '?' (or a
// quoted question in a line, as a spreadsheet exports it), with list markers and any
// lead-in sentence removed, at most builtinMaxFileQs of them.
func questionsIn(texts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, text := range texts {
		for line := range strings.Lines(text) {
			q := questionIn(line)
			if q == "" {
				if m := builtinQuotedQRe.FindStringSubmatch(line); m != nil {
					q = questionIn(m[1])
				}
			}
			if q == "" || seen[strings.ToLower(q)] {
				continue
			}
			seen[strings.ToLower(q)] = true
			out = append(out, q)
			if len(out) == builtinMaxFileQs {
				return out
			}
		}
	}
	return out
}

// questionIn returns the question a line of a file ends with, or "".
func questionIn(line string) string {
	line = collapseSpace(line)
	if u, ok := unquoteText(line); ok {
		line = u
	}
	if !strings.HasSuffix(line, "?") {
		return ""
	}
	line = builtinNumberingRe.ReplaceAllString(line, "")
	for _, sep := range []string{". ", "! ", "? ", ": "} {
		if i := strings.LastIndex(line[:len(line)-1], sep); i >= 0 {
			line = line[i+len(sep):]
		}
	}
	if u, ok := unquoteText(line); ok {
		line = u
	}
	n := len(strings.Fields(line))
	if n < 3 || n > 40 || utf8.RuneCountInString(line) > 300 {
		return ""
	}
	if r, _ := utf8.DecodeRuneInString(line); !unicode.IsLetter(r) {
		return ""
	}
	if harmReason([]string{line}) != "" {
		return ""
	}
	return asQuestion(line)
}

// durationIn returns the interview length the guidance asks for in minutes, or 0.
func durationIn(g string) int {
	low := strings.ToLower(g)
	if !strings.Contains(low, "min") && !strings.Contains(low, "hour") {
		return 0
	}
	if m := builtinMinutesRe.FindStringSubmatch(g); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= builtinMaxMinutes {
			return n
		}
	}
	if m := builtinHoursRe.FindStringSubmatch(g); m != nil {
		return hoursMinutes(m[1], m[2])
	}
	return 0
}

// hoursMinutes converts a matched hour phrase to minutes.
func hoursMinutes(phrase, digit string) int {
	low := strings.ToLower(phrase)
	switch {
	case strings.HasPrefix(low, "half"):
		return 30
	case strings.Contains(low, "and a half"):
		return 90
	case digit != "":
		n, _ := strconv.Atoi(digit)
		return n * 60
	}
	return 60
}
