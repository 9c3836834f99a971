package moderator

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
)

// How the built-in engine drafts a brief: it reads the guidance (builtin_reading.go)
// for the topic, further things to learn, the participants and the decision, then
// writes each part of the brief from whole phrases of it. The title names the topic
// ("Why Small Bakery Owners Abandon Onboarding of Our Ordering App"); objectives say
// what the study learns, about the participants; questions put each topic to the
// participant in the second person, open, one idea each, and without assuming an answer
// they have not given ("what, if anything, has led you to ..."). Questions the
// researcher wrote (quoted in the guidance, or lines ending in '?' in the files) come
// first and are kept word for word.

// builtinTitleTail words never end a title.
var builtinTitleTail = wordSet("a", "an", "the", "and", "or", "of", "to", "for", "with", "in", "on", "at", "by", "from", "their", "your", "our", "my", "his", "her", "its", "this", "that", "about", "as", "is", "are", "do", "does", "how", "why", "what", "when", "who", "which", "whether", "they", "you", "we")

// Title bounds: a title is a phrase to read at a glance.
const (
	builtinTitleWords = 12
	builtinTitleRunes = 90
)

// draftBrief drafts a study from creation guidance and file text. It returns an error
// wrapping ErrRefused when the guidance is empty, harmful or not a research request.
func draftBrief(guidance string, files []FileText) (kv.Brief, error) {
	g := strings.TrimSpace(cleanText(guidance))
	if g == "" {
		return kv.Brief{}, refuse("the guidance is empty")
	}
	sentences := splitSentences(g)
	if r := harmReason(sentences); r != "" {
		return kv.Brief{}, refuse(r)
	}
	if r := offTopicReason(g, sentences, false, len(files) > 0); r != "" {
		return kv.Brief{}, refuse(r)
	}

	p := readGuidance(g)
	texts := make([]string, 0, len(files))
	for _, f := range files {
		t := f.Text
		if len(t) > builtinMaxScan {
			t = t[:builtinMaxScan]
		}
		texts = append(texts, cleanText(t))
	}
	var inFiles *draftPlan
	if len(texts) > 0 {
		q := readText(strings.Join(texts, "\n"), builtinMaxFileRead)
		inFiles = &q
	}
	if p.topic == nil {
		p.topicFromNouns(g, inFiles)
	}
	fileTerms := p.fileTerms(inFiles)

	var researcher []string
	for _, m := range builtinQuotedQRe.FindAllStringSubmatch(g, -1) {
		if harmReason([]string{m[1]}) == "" {
			researcher = append(researcher, asQuestion(m[1]))
		}
	}
	researcher = append(researcher, questionsIn(texts)...)

	title := p.title()
	verbatim := p.verbatim(researcher)
	screener := p.screener()
	minutes := durationIn(g)
	if minutes == 0 {
		minutes = estimateMinutes(len(screener), len(verbatim))
	}
	return kv.Brief{
		Title:                    &title,
		Objectives:               p.objectives(fileTerms),
		PreInterviewQuestions:    screener,
		VerbatimQuestions:        verbatim,
		EstimatedDurationMinutes: &minutes,
	}.Normalised(), nil
}

// topicFromNouns finds a topic when no intent names one: a guidance of a few words is
// the topic itself ("Customer churn", "onboarding research"); otherwise the noun the
// guidance (or, without one, the files) names most.
func (p *draftPlan) topicFromNouns(g string, files *draftPlan) {
	if n := p.bareTopic; n != nil {
		p.topic = &topicRead{verb: "understand", np: n}
		return
	}
	if t := shortTopic(g, p.whoText()); t != "" {
		c := tagSentence(t)
		if np, _, ok := c.nounPhrase(0, len(c.t), false); ok && np.to == len(c.t) {
			p.topic = &topicRead{verb: "understand", np: &nounRead{c: c, sp: np}}
			return
		}
	}
	if p.who != nil && p.nounsBesidesWho() == 0 {
		return // "Interview nurses": the study is about their experience
	}
	n := p.keyNoun()
	if n == nil && files != nil {
		n = files.keyNoun()
	}
	if n != nil {
		p.topic = &topicRead{verb: "understand", np: n}
	}
}

// nounsBesidesWho counts the nouns the guidance names other than in the participants.
func (p *draftPlan) nounsBesidesWho() int {
	n := 0
	for w, k := range p.nouns {
		if p.who == nil || !strings.Contains(strings.ToLower(p.who.text(voiceThird)), w) {
			n += k
		}
	}
	return n
}

// fileTerms returns up to three nouns the files name most, leaving out the topic's and
// the participants' words: the themes of the supplied material.
func (p *draftPlan) fileTerms(q *draftPlan) []string {
	if q == nil {
		return nil
	}
	skip := map[string]bool{}
	for _, w := range contentWords(p.topicWords()+" "+p.whoText(), 1) {
		skip[stemWord(w)] = true
	}
	var out []string
	for len(out) < 3 {
		best := ""
		for w, n := range q.nouns {
			if skip[stemWord(w)] || n < 2 && len(out) > 0 {
				continue
			}
			if best == "" || n > q.nouns[best] || n == q.nouns[best] && q.order[w] < q.order[best] {
				best = w
			}
		}
		if best == "" {
			break
		}
		skip[stemWord(best)] = true
		out = append(out, best)
	}
	return out
}

// topicWords is the topic as text, for leaving its words out of the files' key terms.
func (p *draftPlan) topicWords() string {
	switch {
	case p.topic == nil:
		return ""
	case p.topic.wh != nil:
		return p.clauseText(p.topic.wh, voiceThird, false)
	}
	return p.topic.np.text(voiceThird)
}

// builtinTopicNoise are words around a bare topic: "onboarding research", "churn interviews".
var builtinTopicNoise = wordSet("research", "study", "studies", "interview", "interviews", "interviewing", "project", "survey", "user", "ux", "please", "about", "on", "into", "of", "a", "an", "the", "run", "do", "conduct", "new", "talk", "speak", "to", "with")

// shortTopic reads a guidance of a few words with no intent phrase as a bare topic:
// "Customer churn" or "onboarding research" (without the research words and the
// participants), or returns "".
func shortTopic(guidance, participants string) string {
	g := trimPhrase(guidance)
	if len(splitSentences(g)) != 1 {
		return ""
	}
	t := strings.Fields(g)
	if len(t) == 0 || len(t) > 6 {
		return ""
	}
	who := map[string]bool{}
	for _, w := range wordsOf(participants) {
		who[lowerWord(w)] = true
	}
	for len(t) > 0 && (builtinTopicNoise.has(lowerWord(t[0])) || who[lowerWord(t[0])]) {
		t = t[1:]
	}
	for len(t) > 0 && (builtinTopicNoise.has(lowerWord(t[len(t)-1])) || who[lowerWord(t[len(t)-1])]) {
		t = t[:len(t)-1]
	}
	topic := trimPhrase(strings.Join(t, " "))
	if len(contentWords(topic, 3)) == 0 {
		return ""
	}
	if w := strings.Fields(topic); strings.IndexFunc(w[0][1:], unicode.IsUpper) < 0 {
		w[0] = strings.ToLower(w[0][:1]) + w[0][1:]
		topic = strings.Join(w, " ")
	}
	return topic
}

// title names the topic: the indirect question it asks, as long as a title can be, or
// the noun phrase it is about.
func (p *draftPlan) title() string {
	t := p.topic
	switch {
	case t == nil && p.who != nil:
		return truncateRunes(titleCase("Experiences of "+p.who.shortText()), builtinMaxTitle)
	case t == nil:
		return "Research Study"
	case t.wh != nil:
		if s := p.clauseTitle(t.wh); s != "" {
			return titleCase(capitalise(s))
		}
		if o := p.objectText(t.wh, voiceThird); o != "" && fitsTitle(o) {
			return titleCase(capitalise(o))
		}
		return truncateRunes(titleCase(capitalise(p.clauseText(t.wh, voiceTitle, true))), builtinMaxTitle)
	}
	s := t.np.text(voiceThird)
	if p.subject != nil && t.np.ofPeople && fitsTitle(s+" of "+p.subject.shortText()) {
		s += " of " + p.subject.shortText() // "The Experience of Refugees Applying for Work Permits"
	}
	if !fitsTitle(s) {
		c := t.np.c
		s = (&nounRead{c: c, sp: span{t.np.sp.from, c.headOf(t.np.sp) + 1}}).text(voiceThird)
	}
	title := titleCase(capitalise(s))
	if wordCount(s) <= 2 {
		title += " Study"
	}
	return truncateRunes(title, builtinMaxTitle)
}

// clauseTitle writes an indirect question as a title: its core (the verb and what it
// acts on) and as many of the phrases after it as fit, each whole; "" when even the
// core does not fit.
func (p *draftPlan) clauseTitle(w *whClause) string {
	title := p.clauseText(w, voiceTitle, true)
	if !fitsTitle(title) {
		return ""
	}
	c := w.c
	from := w.vp.core
	for from < w.vp.end {
		to := from + 1
		for to < w.vp.end && !c.unitStart(to) {
			to++
		}
		last := c.at(to - 1)
		clause := c.at(from).tag == "WRB" || c.at(from).low == "while"
		if !isNoun(last.tag) && last.tag != "RB" && last.tag != "RP" && last.tag != "CD" && !(clause && (isVerbTag(last.tag) || isAdj(last.tag))) || last.tag == "VBN" || last.tag == "VBG" {
			break
		}
		longer := title + " " + joinTokens(c.t[from:to], func(_ int, t token) string {
			if to, ok := builtinToOrg[t.low]; ok {
				return keepCase(to, t.text)
			}
			return t.text
		})
		if !fitsTitle(longer) {
			break
		}
		title, from = longer, to
	}
	return title
}

// unitStart reports whether a phrase after a predicate's core starts at i: a
// preposition (other than "of", which continues a noun), "when", "while" or "instead".
func (c chunk) unitStart(i int) bool {
	t := c.at(i)
	switch {
	case t.low == "of":
		return false
	case t.tag == "IN" && c.at(i-1).low != "instead" && c.at(i-1).low != "because":
		n := c.at(i + 1)
		return !n.boundary() && n.tag != "IN" // "halfway through." ends its phrase
	case t.tag == "WRB", t.low == "instead", t.tag == "TO" && !isVerbTag(c.at(i+1).tag):
		return true
	}
	return false
}

// fitsTitle reports whether s is short enough for a title.
func fitsTitle(s string) bool {
	return wordCount(s) <= builtinTitleWords && utf8.RuneCountInString(s) <= builtinTitleRunes
}

// titleFrom makes a short Title Case title from a topic written as text (refining uses
// it when a brief has lost its title).
func titleFrom(topic string, clause bool) string {
	t := strings.Fields(trimPhrase(strings.NewReplacer(`"`, "", "“", "", "”", "").Replace(swapWords(topic, builtinToOrg))))
	if len(t) > 8 { // a long topic loses its trailing qualifier: "... after the free trial"
		for j := 3; j < len(t) && j <= 8; j++ {
			if w := lowerWord(t[j]); builtinObjectCut.has(w) && w != "and" && w != "or" {
				t = t[:j]
				break
			}
		}
	}
	if len(t) > 8 {
		t = t[:8]
	}
	for len(t) > 1 && builtinTitleTail.has(lowerWord(t[len(t)-1])) {
		t = t[:len(t)-1]
	}
	title := titleCase(trimPhrase(strings.Join(t, " ")))
	if title == "" {
		return "Research Study"
	}
	if len(t) <= 2 && !clause {
		title += " Study"
	}
	return truncateRunes(title, builtinMaxTitle)
}

// isExperience reports whether a noun phrase names an experience ("the checkout
// journey"), which is asked about directly rather than as "your experience with".
func isExperience(noun string) bool {
	for _, w := range wordsOf(noun) {
		switch lowerWord(w) {
		case "experience", "experiences", "journey", "journeys":
			return true
		}
	}
	return false
}

// about is what generic questions are about, written in voice v: the thing the topic
// acts on ("our ordering app"), or the activity itself ("choosing a school for your
// children"); without either, the thing the guidance names most; "" when it names none.
func (p *draftPlan) about(v voice) string {
	t := p.topic
	if t == nil {
		if v == voiceSecond {
			return "your day-to-day experience"
		}
		return "their day-to-day experience"
	}
	if t.np != nil {
		s := t.np.text(v)
		if v == voiceSecond && isExperience(s) {
			if f := strings.Fields(s); strings.EqualFold(f[0], "the") {
				f[0] = "your" // "the onboarding experience" is theirs
				s = strings.Join(f, " ")
			}
		}
		return s
	}
	if s := p.aboutClause(t.wh, v); s != "" {
		return s
	}
	if n := p.keyNoun(); n != nil {
		return n.text(v)
	}
	return ""
}

// aboutClause is what an indirect question is about; "" when it says nothing to ask about.
func (p *draftPlan) aboutClause(w *whClause, v voice) string {
	if w.whSubj && w.vp.inner != nil {
		// "what stops them from cooking at home" is about cooking at home
		inner := &whClause{c: w.c, vp: *w.vp.inner, subj: span{0, 0}, pronoun: "they"}
		if o := p.objectText(inner, v); o != "" && inner.ownedObject() {
			return o
		}
		if g := p.gerundText(inner, v); g != "" && wordCount(g) <= 10 {
			return g
		}
		return p.objectText(inner, v)
	}
	obj := p.objectText(w, v)
	why := w.c.at(w.wh.from).low == "why"
	if obj == "" && w.vp.inner != nil && !w.whSubj {
		// "why sales teams delay migrating from spreadsheets to a CRM"
		inner := &whClause{c: w.c, vp: *w.vp.inner, pronoun: "they"}
		if o := p.objectText(inner, v); o != "" && inner.ownedObject() {
			return o
		}
		if g := p.gerundText(inner, v); g != "" && wordCount(g) <= 10 {
			return g
		}
	}
	if obj != "" && (why || w.ownedObject() || len(w.vp.verbs) > 0 && stative(w.c.at(w.vp.verbs[0]))) {
		return obj
	}
	if h := w.c.headOf(w.subj); !w.whSubj && !w.inf && h >= 0 && !p.addressed(w) && !namesPeople(w.c, h) && w.c.at(h).tag != "PRP" && (w.c.at(w.subj.from).tag == "DT" || w.c.at(w.subj.from).tag == "PRP$") {
		// "what the first day of a new job feels like" is about the first day
		return (&nounRead{c: w.c, sp: w.subj}).text(v)
	}
	if why || w.whSubj || !p.addressed(w) {
		return obj
	}
	if g := p.gerundText(w, v); g != "" && wordCount(g) <= 10 {
		return g
	}
	return obj
}

// verbatim returns the researcher's own questions first, then the engine's, then a
// closing question.
func (p *draftPlan) verbatim(researcher []string) []string {
	about := p.about(voiceSecond)
	var gen []string
	if t := p.topic; t != nil {
		gen = append(gen, p.question(*t))
	} else {
		gen = append(gen, "Can you tell me about "+about+"?")
	}
	for _, e := range p.extras {
		gen = append(gen, p.question(e))
	}
	for _, a := range p.asks {
		gen = append(gen, p.question(a))
	}
	gen = append(gen, "Can you walk me through a recent example, step by step?")
	if about != "" {
		gen = append(gen,
			asQuestion("What, if anything, do you find frustrating about "+about),
			asQuestion("If you could change one thing about "+about+", what would it be"))
	} else {
		gen = append(gen, "If you could change one thing about what we have talked about, what would it be?")
	}

	var out []string
	seen := map[string]bool{}
	add := func(q string) {
		k := strings.ToLower(q)
		if q != "" && !seen[k] && len(out) < 12 {
			seen[k] = true
			out = append(out, q)
		}
	}
	for _, q := range researcher {
		add(q)
	}
	if len(out) < 3 {
		for _, q := range gen {
			add(q)
		}
	}
	if about != "" {
		add(asQuestion("Is there anything else about " + about + " that you would like to share"))
	} else {
		add("Is there anything else you would like to share?")
	}
	return out
}

// question puts one topic to the participant.
func (p *draftPlan) question(t topicRead) string {
	if t.np != nil {
		s := t.np.text(voiceSecond)
		if isExperience(s) {
			if f := strings.Fields(s); strings.EqualFold(f[0], "the") {
				f[0] = "your"
				s = strings.Join(f, " ")
			}
			return asQuestion("Can you tell me about " + s)
		}
		return asQuestion("Can you tell me about your experience with " + s)
	}
	w := t.wh
	switch wh := w.c.at(w.wh.from).low; {
	case w.inf:
		return asQuestion("Could you tell me how you decide " + p.clauseText(w, voiceSecond, false))
	case wh == "why" && p.addressed(w) && !w.vp.modal:
		if b := p.baseText(w, voiceSecond); b != "" {
			if strings.HasPrefix(b, "not ") {
				return asQuestion("What, if anything, has led you " + "not to " + strings.TrimPrefix(b, "not "))
			}
			return asQuestion("What, if anything, has led you to " + b)
		}
		// a past event: "why they cancelled" asks what led to it, if it happened
		return asQuestion("If " + p.subjectText(w, voiceSecond) + " " + p.predicate(w, w.vp.end, voiceSecond) + ", what led to that")
	case (wh == "whether" || wh == "if") && p.addressed(w):
		if w.vp.modal {
			if b := p.verbForms(w, w.vp.end, voiceSecond, func(b string) string { return b }); b != "" {
				return asQuestion("What would make you more or less likely to " + b)
			}
		}
		if b := p.baseText(w, voiceSecond); b != "" && w.vp.tense != "VBD" && w.vp.tense != "did" {
			return asQuestion("How, if at all, do you " + b)
		}
	}
	return asQuestion("Could you tell me " + p.clauseText(w, voiceSecond, false))
}

// screener returns the pre-interview questions: role, and how often the topic comes up
// or how familiar the participant is with it.
func (p *draftPlan) screener() []string {
	out := []string{"What is your current role or occupation?"}
	t := p.topic
	if t == nil {
		return out
	}
	if t.wh != nil {
		w := t.wh
		wh := w.c.at(w.wh.from).low
		v := ""
		if len(w.vp.verbs) > 0 {
			v = baseForm(w.c.at(w.vp.verbs[0]))
		}
		if p.addressed(w) && wh != "why" && wh != "whether" && wh != "if" && !strings.HasPrefix(p.clauseText(w, voiceSecond, true), "how often") && v != "" && !builtinStative.has(v) && !w.vp.modal && !w.vp.negated && w.vp.tense != "VBD" && w.vp.tense != "did" {
			if b := p.verbForms(w, w.coreEnd(), voiceSecond, func(b string) string { return b }); b != "" {
				return append(out, asQuestion("How often, if at all, do you "+b))
			}
		}
		if o := p.objectText(w, voiceSecond); o != "" {
			return append(out, asQuestion("How familiar are you with "+o))
		}
		return out
	}
	if s := p.about(voiceSecond); !isExperience(s) {
		return append(out, asQuestion("How often, if at all, do you deal with "+s))
	}
	return out
}

// objectives returns what the study sets out to learn: the topic, further intents, the
// participants' frustrations, the decision it informs, the files' themes and, for the
// organisation's own product, improvement.
func (p *draftPlan) objectives(fileTerms []string) []string {
	var out []string
	verb := func(t topicRead) string { return capitalise(t.verb) }
	if t := p.topic; t != nil {
		switch {
		case t.wh != nil:
			s := p.clauseText(t.wh, voiceThird, false)
			if wordCount(s) > 30 {
				s = p.clauseText(t.wh, voiceThird, true)
			}
			out = append(out, asSentence(verb(*t)+" "+s))
		case isExperience(t.np.text(voiceThird)):
			out = append(out, asSentence(verb(*t)+" "+t.np.text(voiceThird)+" from the point of view of "+p.people(voiceThird)))
		case !t.np.you.empty():
			// "the barriers disabled voters face when voting" names whose experience it is
			out = append(out, asSentence(verb(*t)+" "+t.np.text(voiceThird)))
		default:
			out = append(out, asSentence("Understand the experiences of "+p.people(voiceThird)+" with "+t.np.text(voiceThird)))
		}
	} else {
		out = append(out, asSentence("Understand the day-to-day experiences of "+p.people(voiceThird)))
	}
	// further intents sharing a verb read as one objective: "Learn what bakery owners
	// expected, where they got stuck and what they use instead."
	for i := 0; i < len(p.extras); {
		e := p.extras[i]
		var parts []string
		j := i
		for ; j < len(p.extras) && p.extras[j].verb == e.verb; j++ {
			parts = append(parts, p.intentText(p.extras[j], j > i))
		}
		out = append(out, asSentence(verb(e)+" "+joinList(parts)))
		i = j
	}
	id := "Identify the main frustrations and unmet needs of " + p.people(voiceThird)
	if a := p.about(voiceThird); a != "" {
		id += " when it comes to " + a
	}
	out = append(out, asSentence(id))
	if p.decision != "" {
		out = append(out, asSentence("Inform the decision on "+p.decision))
	}
	if len(fileTerms) > 0 {
		out = append(out, asSentence("Cover the themes of the supplied material: "+joinList(fileTerms)))
	}
	if a := p.about(voiceThird); a != "" && p.owned() {
		out = append(out, asSentence("Find opportunities to improve "+a))
	}
	return out
}

// owned reports whether what the study is about is the organisation's own ("our
// ordering app"), which the study can help improve.
func (p *draftPlan) owned() bool {
	t := p.topic
	switch {
	case t == nil:
		return false
	case t.np != nil:
		return ownedSpan(t.np.c, t.np.sp)
	case t.wh.whSubj:
		return false
	}
	return p.objectText(t.wh, voiceThird) != "" && t.wh.ownedObject() && p.about(voiceThird) == p.objectText(t.wh, voiceThird)
}

// intentText writes a further thing to learn about the participants; again says the
// participants were named before in the sentence, so "they" stands for them.
func (p *draftPlan) intentText(t topicRead, again bool) string {
	if t.np != nil {
		return t.np.text(voiceThird)
	}
	w := t.wh
	if again && (w.pronoun == "they" || w.pronoun == "people") {
		parts := []string{w.whText(voiceThird), "they", p.predicate(w, w.vp.end, voiceThird)}
		return strings.Join(parts, " ")
	}
	return p.clauseText(w, voiceThird, false)
}

// estimateMinutes allows a minute per screener and four per verbatim question with its
// probes, plus five for the welcome and close, to the nearest five minutes.
func estimateMinutes(screener, verbatim int) int {
	m := 5 + screener + 4*verbatim
	m = (m + 2) / 5 * 5
	return max(10, min(90, m))
}
