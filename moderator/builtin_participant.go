package moderator

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
)

// The built-in synthetic participant. It reads a role, what they do (their situation),
// a few first-person facts and a tone out of the persona, recognises the kind of
// question asked (role, how often, yes/no, why, how, frustrations, a follow-up ...) and
// fills a reply from phrase tables, about the question's subject or else the study's.
// It speaks as the persona from its first answer: that answer says who they are,
// whatever the question. A persona that names no job is given the study's participants'
// ("independent bakery owners" gives "an independent bakery owner"), never one of its
// own. Choices come from the seed and the transcript length, so a simulation replays
// exactly.

// Tables InventPersona draws from.
var (
	builtinNames     = []string{"Priya", "Tom", "Maya", "Daniel", "Aisha", "Lukas", "Sofia", "James", "Mei", "Carlos", "Grace", "Omar", "Hannah", "Kwame", "Elena", "Sam"}
	builtinJobs      = []string{"nurse", "secondary school teacher", "software developer", "small business owner", "retail store manager", "freelance graphic designer", "accountant", "delivery driver", "university student", "marketing coordinator", "pharmacist", "customer service agent", "civil engineer", "restaurant chef", "HR manager", "warehouse supervisor"}
	builtinHabits    = []string{"works long shifts", "commutes by train every day", "manages a small team", "uses a phone for almost everything", "shops online most weeks", "runs a small side business", "travels often for work", "looks after two young children", "works from home three days a week", "volunteers at a local charity", "plays five-a-side football at weekends", "does the household budgeting"}
	builtinAttitudes = []string{"is cautious about new technology", "is quick to try new apps", "values saving money over convenience", "gets frustrated by slow customer service", "prefers talking to a person over using a website", "likes to research thoroughly before buying", "is fairly relaxed about most things", "is sceptical of marketing claims", "cares a lot about privacy", "enjoys trying new products"}
)

// InventPersona returns a plausible participant description chosen by seed; the same
// seed always gives the same person.
func InventPersona(seed int64) string {
	r := mix64(uint64(seed))
	name := pickBy(builtinNames, r)
	r = mix64(r)
	age := 21 + int(r%47)
	r = mix64(r)
	job := pickBy(builtinJobs, r)
	r = mix64(r)
	habit := pickBy(builtinHabits, r)
	r = mix64(r)
	attitude := pickBy(builtinAttitudes, r)
	return fmt.Sprintf("%s, a %d-year-old %s who %s and %s.", name, age, job, habit, attitude)
}

// simPersona is what the participant knows about itself.
type simPersona struct {
	role  string   // "nurse"; "" when the description names none
	work  string   // what they do, in the first person: "I own a small bakery in Leeds"; "" when unsaid
	facts []string // first-person sentences without a full stop: "I work night shifts"
	tone  int      // below zero sceptical, above zero keen
}

var (
	builtinRoleRe   = newLazyRegexp(`(?i)(?:^|,|\bas|\bis|\bi'm|\bi\s+am)\s*\b(?:an?)\s+(?:\d{1,3}[- ]year[- ]old\s+)?([\p{L}][\p{L} -]*?)\s*(?:\bwho\b|\bthat\b|\bat\b|\bin\b|\bfrom\b|\bwith\b|\band\b|\bof\b|\bfor\b|[,.;(]|$)`)
	builtinClauseRe = newLazyRegexp(`(?i)\s*(?:\bwho\b|\bwhich\b|\band\b|\bbut\b|[,;.])\s*`)
	builtinFactVerb = wordSet("is", "has", "was", "works", "lives", "uses", "loves", "likes", "hates", "dislikes", "prefers", "enjoys", "runs", "manages", "owns", "travels", "shops", "spends", "finds", "feels", "wants", "needs", "worries", "cares", "struggles", "tends", "avoids", "buys", "reads", "plays", "commutes", "looks", "volunteers", "juggles", "studies", "teaches", "drives", "cooks", "trusts", "distrusts", "values", "thinks", "believes", "gets", "does", "recently", "often", "usually", "always", "never", "rarely", "sometimes", "mostly", "still", "i", "i'm", "i've", "my")
	builtinNegTone  = wordSet("sceptical", "skeptical", "frustrated", "annoyed", "hates", "dislikes", "distrusts", "reluctant", "cautious", "wary", "impatient", "critical", "unhappy", "struggles", "worried", "worries", "tired", "stressed", "frustrating", "slow")
	builtinPosTone  = wordSet("enthusiastic", "loves", "likes", "happy", "keen", "excited", "fan", "satisfied", "enjoys", "quick", "early", "relaxed", "optimistic", "confident")
	builtinToSelf   = map[string]string{"their": "my", "them": "me", "they": "I", "her": "my", "his": "my", "she": "I", "he": "I", "herself": "myself", "himself": "myself", "themselves": "myself", "theirs": "mine", "hers": "mine"}
	builtinToMine   = map[string]string{"your": "my", "yours": "mine", "yourself": "myself", "you": "I", "our": "your", "us": "you", "we": "you", "ours": "yours"}
)

// builtinNotRole words start "a lot of", "a bit", "a few": not a job.
var builtinNotRole = wordSet("lot", "bit", "few", "little", "couple", "while", "number", "range", "variety", "kind", "sort", "type", "very", "really", "fairly", "quite", "great", "good")

// Reading what a persona does for a living when it says so without "a …".
var (
	// builtinWorkVerbs start a fact that says what the persona does: "I own a bakery".
	builtinWorkVerbs = wordSet("own", "run", "manage", "work", "teach", "study", "drive", "lead", "coach", "bake", "cook", "sell", "look", "freelance", "volunteer", "care", "nurse", "serve", "build", "design", "write", "farm", "clean", "deliver", "organise", "organize", "founded", "co-founded", "started")
	// builtinOwnedRe reads "I own a small bakery in Leeds" as a bakery owner.
	builtinOwnedRe = newLazyRegexp(`(?i)^i\s+(?:own|run|co-own)\s+(?:a|an|my|the|our)\s+((?:[\p{L}-]+\s+){0,3}?)([\p{L}-]+?)(?:\s+(?:in|with|at|for|on|near|that|which|who|and|of|called|named)\b.*)?$`)
	// builtinFeelings start a clause that says how the persona feels: "sceptical of …".
	builtinFeelings = wordSet("sceptical", "skeptical", "cautious", "wary", "reluctant", "keen", "enthusiastic", "happy", "unhappy", "frustrated", "annoyed", "worried", "anxious", "tired", "stressed", "busy", "comfortable", "uncomfortable", "confident", "nervous", "curious", "critical", "loyal", "fond", "proud", "impatient", "optimistic", "pessimistic", "satisfied", "dissatisfied", "new", "fed", "passionate", "indifferent", "open", "quick", "slow", "careful")
	// builtinStatusWords alone describe someone's working life: "Retired, …".
	builtinStatusWords = wordSet("retired", "semi-retired", "unemployed", "self-employed", "freelance", "between jobs", "on parental leave", "a stay-at-home parent")
)

// parsePersona reads a role, what the persona does, first-person facts and a tone from
// a description.
func parsePersona(text string) simPersona {
	var p simPersona
	if m := builtinRoleRe.FindStringSubmatch(text); m != nil {
		role := strings.TrimSpace(m[1])
		if n := len(strings.Fields(role)); n >= 1 && n <= 4 && !builtinNotRole.has(firstWord(role)) {
			p.role = role
		}
	}
	lead := strings.TrimSpace(builtinClauseRe.Split(strings.TrimSpace(text), 2)[0])
	if p.role == "" {
		// "Bakery owner in Leeds, …": a leading phrase ending in a job.
		w := strings.Fields(lead)
		for i, x := range w {
			if lx := lowerWord(x); lx == "in" || lx == "at" || lx == "from" || lx == "with" || lx == "for" {
				w = w[:i]
				break
			}
		}
		if n := len(w); n >= 1 && n <= 4 && isRoleNoun(w[n-1]) && !builtinNotRole.has(lowerWord(w[0])) {
			p.role = strings.ToLower(strings.Join(w, " "))
			if tail := strings.TrimSpace(lead[len(strings.Join(w, " ")):]); tail != "" && wordCount(lead) <= 8 {
				p.work = "I'm " + indefiniteArticle(p.role) + " " + p.role + " " + swapWords(tail, builtinToSelf) // "… in Leeds"
			}
		}
	}
	if builtinStatusWords.has(strings.ToLower(lead)) {
		p.work = "I'm " + strings.ToLower(lead)
	}
	parts := builtinClauseRe.Split(text, -1)
	for i, part := range parts {
		w := strings.Fields(part)
		if len(w) < 2 || len(p.facts) == 6 {
			continue
		}
		first := lowerWord(w[0])
		if i > 0 && builtinFeelings.has(first) {
			p.facts = append(p.facts, "I'm "+swapWords(strings.Join(w, " "), builtinToSelf)) // "sceptical of chains"
			continue
		}
		if !builtinFactVerb.has(first) && !(i > 0 && strings.HasSuffix(first, "s") && !builtinStopWords.has(first) && !isGroupNoun(first)) {
			continue
		}
		f := firstPersonFact(w)
		p.facts = append(p.facts, f)
		if p.work == "" && isWorkFact(f) {
			p.work = f
		}
	}
	if p.role == "" && p.work != "" {
		if m := builtinOwnedRe.FindStringSubmatch(p.work); m != nil && !builtinStopWords.has(strings.ToLower(m[2])) {
			p.role = strings.ToLower(m[2]) + " owner"
		}
	}
	for _, w := range wordsOf(strings.ToLower(text)) {
		switch {
		case builtinNegTone.has(w):
			p.tone--
		case builtinPosTone.has(w):
			p.tone++
		}
	}
	return p
}

// isRoleNoun reports whether w names a job or position: its plural names a group of
// people ("owner", "nurse", "baker", "teacher").
func isRoleNoun(w string) bool {
	lw := lowerWord(w)
	if utf8.RuneCountInString(lw) < 3 || builtinStopWords.has(lw) {
		return false
	}
	return isGroupNoun(pluralOf(lw))
}

// pluralOf is the plural of a noun, by its spelling.
func pluralOf(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 2 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "sh"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "x"):
		return w + "es"
	}
	return w + "s"
}

// singularOf is the singular of a plural noun, by its spelling: "owners" → "owner",
// "families" → "family", "businesses" → "business".
func singularOf(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// isWorkFact reports whether a first-person fact says what the persona does: "I own a
// bakery", "I work nights", "I'm a teacher", "I'm retired".
func isWorkFact(f string) bool {
	w := strings.Fields(strings.ToLower(f))
	switch {
	case len(w) < 2:
		return false
	case w[0] == "i'm" || w[0] == "i've":
		rest := strings.Join(w[1:], " ")
		return strings.HasPrefix(rest, "a ") || strings.HasPrefix(rest, "an ") || strings.HasPrefix(rest, "been a") || builtinStatusWords.has(rest)
	case w[0] == "i" && (w[1] == "often" || w[1] == "usually" || w[1] == "mostly") && len(w) > 2:
		return builtinWorkVerbs.has(w[2])
	case w[0] == "i":
		return builtinWorkVerbs.has(w[1])
	}
	return false
}

// firstPersonFact turns "works night shifts" into "I work night shifts".
func firstPersonFact(w []string) string {
	first := lowerWord(w[0])
	switch first {
	case "i", "i'm", "i've", "my":
		w[0] = capitalise(w[0])
		return swapWords(strings.Join(w, " "), map[string]string{"i": "I", "i'm": "I'm", "i've": "I've"})
	case "is":
		w[0] = "I'm"
	case "has":
		w[0] = "I have"
	case "was":
		w[0] = "I was"
	case "recently", "often", "usually", "always", "never", "rarely", "sometimes", "mostly", "still":
		w[1] = baseVerb(w[1])
		w[0] = "I " + first
	default:
		w[0] = "I " + baseVerb(first)
	}
	return swapWords(strings.Join(w, " "), builtinToSelf)
}

// baseVerb turns a third-person verb into the first person: "studies" → "study".
func baseVerb(v string) string {
	lv := strings.ToLower(v)
	switch {
	case lv == "is":
		return "am"
	case lv == "has":
		return "have"
	case lv == "does":
		return "do"
	case lv == "goes":
		return "go"
	case strings.HasSuffix(lv, "ies") && len(lv) > 4:
		return v[:len(v)-3] + "y"
	case strings.HasSuffix(lv, "sses"), strings.HasSuffix(lv, "ches"), strings.HasSuffix(lv, "shes"), strings.HasSuffix(lv, "xes"), strings.HasSuffix(lv, "zzes"):
		return v[:len(v)-2]
	case strings.HasSuffix(lv, "s") && !strings.HasSuffix(lv, "ss"):
		return v[:len(v)-1]
	}
	return v
}

// Reply tables.
var (
	builtinOpeners   = []string{"Honestly,", "Well,", "Good question.", "Hmm, let me think.", "For me,", "I'd say", "To be fair,", "If I'm honest,"}
	builtinFrequency = []string{"Most days, to be honest.", "A few times a week.", "Maybe once or twice a month.", "Pretty much every week.", "Not that often, every couple of months.", "Daily, it's part of my routine."}
	builtinAspects   = []string{"how much time it takes", "the cost", "not knowing what to expect", "how hard it is to get help when something goes wrong", "keeping track of everything", "fitting it around work", "how many steps there are", "having to repeat myself"}
	builtinReasons   = []string{"mostly it comes down to cost", "it's mainly about time; I just don't have much of it", "a lot of it is habit, if I'm honest", "it usually comes down to whether it's worth the effort", "it depends on what people I trust recommend", "I've had a bad experience before, so that stuck with me"}
	builtinWays      = []string{"I try to keep it simple and do the minimum", "I usually ask someone I trust first", "I look things up online before deciding", "I just muddle through and fix problems as they come up", "I keep notes on my phone so I don't forget", "I set aside a bit of time at the weekend for it"}
	builtinScenes    = []string{"last month I spent far longer on it than I expected", "a couple of weeks ago I had to ask a colleague for help", "recently I nearly gave up halfway through", "the other day it actually went more smoothly than usual", "last time I ended up doing it twice because something didn't save", "a while back I had to call support, which took ages"}
	builtinChanges   = []string{"simpler", "quicker", "cheaper", "clearer about what happens next", "easier to get a real person on the line", "less repetitive"}
	builtinNegative  = []string{"I'm honestly a bit frustrated with it", "it often feels more complicated than it should be", "it's more hassle than it's worth some days"}
	builtinPositive  = []string{"it mostly works well for me", "I'm pretty happy with it overall", "I've found it genuinely useful"}
	builtinNeutral   = []string{"it's a mixed picture", "some parts work well and others don't", "it's fine, nothing special"}
	builtinClosings  = []string{"You're welcome, it was nice talking to you.", "Thanks, happy to help.", "No problem, I hope it's useful."}
	builtinNoRole    = []string{"I work full time in an office job.", "I work part time and study on the side.", "I run my own small business."}
)

// builtinOpenQ are words after "you" that make "Can you ..." an open question.
var builtinOpenQ = wordSet("tell", "walk", "give", "describe", "share", "think", "remember", "explain", "say", "talk")

// simTurn is what a reply depends on besides the persona.
type simTurn struct {
	question string // the interviewer's last message
	replies  int    // replies the participant has given so far
	turn     int    // the transcript's length
	r        uint64 // the seed of this reply's choices
	topic    string // the study's subject in the participant's words ("staff rotas"), or ""
	group    string // one of the study's participants ("independent bakery owner"), or ""
}

// builtinMentionedRe reads what a follow-up names: "You mentioned the rota. …".
var builtinMentionedRe = newLazyRegexp(`(?i)\byou\s+mentioned\s+([^.?!;:]{2,60})`)

// intro is who the persona is, in a sentence without its full stop: their role, or
// else what they do, or else one of the study's participants; "" when none is known.
func (p simPersona) intro(group string) string {
	switch {
	case p.role != "":
		return "I'm " + indefiniteArticle(p.role) + " " + p.role
	case p.work != "":
		return p.work
	case group != "":
		return "I'm " + indefiniteArticle(group) + " " + group
	}
	return ""
}

// reply answers one interviewer message in character. The first reply says who the
// persona is whatever the question; every reply keeps to the question's subject, or
// the study's.
func (p simPersona) reply(t simTurn) string {
	question, turn, r := t.question, t.turn, t.r
	q := strings.ToLower(collapseSpace(question))
	words := strings.Fields(q)
	next := func() uint64 { r = mix64(r); return r }
	others := p.otherFacts()
	// Every fact is told within the first few replies (one a reply, in the persona's
	// order); after that they come back at random.
	early := t.replies <= len(others)
	fact := func() string {
		switch {
		case len(others) == 0:
			return ""
		case early:
			return others[t.replies%len(others)]
		}
		return others[(turn/2+int(next()%2))%len(others)]
	}
	toneLine := func() string {
		switch {
		case p.tone < 0:
			return pickBy(builtinNegative, next())
		case p.tone > 0:
			return pickBy(builtinPositive, next())
		}
		return pickBy(builtinNeutral, next())
	}
	withFact := func(s string) string {
		f := fact()
		if f == "" || (!early && turn%2 == 1 && next()%3 != 0) {
			return s
		}
		switch next() % 3 {
		case 0:
			if p.role != "" && !strings.Contains(f, p.role) && f != p.work {
				return s + " As " + indefiniteArticle(p.role) + " " + p.role + ", " + lowerFirst(f) + "."
			}
			return s + " " + f + "."
		case 1:
			return s + " " + f + ", so that shapes how I see it."
		}
		return s + " It probably matters that " + lowerFirst(f) + "."
	}
	subject := firstPersonSubject(question)
	if m := builtinMentionedRe.FindStringSubmatch(question); m != nil {
		subject = swapWords(trimPhrase(m[1]), builtinToMine)
	}
	about := subject // what the reply is about: the question's subject, or the study's
	if about == "" {
		about = t.topic
	}
	// with starts a clause about the subject: "With staff rotas, "; "" without one.
	with := func() string {
		if about == "" {
			return ""
		}
		return "with " + about + ", "
	}
	intro := p.intro(t.group)

	var out string
	switch {
	case len(words) == 0:
		return "Hello."
	case !strings.Contains(q, "?") && strings.Contains(q, "thank"):
		return pickBy(builtinClosings, next())
	case strings.Contains(q, "role") || strings.Contains(q, "occupation") || strings.Contains(q, "job") || strings.Contains(q, "do for a living") || strings.Contains(q, "what do you do"):
		return p.roleAnswer(intro, t)
	case strings.Contains(q, "how often") || strings.Contains(q, "how frequently"):
		out = withFact(pickBy(builtinFrequency, next()))
	case strings.Contains(q, "more about") || strings.Contains(q, "example") || strings.Contains(q, "what makes you say") || strings.Contains(q, "what was that like") || strings.Contains(q, "you mentioned"):
		out = withFact("Sure. For example, " + with() + pickBy(builtinScenes, next()) + ". " + capitalise(toneLine()) + ".")
	case strings.Contains(q, "walk me through"):
		out = withFact("The last time, " + with() + pickBy(builtinScenes, next()) + ". " + capitalise(pickBy(builtinWays, next())) + ".")
	case strings.Contains(q, "frustrat") || strings.Contains(q, "difficult") || strings.Contains(q, "hardest"):
		part := "The most frustrating part"
		if about != "" {
			part += " of " + about
		}
		out = withFact(part + " is " + pickBy(builtinAspects, next()) + ". " + capitalise(toneLine()) + ".")
	case strings.Contains(q, "change one thing") || strings.Contains(q, "magic wand") || strings.Contains(q, "improve"):
		out = "I'd make " + subjectOr(about, "it") + " " + pickBy(builtinChanges, next()) + ". That would make the biggest difference for me."
	case strings.Contains(q, "anything else"):
		if f := fact(); f != "" {
			out = "I think I've covered most of it. Maybe just that " + lowerFirst(f) + ", so " + pickBy(builtinAspects, next()) + " matters a lot to me."
		} else {
			out = "I think I've covered it. Maybe just that " + pickBy(builtinAspects, next()) + " matters a lot to me."
		}
	case strings.Contains(q, "why") || strings.Contains(q, "reason"):
		out = withFact(opened(pickBy(builtinOpeners, next()), with()+pickBy(builtinReasons, next())+"."))
	case strings.Contains(q, "how "):
		out = withFact(opened(pickBy(builtinOpeners, next()), with()+pickBy(builtinWays, next())+"."))
	case isYesNo(words):
		yes := []string{"Yes, mostly.", "Yes, definitely.", "Sometimes, yes."}
		if p.tone < 0 {
			yes = []string{"Not really.", "Sometimes, but not often.", "Only when I have to."}
		}
		out = withFact(pickBy(yes, next()) + " " + capitalise(toneLine()) + ".")
	case about == "":
		out = withFact(opened(pickBy(builtinOpeners, next()), toneLine()+". The main thing for me is "+pickBy(builtinAspects, next())+"."))
	default:
		switch next() % 3 {
		case 0:
			out = withFact("When it comes to " + about + ", " + toneLine() + ".")
		case 1:
			out = withFact("The main thing for me with " + about + " is " + pickBy(builtinAspects, next()) + ".")
		default:
			out = withFact(opened(pickBy(builtinOpeners, next()), toneLine()+" when it comes to "+about+"."))
		}
	}
	if t.replies == 0 && intro != "" && !strings.Contains(out, intro) {
		// The first answer says who is answering, so the persona shows from the start.
		out = intro + ". " + out
	}
	return out
}

// opened puts an opener ("Honestly,", "Good question.") before rest, which starts a
// sentence of its own after a full stop.
func opened(opener, rest string) string {
	if strings.HasSuffix(opener, ".") {
		return opener + " " + capitalise(rest)
	}
	return opener + " " + rest
}

// roleAnswer answers a question about the participant's job: who they are and one
// more thing about them. A persona that says nothing of its work answers as one of the
// study's participants, and only a persona and a study that both say nothing get a
// plain job of the engine's choosing.
func (p simPersona) roleAnswer(intro string, t simTurn) string {
	r := mix64(t.r)
	if intro == "" {
		s := pickBy(builtinNoRole, r)
		if len(p.facts) > 0 {
			s += " " + p.facts[int(mix64(r)%uint64(len(p.facts)))] + "."
		}
		return s
	}
	if strings.HasPrefix(p.work, intro) {
		intro = p.work // "I'm a bakery owner in Leeds" says more than "I'm a bakery owner"
	}
	s := intro + "."
	if p.role != "" && p.work != "" && p.work != intro {
		return s + " " + p.work + "."
	}
	if others := p.otherFacts(); len(others) > 0 {
		return s + " " + others[0] + "."
	}
	return s
}

// otherFacts are the persona's facts but the one that says what they do.
func (p simPersona) otherFacts() []string {
	if p.work == "" {
		return p.facts
	}
	out := make([]string, 0, len(p.facts))
	for _, f := range p.facts {
		if f != p.work {
			out = append(out, f)
		}
	}
	return out
}

// studyTopic returns what the study is about, in the participant's words: the subject
// its verbatim questions ask about ("What do you find most frustrating about staff
// rotas?" gives "staff rotas"), or else a short title ("Online groceries"); "" when
// neither says it in a few words.
func studyTopic(b kv.Brief) string {
	count := map[string]int{}
	best := ""
	for _, q := range b.VerbatimQuestions {
		s := firstPersonSubject(q)
		if s == "" || wordCount(s) > 4 || builtinStopWords.has(strings.ToLower(s)) {
			continue
		}
		count[s]++
		if best == "" || count[s] > count[best] {
			best = s
		}
	}
	if best != "" || b.Title == nil {
		return best
	}
	w := strings.Fields(*b.Title)
	for len(w) > 1 && (strings.EqualFold(w[len(w)-1], "study") || strings.EqualFold(w[len(w)-1], "research") || strings.EqualFold(w[len(w)-1], "interviews")) {
		w = w[:len(w)-1]
	}
	if len(w) == 0 || len(w) > 3 {
		return ""
	}
	for i, x := range w {
		if low := strings.ToLower(x); capitalise(low) == x { // Title Case; "NHS" and "iPhone" stay as written
			w[i] = low
		}
	}
	return strings.Join(w, " ")
}

// studyGroup returns one of the study's participants as its objectives name them
// ("independent bakery owners" gives "independent bakery owner"), or "".
func studyGroup(b kv.Brief) string {
	for _, o := range b.Objectives {
		w := strings.Fields(o)
		for i, x := range w {
			lx := lowerWord(trimPhrase(x))
			if !isGroupNoun(lx) || builtinStopWords.has(lx) || lx == "staff" || lx == "teams" {
				continue
			}
			from := i
			for from > 0 && i-from < 2 {
				prev := lowerWord(trimPhrase(w[from-1]))
				if prev == "" || builtinStopWords.has(prev) || isGroupNoun(prev) || !isWordRunes(prev) {
					break
				}
				from--
			}
			group := make([]string, 0, i-from+1)
			for _, y := range w[from:i] {
				group = append(group, lowerWord(trimPhrase(y)))
			}
			return strings.Join(append(group, singularOf(lx)), " ")
		}
	}
	return ""
}

// isWordRunes reports whether w is letters and hyphens only.
func isWordRunes(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return w != ""
}

// isYesNo reports whether a question's words ask yes or no ("Are you ...?") rather than
// open ("Can you tell me ...?").
func isYesNo(words []string) bool {
	if len(words) < 2 || !(builtinInvert.has(words[0]) || words[0] == "is" || words[0] == "does") {
		return false
	}
	return !(len(words) > 2 && words[1] == "you" && builtinOpenQ.has(strings.Trim(words[2], "?,.")))
}

// builtinSubjectRe finds what a question is about: the phrase after its last "about" or "with".
var builtinSubjectRe = newLazyRegexp(`(?i)\b(?:about|with|regarding|of)\s+([^?,.;]{2,80})`)

// firstPersonSubject returns what the question is about in the participant's words
// ("our mobile app" → "your mobile app"), or "".
func firstPersonSubject(question string) string {
	all := builtinSubjectRe.FindAllStringSubmatch(question, -1)
	if len(all) == 0 {
		return ""
	}
	s := trimPhrase(all[len(all)-1][1])
	if s == "" || strings.EqualFold(s, "that") || strings.EqualFold(s, "this") || strings.EqualFold(s, "yourself") {
		return ""
	}
	return swapWords(s, builtinToMine)
}

func subjectOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// indefiniteArticle returns "a" or "an" for a noun phrase, by its sound where spelling misleads.
func indefiniteArticle(s string) string {
	low := strings.ToLower(s)
	for _, p := range []string{"uni", "use", "usu", "eu", "one", "once"} {
		if strings.HasPrefix(low, p) {
			return "a"
		}
	}
	for _, p := range []string{"hour", "honest", "honour", "honor", "hr ", "mba ", "mp "} {
		if strings.HasPrefix(low, p) {
			return "an"
		}
	}
	if low != "" && strings.IndexByte("aeiou", low[0]) >= 0 {
		return "an"
	}
	return "a"
}

// lowerFirst lower-cases the first rune unless it starts "I" as a word ("I work ...").
func lowerFirst(s string) string {
	if s == "I" || strings.HasPrefix(s, "I ") || strings.HasPrefix(s, "I'") {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || r == utf8.RuneError {
		return s // empty, or a first byte that is no letter to lower
	}
	return string(unicode.ToLower(r)) + s[size:]
}
