package jobs

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
)

// How the built-in engine drafts a brief: it reads the research topic and the intended
// participants out of phrases such as "understand why X", "interview Y about Z" or
// "with Y", then fills fixed question and objective templates with them. Questions the
// researcher wrote (quoted in the guidance, or lines ending in '?' in the files) come
// first and are kept word for word.

// intent is one thing the guidance wants to learn: the verb it used and what follows.
type intent struct{ verb, phrase string }

// plan is what the engine read out of creation guidance.
type plan struct {
	topic        string   // as written, third person: "why customers cancel their plan"
	topicVerb    string   // the verb that introduced it: "understand", "learn", ...
	extras       []intent // further things to learn
	participants string   // intended participants; "" when not said
	clause       bool     // the topic is an indirect question ("why ...", "how ...")
	topic2       string   // the topic addressed to the participant: "why you cancel your plan"
	pred2        string   // the clause's predicate addressed to the participant, when parsed
	noun2        string   // what questions are about, addressed to the participant; "" unknown
	noun3        string   // the same in third person, for objectives
}

var (
	builtinIntentRe    = regexp.MustCompile(`(?i)^(understand|learn|find\s+out|discover|explore|uncover|figure\s+out|investigate|research|study|assess|evaluate|test|validate|gauge|measure|know|see|hear)\b(?:\s+(?:more|better|in\s+depth))?(?:\s+(?:about|on|into|of|regarding))?\s+`)
	builtinInterviewRe = regexp.MustCompile(`(?i)^(interview|interviews|interviewing|talk\s+to|talk\s+with|speak\s+to|speak\s+with|survey|ask|asking)\s+(?:with\s+)?(.+?)\s+(?:about|on|regarding)\s+`)
	builtinFromAboutRe = regexp.MustCompile(`(?i)^(?:from|with)\s+(.+?)\s+(?:about|on|regarding)\s+(.+)$`)
	builtinMarkerRe    = regexp.MustCompile(`(?i)\b(?:with|for|among|from|of|targeting|target|recruit|recruiting|interviewing|interview|participants?\s+(?:are|will\s+be|should\s+be)|participants?\s*:|audience\s*(?:is|:))\s+`)
	builtinTrailMarker = regexp.MustCompile(`(?i)\s(?:with|for|among|from|of)\s`)
	builtinLeadPrepRe  = regexp.MustCompile(`(?i)^(?:(?:more\s+)?about|on|into|of|regarding)\s+`)
	builtinReasonsRe   = regexp.MustCompile(`(?i)^(?:the\s+)?(?:main\s+)?reasons?\s+(?:why|that)\s+`)
	builtinTrailFiller = regexp.MustCompile(`(?i)(?:\s+(?:better|more|in\s+(?:more\s+)?(?:depth|detail)|today|now|first|please|too|as\s+well))+$`)
	builtinQuantityRe  = regexp.MustCompile(`(?i)^(?:(?:about|around|roughly|approximately|up\s+to|at\s+least)\s+)?(?:\d+(?:\s*(?:-|to)\s*\d+)?|a\s+few|a\s+handful\s+of|a\s+couple\s+of|a\s+dozen|dozens\s+of|some|several|many|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)\s+`)
	builtinMinutesRe   = regexp.MustCompile(`(?i)\b(\d{1,3})\s*(?:-\s*|\s)?(?:minutes?|mins?)\b`)
	builtinHoursRe     = regexp.MustCompile(`(?i)\b(half\s+an\s+hour|an\s+hour\s+and\s+a\s+half|(?:an|one|1)\s*-?\s*hours?|([2-8])\s*-?\s*hours?)\b`)
	builtinQuotedQRe   = regexp.MustCompile(`["“]([^"“”\n]{3,300}?\?)\s*["”]`)
	builtinNumberingRe = regexp.MustCompile(`^(?:[-*•·–—>]+|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|[Qq](?:uestion)?\s*\d{0,3}\s*[.:)])\s*`)
)

// The reading patterns are anchored and tried only where one of their words starts: an
// unanchored search with many alternatives costs a pass per byte.
var (
	builtinInterviewWords = []string{"interview", "talk", "speak", "survey", "ask"}
	builtinIntentWords    = []string{"understand", "learn", "find", "discover", "explore", "uncover", "figure", "investigate", "research", "study", "assess", "evaluate", "test", "validate", "gauge", "measure", "know", "see", "hear"}
)

// findAnchored returns the submatch indexes (relative to s) of the first match of the
// anchored pattern re at a word start in s where one of words begins, or nil.
func findAnchored(re *regexp.Regexp, s string, words []string) []int {
	low := asciiLower(s)
	for at := 0; at < len(low); {
		next := -1
		for _, w := range words {
			if i := strings.Index(low[at:], w); i >= 0 && (next < 0 || at+i < next) {
				next = at + i
			}
		}
		if next < 0 {
			return nil
		}
		if next == 0 || !isWordByte(low[next-1]) {
			if m := re.FindStringSubmatchIndex(s[next:]); m != nil {
				for i := range m {
					if m[i] >= 0 {
						m[i] += next
					}
				}
				return m
			}
		}
		at = next + 1
	}
	return nil
}

// asciiLower lowercases ASCII letters only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isWordByte reports whether c continues a word (ASCII letters and digits, and any
// byte of a multi-byte rune, which is most likely a letter).
func isWordByte(c byte) bool {
	return c >= 0x80 || c == '\'' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// builtinClauseBreak words end a noun phrase being read as a subject or participants.
var builtinClauseBreak = setOf("is", "are", "was", "were", "do", "does", "did", "have", "has", "had", "can", "could", "will", "would", "should", "may", "might", "must", "not", "to", "and", "or", "but", "when", "why", "how", "what", "who", "that", "which", "if", "about", "with", "for", "from", "in", "on", "at", "by", "of", "so", "because", "than", "then", "as", "into", "it", "this", "i", "we", "you", "they")

// builtinPossessive words make a group somebody's ("their children"), not the participants.
var builtinPossessive = setOf("their", "your", "my", "his", "her", "its")

// builtinRelative words let a participant phrase run on: "customers who cancelled".
var builtinRelative = setOf("who", "that", "which", "whose", "in", "at", "on", "across", "using", "living", "working", "aged", "over", "under", "between", "based")

// builtinCausative verbs take the participants as object: "what stops them from ...".
var builtinCausative = setOf("makes", "make", "stops", "stop", "drives", "drive", "helps", "help", "causes", "cause", "leads", "lead", "motivates", "motivate", "encourages", "encourage", "prevents", "prevent", "keeps", "keep", "gets", "get", "pushes", "push", "convinces", "convince", "persuades", "persuade", "brings", "bring", "attracts", "attract", "puts", "turns", "lets", "frustrates", "worries", "excites")

// builtinHowMods extend "how": "how often", "how much".
var builtinHowMods = setOf("often", "much", "many", "long", "far", "frequently", "well")

// builtinVerbAs maps an intent verb to the verb an objective starts with.
var builtinVerbAs = map[string]string{"know": "understand", "see": "understand", "hear": "understand", "study": "understand", "research": "understand", "investigate": "understand"}

// builtinTitleTail words never end a title.
var builtinTitleTail = setOf("a", "an", "the", "and", "or", "of", "to", "for", "with", "in", "on", "at", "by", "from", "their", "your", "our", "my", "his", "her", "its", "this", "that", "about", "as", "is", "are", "do", "does", "how", "why", "what", "when", "who", "which", "whether", "they", "you", "we")

// draftBrief drafts a study from creation guidance and file text. It returns an error
// wrapping ErrRefused when the guidance is empty, harmful or not a research request.
func draftBrief(guidance string, files []FileText) (kv.Brief, error) {
	g := strings.TrimSpace(cleanText(guidance))
	if g == "" {
		return kv.Brief{}, refused("the guidance is empty")
	}
	sentences := splitSentences(g)
	if r := harmReason(sentences); r != "" {
		return kv.Brief{}, refused(r)
	}
	if r := offTopicReason(g, sentences, false, len(files) > 0); r != "" {
		return kv.Brief{}, refused(r)
	}

	var p plan
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

// readSentence collects the intents and participants of one sentence.
func (p *plan) readSentence(s string) {
	pos := 0
	if q, ok := strings.CutSuffix(s, "?"); ok && builtinWhWords[firstWord(q)] {
		// A question the researcher asks themselves: "How do people pick a bank?"
		if t := strings.Fields(q); len(t) > 2 {
			i := 1
			if lowerWord(t[0]) == "how" && builtinHowMods[lowerWord(t[1])] {
				i = 2
			}
			if lowerWord(t[i]) == "do" {
				t = append(t[:i:i], t[i+1:]...)
			}
			if cp := parseClause(strings.Join(t, " ")); cp.ok {
				p.addIntent("understand", strings.Join(t, " "))
				return
			}
		}
	}
	if m := findAnchored(builtinInterviewRe, s, builtinInterviewWords); m != nil {
		verb := strings.ToLower(s[m[2]:m[3]])
		who := cleanParticipants(s[m[4]:m[5]])
		group := false
		for _, w := range wordsOf(who) {
			group = group || isGroupNoun(w)
		}
		direct := strings.HasPrefix(verb, "interview") || strings.HasPrefix(verb, "talk") || strings.HasPrefix(verb, "speak")
		if p.participants == "" && who != "" && (group || (direct && len(strings.Fields(who)) <= 8 && len(contentWords(who, 2)) > 0)) {
			p.participants = who
		}
		phrase, end := cutPhrase(s[m[1]:])
		p.addIntent("understand", phrase)
		pos = m[1] + end
	}
	for pos < len(s) {
		loc := findAnchored(builtinIntentRe, s[pos:], builtinIntentWords)
		if loc == nil {
			return
		}
		verb := strings.ToLower(collapseSpace(s[pos+loc[2] : pos+loc[3]]))
		phrase, end := cutPhrase(s[pos+loc[1]:])
		pos += loc[1] + end
		if (verb == "know" || verb == "see" || verb == "hear") && !builtinWhWords[firstWord(phrase)] {
			continue
		}
		// "learn what stops them and how they plan": the second clause shares the verb.
		var also []string
		for {
			rest := strings.TrimLeft(s[pos:], " \t")
			if len(rest) <= 4 || !strings.EqualFold(rest[:4], "and ") || !startsWithWord(asciiLower(rest[4:]), builtinWhAnd) {
				break
			}
			more, n := cutPhrase(rest[4:])
			pos = len(s) - len(rest) + 4 + n
			also = append(also, more)
		}
		if m := builtinFromAboutRe.FindStringSubmatch(phrase); m != nil {
			if who, _ := participantsFrom(m[1]); who != "" && p.participants == "" {
				p.participants = who
			}
			phrase = m[2]
		}
		p.addIntent(verb, phrase)
		for _, more := range also {
			p.addIntent(verb, more)
		}
	}
}

// Clause boundaries inside a sentence: words that end a phrase, and joiners that end it
// when an intent verb follows ("... and learn what ...").
var (
	builtinCutWords = []string{"so that", "so we", "so i", "in order to", "because", "as well as", "and then", "but"}
	builtinJoiners  = []string{"and also ", "and to ", "and ", "to ", "then ", "also "}
	builtinWhAnd    = []string{"why", "how", "what", "whether", "when", "where", "which", "who"}
)

// cutPhrase returns the part of rest before the first clause boundary and where it ends.
func cutPhrase(rest string) (string, int) {
	low := asciiLower(rest)
	for i := 0; i < len(low); i++ {
		switch c := low[i]; c {
		case ',', ';', ':', '(', ')', '[', ']', '!', '?':
			return rest[:i], i
		case '.':
			if i+1 == len(low) || low[i+1] == ' ' || low[i+1] == '\t' {
				return rest[:i], i
			}
		case ' ', '\t':
			tail := low[i+1:]
			if strings.HasPrefix(tail, "- ") || startsWithWord(tail, builtinCutWords) {
				return rest[:i], i
			}
			for _, j := range builtinJoiners {
				if strings.HasPrefix(tail, j) && startsWithWord(tail[len(j):], builtinIntentWords) {
					return rest[:i], i
				}
			}
			if strings.HasPrefix(tail, "and ") && startsWithWord(tail[4:], builtinWhAnd) {
				return rest[:i], i
			}
		}
	}
	return rest, len(rest)
}

// startsWithWord reports whether s starts with one of words followed by a word boundary.
func startsWithWord(s string, words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(s, w) && (len(s) == len(w) || !isWordByte(s[len(w)])) {
			return true
		}
	}
	return false
}

// addIntent cleans a phrase and records it as the topic, or as a further intent.
func (p *plan) addIntent(verb, phrase string) {
	phrase = trimPhrase(phrase)
	if lead := firstWord(phrase); lead == "with" || lead == "for" || lead == "among" || lead == "amongst" {
		// "a study with designers": the participants, not a topic
		if who, whole := participantsFrom(strings.TrimSpace(phrase[len(lead):])); who != "" && whole {
			if p.participants == "" {
				p.participants = who
			}
			return
		}
	}
	phrase = builtinLeadPrepRe.ReplaceAllString(phrase, "")
	phrase = builtinReasonsRe.ReplaceAllString(phrase, "why ")
	if cp := parseClause(phrase); !cp.ok || isPronounSubject(cp.subject) {
		phrase = p.takeTrailingParticipants(phrase)
	}
	phrase = trimPhrase(builtinTrailFiller.ReplaceAllString(phrase, ""))
	if w := strings.Fields(phrase); len(w) > 14 {
		phrase = strings.Join(w[:14], " ")
	}
	if len(contentWords(phrase, 3)) == 0 {
		return
	}
	if t := strings.Fields(phrase); builtinWhWords[lowerWord(t[0])] {
		t[0] = lowerWord(t[0])
		if t[0] == "if" {
			t[0] = "whether"
		}
		phrase = strings.Join(t, " ")
	}
	if p.topic == "" {
		p.topic, p.topicVerb = phrase, verb
		return
	}
	if len(p.extras) >= 3 || strings.EqualFold(phrase, p.topic) {
		return
	}
	for _, e := range p.extras {
		if strings.EqualFold(e.phrase, phrase) {
			return
		}
	}
	p.extras = append(p.extras, intent{verb, phrase})
}

func isPronounSubject(s string) bool {
	s = lowerWord(s)
	return s == "they" || s == "them" || s == "we" || s == "i" || s == "you"
}

// takeTrailingParticipants moves a trailing "with nurses" or "for small businesses" from
// the topic to the participants.
func (p *plan) takeTrailingParticipants(phrase string) string {
	for _, l := range builtinTrailMarker.FindAllStringIndex(phrase, -1) {
		if who, whole := participantsFrom(phrase[l[1]:]); who != "" && whole {
			if strings.EqualFold(strings.TrimSpace(phrase[l[0]:l[1]]), "of") && len(contentWords(phrase[:l[0]], 3)) < 2 {
				continue // "the needs of parents" is the topic, not a group
			}
			if p.participants == "" {
				p.participants = who
			}
			return phrase[:l[0]]
		}
	}
	return phrase
}

// findParticipants looks for "with Y", "for Y", "among Y" ... where Y names a group of people.
func findParticipants(sentences []string) string {
	for _, s := range sentences {
		for _, l := range builtinMarkerRe.FindAllStringIndex(s, -1) {
			if who, _ := participantsFrom(s[l[1]:]); who != "" {
				return who
			}
		}
	}
	return ""
}

// participantsFrom reads a group of people at the start of tail ("small business owners
// who use spreadsheets"); whole reports whether the group is all of tail.
func participantsFrom(tail string) (who string, whole bool) {
	t := strings.Fields(tail)
	k := -1
	for j := 0; j < len(t) && j < 5; j++ {
		w := lowerWord(trimPhrase(t[j]))
		if isGroupNoun(w) {
			k = j
			break
		}
		if builtinClauseBreak[w] || builtinPossessive[w] || strings.ContainsAny(t[j], ",;:.!?") {
			return "", false
		}
	}
	if k < 0 {
		return "", false
	}
	end := k + 1
	if !strings.ContainsAny(t[k], ",;:.!?") && end < len(t) && builtinRelative[lowerWord(t[end])] {
		for end < len(t) && end < k+12 {
			w := lowerWord(t[end])
			if w == "about" || w == "regarding" || w == "to" || w == "so" || w == "because" {
				break
			}
			end++
			if strings.ContainsAny(t[end-1], ",;:.!?") {
				break
			}
		}
	}
	return cleanParticipants(strings.Join(t[:end], " ")), end == len(t)
}

// cleanParticipants drops counts ("10", "a few") and stray punctuation from a group.
func cleanParticipants(s string) string {
	s = builtinQuantityRe.ReplaceAllString(trimPhrase(collapseSpace(s)), "")
	w := strings.Fields(trimPhrase(s))
	if len(w) > 12 {
		w = w[:12]
	}
	if len(w) > 0 {
		if lw := lowerWord(w[0]); builtinStopWords[lw] || isGroupNoun(lw) {
			w[0] = lw
		}
	}
	return trimPhrase(strings.Join(w, " "))
}

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
	if len(t) > 0 && builtinWhWords[lowerWord(t[0])] {
		t2 := strings.Fields(cp.topic2)
		t2[0] = lowerWord(t2[0])
		if t2[0] == "if" {
			t2[0] = "whether"
		}
		cp.topic2 = strings.Join(t2, " ")
	}
	if len(t) < 3 || !builtinWhWords[lowerWord(t[0])] {
		return cp
	}
	i := 1
	if lowerWord(t[0]) == "how" && builtinHowMods[lowerWord(t[i])] {
		i++
	}
	aux := ""
	if i < len(t) {
		if w := lowerWord(t[i]); w == "do" || w == "did" {
			aux = w
			i++
		}
	}
	if i < len(t)-2 && aux == "" && builtinCausative[lowerWord(t[i])] {
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
			if builtinClauseBreak[w] || strings.ContainsAny(t[k], ",;:") {
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
		if builtinClauseBreak[w] || strings.ContainsAny(t[k], ",;:") || (strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")) {
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
			if builtinDeterminers[lowerWord(t[k])] {
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

// Words read around a predicate's object.
var (
	builtinAuxLead     = setOf("don't", "do", "does", "did", "didn't", "doesn't", "not", "are", "is", "aren't", "isn't", "have", "haven't", "has", "can", "can't", "cannot", "could", "will", "won't", "would", "wouldn't", "should", "were", "was", "still", "often", "usually", "sometimes", "always", "never", "really", "actually", "currently", "regularly", "rarely", "even", "also", "just", "typically", "frequently", "generally", "ever", "already", "first", "end", "ending")
	builtinDeterminers = setOf("the", "a", "an", "your", "our", "their", "my", "his", "her", "this", "that", "these", "those", "some", "any", "its")
	builtinPreps       = setOf("with", "to", "for", "about", "on", "in", "at", "from", "into", "of", "between", "up", "out", "through", "over", "around", "by", "onto", "off")
	builtinObjectCut   = setOf("after", "before", "during", "when", "while", "because", "if", "so", "without", "instead", "rather", "than", "every", "each", "at", "in", "on", "from", "for", "to", "with", "by", "via", "compared", "across", "within", "since", "until", "over", "and", "or", "but", "who", "that", "which")
)

// objectOf returns the object of a predicate ("use our mobile app at work" gives "our
// mobile app"), or "" when there is none worth naming.
func objectOf(pred string) string {
	t := strings.Fields(pred)
	i, aux := 0, false
	for i < len(t) && builtinAuxLead[lowerWord(t[i])] {
		i, aux = i+1, true
	}
	if i < len(t) && !(aux && builtinDeterminers[lowerWord(t[i])]) {
		i++ // the main verb
	}
	for i < len(t) && builtinPreps[lowerWord(t[i])] {
		i++
	}
	var obj []string
	for j := i; j < len(t) && len(obj) < 6; j++ {
		if len(obj) > 0 && builtinObjectCut[lowerWord(t[j])] {
			break
		}
		obj = append(obj, t[j])
		if strings.ContainsAny(t[j], ",;:") {
			break
		}
	}
	s := trimPhrase(strings.Join(obj, " "))
	if len(contentWords(s, 3)) == 0 {
		return ""
	}
	return s
}

// gerundPhrase returns "choosing a school" for the predicate "choose a school" when its
// object alone would read badly as a subject ("a school", "developers"); else "".
func gerundPhrase(pred, object string) string {
	t := strings.Fields(pred)
	if object == "" || len(t) < 2 || builtinAuxLead[lowerWord(t[0])] {
		return ""
	}
	o := strings.Fields(object)
	rest := strings.Join(t[1:], " ")
	if builtinWhWords[lowerWord(o[0])] { // "decide which bank to use"
		return gerund(lowerWord(t[0])) + " " + rest
	}
	if d := lowerWord(o[0]); d != "a" && d != "an" && !isGroupNoun(o[len(o)-1]) {
		return ""
	}
	i := strings.Index(rest, object)
	if i < 0 {
		return ""
	}
	return gerund(lowerWord(t[0])) + " " + rest[:i+len(object)]
}

// gerund returns the -ing form of a verb: "plan" → "planning", "choose" → "choosing".
func gerund(v string) string {
	n := len(v)
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	switch {
	case n >= 3 && strings.HasSuffix(v, "ie"):
		return v[:n-2] + "ying"
	case n >= 3 && strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee") && !strings.HasSuffix(v, "ye") && !strings.HasSuffix(v, "oe"):
		return v[:n-1] + "ing"
	case n >= 3 && n <= 4 && !vowel(v[n-1]) && vowel(v[n-2]) && !vowel(v[n-3]) && strings.IndexByte("wxy", v[n-1]) < 0:
		return v + v[n-1:] + "ing"
	}
	return v + "ing"
}

// settle derives the question slots from the topic (or, without one, from key terms)
// and returns the title.
func (p *plan) settle(guidance string, fileTerms []string) string {
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
	p.clause = builtinWhWords[firstWord(p.topic)]
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
var builtinTopicNoise = setOf("research", "study", "studies", "interview", "interviews", "interviewing", "project", "survey", "user", "ux", "please", "about", "on", "into", "of", "a", "an", "the", "run", "do", "conduct", "new", "talk", "speak", "to", "with")

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
	for len(t) > 0 && (builtinTopicNoise[lowerWord(t[0])] || who[lowerWord(t[0])]) {
		t = t[1:]
	}
	for len(t) > 0 && (builtinTopicNoise[lowerWord(t[len(t)-1])] || who[lowerWord(t[len(t)-1])]) {
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
			if w := lowerWord(t[j]); builtinObjectCut[w] && w != "and" && w != "or" {
				t = t[:j]
				break
			}
		}
	}
	if len(t) > 8 {
		t = t[:8]
	}
	for len(t) > 1 && builtinTitleTail[lowerWord(t[len(t)-1])] {
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
func (p *plan) about() string {
	if p.noun2 == "" {
		return "this"
	}
	return p.noun2
}

// verbatim returns the researcher's own questions first, then the engine's, then a
// closing question.
func (p *plan) verbatim(researcher []string) []string {
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
		if builtinWhWords[firstWord(e.phrase)] {
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
var builtinStative = setOf("think", "feel", "believe", "know", "want", "like", "prefer", "expect", "perceive", "view", "see", "understand", "value", "trust", "need", "hope", "wish", "mean", "care", "love", "hate", "dislike", "remember", "imagine")

// screener returns the pre-interview questions: role, and how often the topic comes up.
func (p *plan) screener() []string {
	out := []string{"What is your current role or occupation?"}
	low := strings.ToLower(p.topic2)
	switch {
	case p.noun2 == "your day-to-day experience":
		// nothing more to screen for without a topic
	case p.pred2 != "" && !builtinAuxLead[firstWord(p.pred2)] && !builtinStative[firstWord(p.pred2)] && !builtinPreps[firstWord(p.pred2)] && !strings.HasPrefix(low, "how often") && !strings.HasPrefix(low, "whether"):
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
func (p *plan) objectives(fileTerms []string) []string {
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

// questionsIn returns the questions written in file text: lines ending in '?', with list
// markers and any lead-in sentence removed, at most builtinMaxFileQs of them.
func questionsIn(texts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, text := range texts {
		for line := range strings.Lines(text) {
			q := questionIn(line)
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
	if u, ok := unquote(line); ok {
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
	if u, ok := unquote(line); ok {
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

// estimateMinutes allows a minute per screener and four per verbatim question with its
// probes, plus five for the welcome and close, to the nearest five minutes.
func estimateMinutes(screener, verbatim int) int {
	m := 5 + screener + 4*verbatim
	m = (m + 2) / 5 * 5
	return max(10, min(90, m))
}
