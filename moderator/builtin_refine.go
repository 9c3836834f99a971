package moderator

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"interviewd/kv"
)

// How the built-in engine refines a brief: guidance is cut into instructions (at
// sentence ends, ';', "then", and "and" before an instruction verb, never inside double
// quotes), and each instruction must match one of a fixed set of phrasings. The whole
// change is refused when any instruction is not understood, so a refine never half
// happens and never silently does nothing; the refusal names every instruction it could
// not apply, says why when it can tell ("change objective 1" says nothing of what to),
// and lists the phrasings it understands (builtinRefineHelp).

// builtinRefineHelp is what a refusal offers instead: the phrasings the engine applies.
const builtinRefineHelp = `It understands: add a question about …; add the question "…"; add a screener about …; add an objective to …; remove question 3; remove the question about …; reword question 2 to …; change objective 1 to …; remove objective 2; rename the study to …; make it 20 minutes; make it shorter.`

// builtinInstructionVerbs start an instruction; "and" or a comma before one splits.
var builtinInstructionVerbs = wordSet("add", "include", "insert", "append", "remove", "delete", "drop", "cut", "reword", "rewrite", "rephrase", "change", "replace", "edit", "update", "modify", "amend", "rename", "retitle", "call", "name", "title", "make", "set", "shorten", "extend", "limit", "cap", "keep", "ask", "take", "get")

// builtinCourtesy are fragments that carry no instruction.
var builtinCourtesy = wordSet("thanks", "thank you", "thx", "cheers", "please", "great", "perfect", "ok", "okay", "looks good", "that's all", "that is all", "nothing else", "hi", "hello", "hey", "good", "nice", "thanks a lot", "many thanks")

const (
	builtinOrdinals = `first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final`
	builtinNumRef   = `\s*(?:number\s*|no\.?\s*|#\s*)?(\d{1,4})`
	builtinVerbQ    = `(?:verbatim\s+|interview\s+|main\s+)?(?:question|q)`
	builtinScreenQ  = `(?:screener|screening|pre-interview|pre\s+interview|qualifying)(?:\s+question)?`
	builtinObjQ     = `(?:objective|goal|aim)`
	builtinAddLead  = `^(?:add|include|insert|append|put\s+in)\s+(?:the|this|a|an|another|one\s+more|a\s+new|new|some)?\s*`
	builtinDelLead  = `^(?:remove|delete|drop|cut|get\s+rid\s+of|take\s+out)\s+`
	builtinEditLead = `^(?:reword|rewrite|rephrase|change|replace|edit|update|modify|amend|make)\s+`
	builtinEditTo   = `\s*(?:to\s+read|to\s+say|so\s+(?:that\s+)?it\s+(?:reads|says)|to|with|into|as|:)\s*:?\s*(.+)$`
)

// instructionRef builds "the second question" / "question 2" / "question #2" for one list kind.
func instructionRef(kind string) string {
	return `(?:the\s+)?(?:(` + builtinOrdinals + `|\d{1,4}(?:st|nd|rd|th))\s+` + kind + `|` + kind + builtinNumRef + `)`
}

// A refine rule: a pattern over one instruction and what it does to the brief.
type refineRule struct {
	re    *lazyRegexp
	apply func(b *kv.Brief, m []string) error
}

// builtinRefineRules are tried in order; the first match wins.
var builtinRefineRules = []refineRule{
	{newLazyRegexp(`(?i)` + builtinDelLead + instructionRef(builtinVerbQ) + `$`), func(b *kv.Brief, m []string) error {
		return removeAt(&b.VerbatimQuestions, m[1], m[2], "question", 1)
	}},
	{newLazyRegexp(`(?i)` + builtinDelLead + `(?:the\s+)?` + builtinVerbQ + `\s+(?:about|on|regarding|mentioning|that\s+mentions|that\s+asks\s+about|asking\s+about|on\s+the\s+topic\s+of)\s+(.+)$`), removeAbout},
	{newLazyRegexp(`(?i)` + builtinDelLead + instructionRef(builtinScreenQ) + `$`), func(b *kv.Brief, m []string) error {
		return removeAt(&b.PreInterviewQuestions, m[1], m[2], "screener question", 0)
	}},
	{newLazyRegexp(`(?i)` + builtinDelLead + instructionRef(builtinObjQ) + `$`), func(b *kv.Brief, m []string) error {
		return removeAt(&b.Objectives, m[1], m[2], "objective", 1)
	}},
	{newLazyRegexp(`(?i)` + builtinEditLead + instructionRef(builtinVerbQ) + builtinEditTo), func(b *kv.Brief, m []string) error {
		return rewordAt(b.VerbatimQuestions, m[1], m[2], m[3], "question")
	}},
	{newLazyRegexp(`(?i)` + builtinEditLead + instructionRef(builtinScreenQ) + builtinEditTo), func(b *kv.Brief, m []string) error {
		return rewordAt(b.PreInterviewQuestions, m[1], m[2], m[3], "screener question")
	}},
	{newLazyRegexp(`(?i)` + builtinEditLead + instructionRef(builtinObjQ) + builtinEditTo), rewordObjective},
	{newLazyRegexp(`(?i)` + builtinEditLead + `(` + instructionRef(builtinVerbQ) + `|` + instructionRef(builtinScreenQ) + `|` + instructionRef(builtinObjQ) + `)$`), func(_ *kv.Brief, m []string) error {
		what := strings.ToLower(collapseSpace(m[1]))
		return refuse(fmt.Sprintf("say what %s should become, as in \"change %s to …\"", what, what))
	}},
	{newLazyRegexp(`(?i)` + builtinAddLead + `(?:verbatim\s+|interview\s+|follow-up\s+)?question\b\s*:?\s*((?:"|“|').+(?:"|”|'))$`), func(b *kv.Brief, m []string) error {
		return appendItem(&b.VerbatimQuestions, exactQuestion(m[1]), "question")
	}},
	{newLazyRegexp(`(?i)` + builtinAddLead + `(?:verbatim\s+|interview\s+|open\s+|open-ended\s+)?(?:question|q)s?\s+(?:about|on|regarding|covering|around|asking(?:\s+about)?|to\s+ask\s+about|that\s+asks(?:\s+about)?|exploring|into|on\s+whether|for)\s+(.+)$`), func(b *kv.Brief, m []string) error {
		return appendItem(&b.VerbatimQuestions, questionAbout(m[1], false), "question")
	}},
	{newLazyRegexp(`(?i)` + builtinAddLead + `(?:verbatim\s+|interview\s+)?question\b\s*:?\s*(.+)$`), func(b *kv.Brief, m []string) error {
		return appendItem(&b.VerbatimQuestions, exactQuestion(m[1]), "question")
	}},
	{newLazyRegexp(`(?i)^ask\s+(?:them|participants|people|the\s+participants?|everyone|users|each\s+participant)\s+(?:about\s+)?(.+)$`), func(b *kv.Brief, m []string) error {
		return appendItem(&b.VerbatimQuestions, questionAbout(m[1], false), "question")
	}},
	{newLazyRegexp(`(?i)` + builtinAddLead + builtinScreenQ + `\b\s*(?:(?:about|on|regarding|covering|asking(?:\s+about)?|to\s+check(?:\s+for)?|checking|for)\s+)?:?\s*(.+)$`), func(b *kv.Brief, m []string) error {
		return appendItem(&b.PreInterviewQuestions, questionAbout(m[1], true), "screener question")
	}},
	{newLazyRegexp(`(?i)` + builtinAddLead + `(?:research\s+)?` + builtinObjQ + `\b\s*(?:(about|on|regarding|to|of)\s+|:\s*)?(.+)$`), addObjective},
	{newLazyRegexp(`(?i)^(?:rename|retitle)\s+(?:the\s+|this\s+|our\s+)?(?:study|brief|project|research|title)?\s*(?:to|as|:)\s*(.+)$`), rename},
	{newLazyRegexp(`(?i)^(?:call|name|title)\s+(?:it|this|the\s+study|this\s+study|the\s+brief)\s*(?:to\s+|as\s+|:\s*)?(.+)$`), rename},
	{newLazyRegexp(`(?i)^(?:change|set|update|make)\s+(?:the\s+)?(?:study(?:'s)?\s+)?(?:title|name)(?:\s+of\s+the\s+study)?\s*(?:to\s+be|to|as|:)\s*(.+)$`), rename},
	{newLazyRegexp(`(?i)^(?:the\s+)?(?:new\s+)?(?:study\s+)?(?:title|name)\s*(?:should\s+be|will\s+be|is|:|=)\s*(.+)$`), rename},
	{newLazyRegexp(`(?i)^(?:make\s+(?:it|this|the\s+(?:study|brief|interview|interviews|session|sessions))\s+(?:a\s+(?:bit|little)\s+|much\s+|slightly\s+)?shorter|shorten\s+(?:it|this|the\s+(?:study|brief|interview|interviews|session|sessions))|(?:cut|trim)\s+it\s+down|(?:fewer|less)\s+questions)$`), shorten},
	{newLazyRegexp(`(?i)^(?:make\s+(?:it|this|the\s+(?:study|brief|interview|interviews|session|sessions))\s+(?:a\s+(?:bit|little)\s+|much\s+|slightly\s+)?longer|lengthen\s+(?:it|this|the\s+(?:study|brief|interview|interviews))|(?:more|extra)\s+questions)$`), func(*kv.Brief, []string) error {
		return refuse(`it cannot make up questions to make the study longer: add one ("add a question about …") or set a length ("make it 45 minutes")`)
	}},
	{newLazyRegexp(`(?i)^(?:(?:make|set|change|keep|limit|cap|update|shorten|extend|adjust|reduce|increase|bring|cut)\s+(?:it|this|that|the\s+(?:study|interview|interviews|duration|length|session|sessions|estimate|estimated\s+duration|time))?\s*(?:down\s+|up\s+|back\s+)?(?:to\s+be|to|at|be|:)?\s*|(?:it|this|the\s+(?:study|interview|interviews|session|sessions))\s+should\s+(?:be|last|take|run)(?:\s+for)?\s*|(?:the\s+)?(?:duration|length|estimated\s+duration|time)\s*(?:is|should\s+be|:|=|of)?\s*)?(?:about|around|roughly|approximately|approx\.?|under|at\s+most|max(?:imum)?|no\s+more\s+than|~)?\s*(?:(\d{1,4})\s*-?\s*(?:minutes?|mins?)|(half\s+an\s+hour|an\s+hour\s+and\s+a\s+half|(?:an|one|1)\s*-?\s*hours?|(\d)\s*-?\s*hours?))(?:\s+(?:long|max|maximum|interviews?|sessions?|in\s+length|in\s+total|total))?$`), setDuration},
}

var (
	builtinPoliteLead = newLazyRegexp(`(?i)^(?:(?:please|also|then|and|now|next|finally|lastly|first|firstly|secondly|ok|okay|so|but|oh|hi|hello|hey|great|thanks|thank\s+you)[,!]?\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?|(?:i|we)(?:'d|\s+would)\s+like\s+(?:you\s+)?to\s+|(?:i|we)\s+want\s+(?:you\s+)?to\s+|let's\s+|let\s+us\s+|you\s+should\s+|we\s+should\s+|we\s+need\s+to\s+|i\s+need\s+you\s+to\s+|kindly\s+)`)
	builtinPoliteTail = newLazyRegexp(`(?i)(?:[,\s]+(?:please|thanks|thank\s+you|too|as\s+well))+[.!]*$`)
)

// refineBrief applies refine guidance to the current brief. It returns an error wrapping
// ErrRefused when the guidance is harmful, not a change to a study, or not understood.
func refineBrief(cur kv.Brief, guidance string) (kv.Brief, error) {
	g := strings.TrimSpace(cleanText(guidance))
	if g == "" {
		return kv.Brief{}, refuse("the guidance is empty")
	}
	sentences := splitSentences(g)
	if r := harmReason(sentences); r != "" {
		return kv.Brief{}, refuse(r)
	}
	b := cur.Normalised()
	applied := 0
	var missed []string // instructions not applied, each with why when that is known
	for _, ins := range splitInstructions(g) {
		ins = politeless(ins)
		if ins == "" || builtinCourtesy.has(strings.ToLower(trimPhrase(ins))) {
			continue
		}
		matched := false
		for _, r := range builtinRefineRules {
			if m := r.re.FindStringSubmatch(ins); m != nil {
				if err := r.apply(&b, m); err != nil {
					if !errors.Is(err, ErrRefused) {
						return kv.Brief{}, err
					}
					missed = append(missed, fmt.Sprintf("%q (%s)", truncateRunes(ins, 80), strings.TrimPrefix(err.Error(), ErrRefused.Error()+": ")))
				}
				matched = true
				break
			}
		}
		if !matched {
			if r := offTopicReason(ins, []string{ins}, true, false); r != "" {
				return kv.Brief{}, refuse(r)
			}
			missed = append(missed, strconv.Quote(truncateRunes(ins, 80)))
		}
		applied++
	}
	if len(missed) > 0 {
		return kv.Brief{}, refuse("the built-in engine could not apply " + joinList(missed) + ". " + builtinRefineHelp)
	}
	if applied == 0 {
		return kv.Brief{}, refuse("the guidance names no change to make. " + builtinRefineHelp)
	}
	if b.Title == nil || strings.TrimSpace(*b.Title) == "" {
		t := titleFrom(joinList(keyTerms(append(append([]string(nil), b.Objectives...), b.VerbatimQuestions...), 2, nil)), false)
		b.Title = &t
	}
	if b.EstimatedDurationMinutes == nil {
		m := estimateMinutes(len(b.PreInterviewQuestions), len(b.VerbatimQuestions))
		b.EstimatedDurationMinutes = &m
	}
	return b, nil
}

// splitInstructions cuts refine guidance into instructions, never inside double quotes.
func splitInstructions(s string) []string { return splitOutsideQuotes(s, connectorAt) }

// connectorAt returns the length of a connector that starts s and ends an instruction
// (", then ", " and then ", or ", " / " and " / " then " before an instruction verb), or 0.
func connectorAt(s string) int {
	for _, c := range []string{", and then ", " and then ", ", then "} {
		if len(s) >= len(c) && strings.EqualFold(s[:len(c)], c) {
			return len(c)
		}
	}
	for _, c := range []string{", and ", ", ", " and ", " then ", ", also ", " and also "} {
		if len(s) >= len(c) && strings.EqualFold(s[:len(c)], c) && builtinInstructionVerbs.has(firstWord(s[len(c):])) {
			return len(c)
		}
	}
	return 0
}

// politeless strips courtesy around an instruction: "Could you please add ...?" → "add ...".
func politeless(ins string) string {
	ins = strings.TrimSpace(ins)
	asked := false
	for {
		loc := builtinPoliteLead.FindStringIndex(ins)
		if loc == nil || loc[1] == 0 {
			break
		}
		asked = asked || strings.Contains(strings.ToLower(ins[:loc[1]]), "you")
		ins = ins[loc[1]:]
	}
	ins = builtinPoliteTail.ReplaceAllString(ins, "")
	ins = strings.TrimRight(ins, " .!")
	if asked {
		ins = strings.TrimRight(ins, " ?")
	}
	return strings.TrimSpace(ins)
}

// ordinalIndex resolves "second", "2nd", "last" or a number to a 0-based index in a list
// of n, or -1 with the 1-based number asked for.
func ordinalIndex(word, num string, n int) (int, int) {
	w := strings.ToLower(word)
	if num != "" {
		w = num
	}
	switch w {
	case "last", "final":
		return n - 1, n
	}
	for i, o := range strings.Split(builtinOrdinals, "|")[:10] {
		if w == o {
			return indexIn(i+1, n)
		}
	}
	w = strings.TrimRight(w, "stndrh")
	k, err := strconv.Atoi(w)
	if err != nil {
		return -1, 0
	}
	return indexIn(k, n)
}

func indexIn(k, n int) (int, int) {
	if k < 1 || k > n {
		return -1, k
	}
	return k - 1, k
}

// removeAt removes an item by its 1-based position; keep is how many must remain.
func removeAt(list *[]string, word, num, what string, keep int) error {
	i, k := ordinalIndex(word, num, len(*list))
	if i < 0 {
		return refuse(outOfRange(what, k, len(*list)))
	}
	if len(*list) <= keep {
		return refuse(fmt.Sprintf("a study needs at least %d %s; add another before removing this one", keep, what))
	}
	*list = append((*list)[:i:i], (*list)[i+1:]...)
	return nil
}

// outOfRange explains a position that is not in a list.
func outOfRange(what string, k, n int) string {
	if n == 0 {
		return fmt.Sprintf("there is no %s %d: the study has none", what, k)
	}
	return fmt.Sprintf("there is no %s %d: the study has %d, numbered from 1", what, k, n)
}

// rewordAt replaces an item by its 1-based position with new wording.
func rewordAt(list []string, word, num, text, what string) error {
	i, k := ordinalIndex(word, num, len(list))
	if i < 0 {
		return refuse(outOfRange(what, k, len(list)))
	}
	q := exactQuestion(text)
	if q == "" {
		return refuse(fmt.Sprintf("the new wording of %s %d is empty", what, k))
	}
	list[i] = q
	return nil
}

// removeAbout removes the first verbatim question that mentions a phrase.
func removeAbout(b *kv.Brief, m []string) error {
	phrase := strings.ToLower(trimPhrase(m[1]))
	for i, q := range b.VerbatimQuestions {
		if phrase != "" && strings.Contains(strings.ToLower(q), phrase) {
			if len(b.VerbatimQuestions) <= 1 {
				return refuse("a study needs at least 1 question; add another before removing this one")
			}
			b.VerbatimQuestions = append(b.VerbatimQuestions[:i:i], b.VerbatimQuestions[i+1:]...)
			return nil
		}
	}
	return refuse(fmt.Sprintf("no question mentions %q", truncateRunes(phrase, 60)))
}

// appendItem adds a question to a list, refusing an empty one, a duplicate or an overfull
// list. A new question goes before a closing wrap-up ("Is there anything else…?"), which
// only makes sense last.
func appendItem(list *[]string, q, what string) error {
	switch {
	case q == "":
		return refuse(fmt.Sprintf("the new %s is empty", what))
	case len(*list) >= builtinMaxQuestions:
		return refuse(fmt.Sprintf("the study already has %d of %ss, the most it can hold", len(*list), what))
	}
	for _, have := range *list {
		if strings.EqualFold(have, q) {
			return refuse(fmt.Sprintf("the study already asks %q", q))
		}
	}
	if n := len(*list); n > 0 && isWrapUp((*list)[n-1]) && !isWrapUp(q) {
		*list = slices.Insert(*list, n-1, q)
		return nil
	}
	*list = append(*list, q)
	return nil
}

// exactQuestion keeps the researcher's wording: quotes removed, one line, ending in '?'.
func exactQuestion(text string) string {
	t, _ := unquoteText(trimPhraseKeepQ(text))
	return asQuestion(t)
}

// trimPhraseKeepQ trims space and trailing full stops but keeps a closing quote or '?'.
func trimPhraseKeepQ(s string) string { return strings.TrimRight(strings.TrimSpace(s), " .!") }

// builtinInvert are auxiliaries a yes/no question starts with: "whether you are over 18"
// asks "Are you over 18?".
var builtinInvert = wordSet("are", "were", "have", "had", "can", "could", "will", "would", "should", "do", "did", "may", "might", "must")

// builtinYouContraction undoes "you'd" for a yes/no question: "Would you ...?".
var builtinYouContraction = map[string]string{"you'd": "would", "you're": "are", "you've": "have", "you'll": "will"}

// questionAbout writes a question on a subject given in plain words. A subject already
// written as a question is kept; "whether ..." becomes a yes/no question; "how/why ..."
// is asked as "Could you tell me how/why ..."; a noun is asked about ("Can you tell me
// about pricing?"), or asked for in a screener ("What is your company size?").
func questionAbout(body string, screener bool) string {
	if q, ok := unquoteText(trimPhraseKeepQ(body)); ok {
		return asQuestion(q)
	}
	raw := strings.TrimSpace(body)
	first := firstWord(raw)
	if w := strings.Fields(raw); strings.HasSuffix(raw, "?") && len(w) > 1 && (builtinInvert.has(first) || first == "is" ||
		(builtinWhWords.has(first) && (builtinInvert.has(lowerWord(w[1])) || builtinAuxLead.has(lowerWord(w[1])) || builtinHowMods.has(lowerWord(w[1]))))) {
		return asQuestion(raw)
	}
	body = trimPhrase(raw)
	if body == "" {
		return ""
	}
	switch {
	case first == "whether" || first == "if":
		rest := strings.Fields(parseClause("whether " + strings.Join(strings.Fields(body)[1:], " ")).topic2)
		if len(rest) >= 3 {
			if aux, ok := builtinYouContraction[strings.ToLower(strings.ReplaceAll(rest[1], "’", "'"))]; ok {
				return asQuestion(aux + " you " + strings.Join(rest[2:], " "))
			}
		}
		if len(rest) >= 3 && rest[1] == "you" {
			if builtinInvert.has(lowerWord(rest[2])) {
				return asQuestion(rest[2] + " you " + strings.Join(rest[3:], " "))
			}
			return asQuestion("do you " + strings.Join(rest[2:], " "))
		}
		return asQuestion("Could you tell me " + strings.Join(rest, " "))
	case builtinWhWords.has(first):
		if q, ok := quantityQuestion(body); ok {
			return q
		}
		if addressesParticipant(body) {
			// Written to the participant already ("why your staff leave"): a group
			// noun in it is not the participant, so the words are kept as they are.
			return asQuestion("Could you tell me " + lowerFirst(body))
		}
		return asQuestion("Could you tell me " + parseClause(body).topic2)
	case screener:
		about := secondPerson(body)
		if !builtinDeterminers.has(firstWord(about)) {
			about = "your " + about
		}
		return asQuestion("What is " + about)
	}
	return asQuestion("Can you tell me about " + secondPerson(body))
}

// addObjective appends an objective: "to learn X" reads "Learn X.", "about X" reads "Explore X.".
func addObjective(b *kv.Brief, m []string) error {
	text, _ := unquoteText(trimPhrase(m[2]))
	if strings.EqualFold(strings.TrimSpace(m[1]), "about") || strings.EqualFold(strings.TrimSpace(m[1]), "on") || strings.EqualFold(strings.TrimSpace(m[1]), "regarding") {
		text = "explore " + text
	}
	o := asSentence(swapWords(text, builtinToOrg))
	switch {
	case o == "":
		return refuse("the new objective is empty")
	case len(b.Objectives) >= builtinMaxQuestions:
		return refuse("the study already has as many objectives as it can hold")
	}
	b.Objectives = append(b.Objectives, o)
	return nil
}

// rename sets the title; an all-lowercase title is put in Title Case.
func rename(b *kv.Brief, m []string) error {
	t, _ := unquoteText(strings.TrimSpace(m[1]))
	t = trimPhrase(collapseSpace(t))
	if t == "" {
		return refuse("the new title is empty")
	}
	if strings.ToLower(t) == t {
		t = titleCase(t)
	}
	t = truncateRunes(t, builtinMaxTitle)
	b.Title = &t
	return nil
}

// setDuration sets the estimated duration from minutes or an hour phrase.
func setDuration(b *kv.Brief, m []string) error {
	n := 0
	if m[1] != "" {
		n, _ = strconv.Atoi(m[1])
	} else {
		n = hoursMinutes(m[2], m[3])
	}
	if n < 1 || n > builtinMaxMinutes {
		return refuse(fmt.Sprintf("a duration of %d minutes is outside 1 to %d", n, builtinMaxMinutes))
	}
	b.EstimatedDurationMinutes = &n
	return nil
}

// rewordObjective replaces an objective by its 1-based position with new wording, kept
// as the researcher wrote it ("my app" reads "our app", as a new objective does).
func rewordObjective(b *kv.Brief, m []string) error {
	i, k := ordinalIndex(m[1], m[2], len(b.Objectives))
	if i < 0 {
		return refuse(outOfRange("objective", k, len(b.Objectives)))
	}
	text, _ := unquoteText(trimPhrase(m[3]))
	o := asSentence(swapWords(text, builtinToOrg))
	if o == "" {
		return refuse(fmt.Sprintf("the new wording of objective %d is empty", k))
	}
	b.Objectives[i] = o
	return nil
}

// builtinShortenKeep: "make it shorter" leaves at least this many verbatim questions.
const builtinShortenKeep = 2

// shorten makes the interview shorter by one question: the last verbatim question that
// is not the closing wrap-up goes (the wrap-up stays last), and the estimated length
// drops by the four minutes a question is estimated at (estimateMinutes), to a multiple
// of five and no less than five. A study down to builtinShortenKeep questions is
// refused with what to say instead.
func shorten(b *kv.Brief, _ []string) error {
	n := len(b.VerbatimQuestions)
	last := n - 1
	if last >= 0 && isWrapUp(b.VerbatimQuestions[last]) {
		last--
	}
	if n <= builtinShortenKeep || last < 0 {
		return refuse(fmt.Sprintf(`the study has only %d questions; say which to remove ("remove question 2") or set a length ("make it 15 minutes")`, n))
	}
	b.VerbatimQuestions = append(b.VerbatimQuestions[:last:last], b.VerbatimQuestions[last+1:]...)
	if b.EstimatedDurationMinutes != nil {
		m := max(5, (*b.EstimatedDurationMinutes-4)/5*5)
		b.EstimatedDurationMinutes = &m
	}
	return nil
}

// refineSubjectPronouns start the subject of an embedded clause: "how many customers
// they serve".
var refineSubjectPronouns = wordSet("they", "you", "we", "i", "he", "she", "it", "people", "everyone")

// quantityQuestion asks "how many …" or "how much …" with the counted noun kept: "how
// many staff work at your bakery" is a question as it stands ("How many staff work at
// your bakery?"), as is "how many staff do they employ" (its pronouns turned to the
// participant); "how many customers they serve" is embedded ("Could you tell me how many
// customers you serve?"). ok is false for any other clause.
func quantityQuestion(body string) (string, bool) {
	w := strings.Fields(body)
	if len(w) < 3 || lowerWord(w[0]) != "how" || (lowerWord(w[1]) != "many" && lowerWord(w[1]) != "much") {
		return "", false
	}
	clause := secondPerson(body)
	for _, word := range w[2:min(len(w), 7)] {
		switch lw := lowerWord(word); {
		case builtinInvert.has(lw) || lw == "is" || lw == "does":
			return asQuestion(clause), true // "how many staff do they employ"
		case refineSubjectPronouns.has(lw):
			return asQuestion("Could you tell me " + lowerFirst(clause)), true
		}
	}
	return asQuestion(clause), true // the counted noun is the subject: "how many staff work"
}

// addressesParticipant reports whether text speaks to the participant already ("you",
// "your") and not about them ("they", "their").
func addressesParticipant(text string) bool {
	you := false
	for _, w := range wordsOf(strings.ToLower(text)) {
		switch w {
		case "you", "your", "yours", "yourself", "you're", "you've", "you'd", "you'll":
			you = true
		case "they", "them", "their", "theirs", "themselves", "they're", "they've", "they'd", "they'll":
			return false
		}
	}
	return you
}
