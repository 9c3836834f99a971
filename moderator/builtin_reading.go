package moderator

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How the built-in engine reads creation guidance: the research topic and further
// intents come from phrases such as "understand why X", "learn how X" or "interview Y
// about Z"; the participants from "interview Y", "with Y", "for Y" when Y names a group
// of people; questions from quoted text and from lines of the files ending in '?'.

var (
	builtinIntentRe    = newLazyRegexp(`(?i)^(understand|learn|find\s+out|discover|explore|uncover|figure\s+out|investigate|research|study|assess|evaluate|test|validate|gauge|measure|know|see|hear)\b(?:\s+(?:more|better|in\s+depth))?(?:\s+(?:about|on|into|of|regarding))?\s+`)
	builtinInterviewRe = newLazyRegexp(`(?i)^(interview|interviews|interviewing|talk\s+to|talk\s+with|speak\s+to|speak\s+with|survey|ask|asking)\s+(?:with\s+)?(.+?)\s+(?:about|on|regarding)\s+`)
	builtinFromAboutRe = newLazyRegexp(`(?i)^(?:from|with)\s+(.+?)\s+(?:about|on|regarding)\s+(.+)$`)
	builtinMarkerRe    = newLazyRegexp(`(?i)\b(?:with|for|among|from|of|targeting|target|recruit|recruiting|interviewing|interview|participants?\s+(?:are|will\s+be|should\s+be)|participants?\s*:|audience\s*(?:is|:))\s+`)
	builtinTrailMarker = newLazyRegexp(`(?i)\s(?:with|for|among|from|of)\s`)
	builtinLeadPrepRe  = newLazyRegexp(`(?i)^(?:(?:more\s+)?about|on|into|of|regarding)\s+`)
	builtinReasonsRe   = newLazyRegexp(`(?i)^(?:the\s+)?(?:main\s+)?reasons?\s+(?:why|that)\s+`)
	builtinTrailFiller = newLazyRegexp(`(?i)(?:\s+(?:better|more|in\s+(?:more\s+)?(?:depth|detail)|today|now|first|please|too|as\s+well))+$`)
	builtinQuantityRe  = newLazyRegexp(`(?i)^(?:(?:about|around|roughly|approximately|up\s+to|at\s+least)\s+)?(?:\d+(?:\s*(?:-|to)\s*\d+)?|a\s+few|a\s+handful\s+of|a\s+couple\s+of|a\s+dozen|dozens\s+of|some|several|many|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)\s+`)
	builtinMinutesRe   = newLazyRegexp(`(?i)\b(\d{1,3})\s*(?:-\s*|\s)?(?:minutes?|mins?)\b`)
	builtinHoursRe     = newLazyRegexp(`(?i)\b(half\s+an\s+hour|an\s+hour\s+and\s+a\s+half|(?:an|one|1)\s*-?\s*hours?|([2-8])\s*-?\s*hours?)\b`)
	builtinQuotedQRe   = newLazyRegexp(`["“]([^"“”\n]{3,300}?\?)\s*["”]`)
	builtinNumberingRe = newLazyRegexp(`^(?:[-*•·–—>]+|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|[Qq](?:uestion)?\s*\d{0,3}\s*[.:)])\s*`)
)

// builtinMaxIntentTries bounds the intent phrases looked for in one sentence.
const builtinMaxIntentTries = 8

// The reading patterns are anchored and tried only where one of their words starts: an
// unanchored search with many alternatives costs a pass per byte.
var (
	builtinInterviewWords = []string{"interview", "talk", "speak", "survey", "ask"}
	builtinIntentWords    = []string{"understand", "learn", "find", "discover", "explore", "uncover", "figure", "investigate", "research", "study", "assess", "evaluate", "test", "validate", "gauge", "measure", "know", "see", "hear"}
)

// findAnchored returns the submatch indexes (relative to s) of the first match of the
// anchored pattern re at a word start in s where one of words begins, or nil.
// Each word's next position is remembered, so a search reads s about once per word.
func findAnchored(re *lazyRegexp, s string, words []string) []int {
	low := asciiLower(s)
	pos := make([]int, len(words)) // next start of each word at or after at; -1 none left
	for i := range pos {
		pos[i] = -2
	}
	for at := 0; at < len(low); {
		next := -1
		for k, w := range words {
			if pos[k] == -2 || (pos[k] >= 0 && pos[k] < at) {
				pos[k] = -1
				if i := strings.Index(low[at:], w); i >= 0 {
					pos[k] = at + i
				}
			}
			if pos[k] >= 0 && (next < 0 || pos[k] < next) {
				next = pos[k]
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
var builtinClauseBreak = wordSet("is", "are", "was", "were", "do", "does", "did", "have", "has", "had", "can", "could", "will", "would", "should", "may", "might", "must", "not", "to", "and", "or", "but", "when", "why", "how", "what", "who", "that", "which", "if", "about", "with", "for", "from", "in", "on", "at", "by", "of", "so", "because", "than", "then", "as", "into", "it", "this", "i", "we", "you", "they")

// builtinPossessive words make a group somebody's ("their children"), not the participants.
var builtinPossessive = wordSet("their", "your", "my", "his", "her", "its")

// builtinRelative words let a participant phrase run on: "customers who cancelled".
var builtinRelative = wordSet("who", "that", "which", "whose", "in", "at", "on", "across", "using", "living", "working", "aged", "over", "under", "between", "based")

// readSentence collects the intents and participants of one sentence.
func (p *draftPlan) readSentence(s string) {
	pos := 0
	if q, ok := strings.CutSuffix(s, "?"); ok && builtinWhWords.has(firstWord(q)) {
		// A question the researcher asks themselves: "How do people pick a bank?"
		if t := strings.Fields(q); len(t) > 2 {
			i := 1
			if lowerWord(t[0]) == "how" && builtinHowMods.has(lowerWord(t[1])) {
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
	// Bounded so a long run-on sentence costs linear time: a brief uses at most four intents.
	for tries := 0; pos < len(s) && tries < builtinMaxIntentTries; tries++ {
		loc := findAnchored(builtinIntentRe, s[pos:], builtinIntentWords)
		if loc == nil {
			return
		}
		verb := strings.ToLower(collapseSpace(s[pos+loc[2] : pos+loc[3]]))
		phrase, end := cutPhrase(s[pos+loc[1]:])
		pos += loc[1] + end
		if (verb == "know" || verb == "see" || verb == "hear") && !builtinWhWords.has(firstWord(phrase)) {
			continue
		}
		// "learn what stops them and how they plan": the second clause shares the verb.
		var also []string
		for len(also) < 3 {
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
func (p *draftPlan) addIntent(verb, phrase string) {
	phrase = trimPhrase(truncateRunes(phrase, 300))
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
	if t := strings.Fields(phrase); builtinWhWords.has(lowerWord(t[0])) {
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
	p.extras = append(p.extras, draftIntent{verb, phrase})
}

func isPronounSubject(s string) bool {
	s = lowerWord(s)
	return s == "they" || s == "them" || s == "we" || s == "i" || s == "you"
}

// takeTrailingParticipants moves a trailing "with nurses" or "for small businesses" from
// the topic to the participants.
func (p *draftPlan) takeTrailingParticipants(phrase string) string {
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
	short := truncateRunes(tail, 200) // a group is at most 17 words
	t := strings.Fields(short)
	k := -1
	for j := 0; j < len(t) && j < 5; j++ {
		w := lowerWord(trimPhrase(t[j]))
		if isGroupNoun(w) {
			k = j
			break
		}
		if builtinClauseBreak.has(w) || builtinPossessive.has(w) || strings.ContainsAny(t[j], ",;:.!?") {
			return "", false
		}
	}
	if k < 0 {
		return "", false
	}
	end := k + 1
	if !strings.ContainsAny(t[k], ",;:.!?") && end < len(t) && builtinRelative.has(lowerWord(t[end])) {
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
	return cleanParticipants(strings.Join(t[:end], " ")), end == len(t) && short == tail
}

// cleanParticipants drops counts ("10", "a few") and stray punctuation from a group.
func cleanParticipants(s string) string {
	s = builtinQuantityRe.ReplaceAllString(trimPhrase(collapseSpace(s)), "")
	w := strings.Fields(trimPhrase(s))
	if len(w) > 12 {
		w = w[:12]
	}
	if len(w) > 0 {
		if lw := lowerWord(w[0]); builtinStopWords.has(lw) || isGroupNoun(lw) {
			w[0] = lw
		}
	}
	return trimPhrase(strings.Join(w, " "))
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
