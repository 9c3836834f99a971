package moderator

import (
	"strings"
	"unicode"

	"interviewd/kv"
)

// How the built-in engine drafts a brief: it reads the research topic and the intended
// participants out of phrases such as "understand why X", "interview Y about Z" or
// "with Y", then fills fixed question and objective templates with them. Questions the
// researcher wrote (quoted in the guidance, or lines ending in '?' in the files) come
// first and are kept word for word.

// draftIntent is one thing the guidance wants to learn: the verb it used and what follows.
type draftIntent struct{ verb, phrase string }

// draftPlan is what the engine read out of creation guidance.
type draftPlan struct {
	topic        string        // as written, third person: "why customers cancel their plan"
	topicVerb    string        // the verb that introduced it: "understand", "learn", ...
	extras       []draftIntent // further things to learn
	participants string        // intended participants; "" when not said
	clause       bool          // the topic is an indirect question ("why ...", "how ...")
	topic2       string        // the topic addressed to the participant: "why you cancel your plan"
	pred2        string        // the clause's predicate addressed to the participant, when parsed
	noun2        string        // what questions are about, addressed to the participant; "" unknown
	noun3        string        // the same in third person, for objectives
}

// builtinVerbAs maps an intent verb to the verb an objective starts with.
var builtinVerbAs = map[string]string{"know": "understand", "see": "understand", "hear": "understand", "study": "understand", "research": "understand", "investigate": "understand"}

// builtinTitleTail words never end a title.
var builtinTitleTail = wordSet("a", "an", "the", "and", "or", "of", "to", "for", "with", "in", "on", "at", "by", "from", "their", "your", "our", "my", "his", "her", "its", "this", "that", "about", "as", "is", "are", "do", "does", "how", "why", "what", "when", "who", "which", "whether", "they", "you", "we")

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

	var p draftPlan
	for _, s := range sentences {
		p.readSentence(s)
	}
	if cp := parseClause(p.topic); p.participants == "" && cp.ok && !isPronounSubject(cp.subject) && lowerWord(cp.subject) != "people" {
		p.participants = cleanParticipants(cp.subject)
	}
	if p.participants == "" {
		p.participants = findParticipants(sentences)
	}

	texts := make([]string, 0, len(files))
	for _, f := range files {
		t := f.Text
		if len(t) > builtinMaxScan {
			t = t[:builtinMaxScan]
		}
		texts = append(texts, cleanText(t))
	}
	skip := map[string]bool{}
	for _, w := range contentWords(p.topic+" "+p.participants, 1) {
		skip[w], skip[stemWord(w)] = true, true
	}
	fileTerms := keyTerms(texts, 3, skip)
	title := p.settle(g, fileTerms)

	var researcher []string
	for _, m := range builtinQuotedQRe.FindAllStringSubmatch(g, -1) {
		if harmReason([]string{m[1]}) == "" {
			researcher = append(researcher, asQuestion(m[1]))
		}
	}
	researcher = append(researcher, questionsIn(texts)...)

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

// settle derives the question slots from the topic (or, without one, from key terms)
// and returns the title.
func (p *draftPlan) settle(guidance string, fileTerms []string) string {
	if p.topic == "" {
		p.topic = shortTopic(guidance, p.participants)
	}
	if p.topic == "" {
		skip := map[string]bool{}
		for _, w := range contentWords(p.participants, 1) {
			skip[w], skip[stemWord(w)] = true, true
		}
		terms := keyTerms([]string{guidance}, 2, skip)
		if len(terms) == 0 && len(fileTerms) > 0 {
			terms = fileTerms[:min(2, len(fileTerms))]
		}
		switch {
		case len(terms) > 0:
			p.topic = joinList(terms)
		case p.participants != "":
			p.noun2, p.noun3, p.topicVerb = "your day-to-day experience", "their day-to-day experience", "understand"
			return truncateRunes(titleCase("Experiences of "+swapWords(p.participants, builtinToOrg)), builtinMaxTitle)
		default:
			p.topic = "everyday experiences"
		}
		p.topicVerb = "understand"
	}
	p.clause = builtinWhWords.has(firstWord(p.topic))
	if p.clause {
		cp := parseClause(p.topic)
		p.topic2 = cp.topic2
		if cp.ok {
			p.pred2 = cp.pred2
			p.noun2, p.noun3 = objectOf(cp.pred2), objectOf(cp.pred)
			if g := gerundPhrase(cp.pred2, p.noun2); g != "" {
				p.noun2, p.noun3 = g, gerundPhrase(cp.pred, p.noun3)
			}
			if s := lowerWord(cp.subject); (s == "they" || s == "them") && p.participants != "" {
				// "how they choose a school" reads "how parents choose a school" in the title.
				t := strings.Fields(p.topic)
				t[len(strings.Fields(cp.head))] = p.participants
				p.topic = strings.Join(t, " ")
			}
		}
	} else {
		p.noun3 = swapWords(p.topic, builtinToOrg)
		p.noun2 = secondPerson(p.topic)
		if t := strings.Fields(p.noun2); len(t) > 1 && lowerWord(t[0]) == "the" && isExperience(p.noun2) {
			p.noun2 = "your " + strings.Join(t[1:], " ") // "the onboarding experience" is theirs
		}
	}
	return titleFrom(p.topic, p.clause)
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

// titleFrom makes a short Title Case title from a topic.
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

// about is what generic questions are about.
func (p *draftPlan) about() string {
	if p.noun2 == "" {
		return "this"
	}
	return p.noun2
}

// verbatim returns the researcher's own questions first, then the engine's, then a
// closing question.
func (p *draftPlan) verbatim(researcher []string) []string {
	about := p.about()
	var gen []string
	experience := !p.clause && isExperience(about)
	switch {
	case p.clause:
		gen = append(gen, asQuestion("Could you tell me "+p.topic2))
	case experience:
		gen = append(gen, asQuestion("Can you tell me about "+about))
	default:
		gen = append(gen, asQuestion("Can you tell me about your experience with "+about))
	}
	for _, e := range p.extras {
		if builtinWhWords.has(firstWord(e.phrase)) {
			gen = append(gen, asQuestion("Could you tell me "+parseClause(e.phrase).topic2))
		} else {
			gen = append(gen, asQuestion("Can you tell me about "+secondPerson(e.phrase)))
		}
	}
	if p.clause || experience {
		gen = append(gen, "Can you walk me through a recent example, step by step?")
	} else {
		gen = append(gen, asQuestion("Can you walk me through the last time you dealt with "+about))
	}
	gen = append(gen,
		asQuestion("What do you find most frustrating about "+about),
		asQuestion("If you could change one thing about "+about+", what would it be"))

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
	add(asQuestion("Is there anything else about " + about + " that you would like to share"))
	return out
}

// builtinStative verbs describe a view, not something done: "how often do you think of
// X" makes no sense.
var builtinStative = wordSet("think", "feel", "believe", "know", "want", "like", "prefer", "expect", "perceive", "view", "see", "understand", "value", "trust", "need", "hope", "wish", "mean", "care", "love", "hate", "dislike", "remember", "imagine")

// screener returns the pre-interview questions: role, and how often the topic comes up.
func (p *draftPlan) screener() []string {
	out := []string{"What is your current role or occupation?"}
	low := strings.ToLower(p.topic2)
	switch {
	case p.noun2 == "your day-to-day experience":
		// nothing more to screen for without a topic
	case p.pred2 != "" && !builtinAuxLead.has(firstWord(p.pred2)) && !builtinStative.has(firstWord(p.pred2)) && !builtinPreps.has(firstWord(p.pred2)) && !strings.HasPrefix(low, "how often") && !strings.HasPrefix(low, "whether"):
		out = append(out, asQuestion("How often do you "+p.pred2))
	case isExperience(p.noun3):
		out = append(out, asQuestion("How familiar are you with "+p.noun3))
	case p.noun2 != "":
		out = append(out, asQuestion("How often do you deal with "+p.noun2))
	default:
		out = append(out, "How often does this come up in your day-to-day life?")
	}
	return out
}

// objectives returns what the study sets out to learn: the topic, further intents, the
// participants' frustrations, the files' themes and, for a product, improvement.
func (p *draftPlan) objectives(fileTerms []string) []string {
	who := p.participants
	if who == "" {
		who = "participants"
	}
	verb := func(v string) string {
		if to, ok := builtinVerbAs[v]; ok {
			return to
		}
		return v
	}
	var out []string
	switch {
	case p.clause:
		out = append(out, asSentence(verb(p.topicVerb)+" "+swapWords(p.topic, builtinToOrg)))
	case isExperience(p.noun3):
		n := strings.Fields(p.noun3)
		if lowerWord(n[0]) == "their" {
			n[0] = "the"
		}
		out = append(out, asSentence("Understand "+strings.Join(n, " ")+" from the point of view of "+who))
	default:
		out = append(out, asSentence("Understand the experiences of "+who+" with "+p.noun3))
	}
	for _, e := range p.extras {
		out = append(out, asSentence(verb(e.verb)+" "+swapWords(e.phrase, builtinToOrg)))
	}
	id := "Identify the main frustrations and unmet needs of " + who
	if p.noun3 != "" {
		id += " when it comes to " + p.noun3
	}
	out = append(out, asSentence(id))
	if len(fileTerms) > 0 {
		out = append(out, asSentence("Cover the themes of the supplied material: "+joinList(fileTerms)))
	}
	if d := firstWord(p.noun3); d == "our" || d == "the" {
		out = append(out, asSentence("Find opportunities to improve "+p.noun3))
	}
	return out
}

// estimateMinutes allows a minute per screener and four per verbatim question with its
// probes, plus five for the welcome and close, to the nearest five minutes.
func estimateMinutes(screener, verbatim int) int {
	m := 5 + screener + 4*verbatim
	m = (m + 2) / 5 * 5
	return max(10, min(90, m))
}
