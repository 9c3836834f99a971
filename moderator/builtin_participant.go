package moderator

import (
	"fmt"
	"strings"
	"unicode"
)

// The built-in synthetic participant. It reads a role, a few first-person facts and a
// tone out of the persona, recognises the kind of question asked (role, how often,
// yes/no, why, how, frustrations, a follow-up ...) and fills a reply from phrase tables.
// Choices come from the seed and the transcript length, so a simulation replays exactly.

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

// parsePersona reads a role, first-person facts and a tone from a description.
func parsePersona(text string) simPersona {
	var p simPersona
	if m := builtinRoleRe.FindStringSubmatch(text); m != nil {
		role := strings.TrimSpace(m[1])
		if n := len(strings.Fields(role)); n >= 1 && n <= 4 && !builtinNotRole.has(firstWord(role)) {
			p.role = role
		}
	}
	parts := builtinClauseRe.Split(text, -1)
	for i, part := range parts {
		w := strings.Fields(part)
		if len(w) < 2 || len(p.facts) == 6 {
			continue
		}
		first := lowerWord(w[0])
		if !builtinFactVerb.has(first) && !(i > 0 && strings.HasSuffix(first, "s") && !builtinStopWords.has(first) && !isGroupNoun(first)) {
			continue
		}
		p.facts = append(p.facts, firstPersonFact(w))
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

// reply answers one interviewer message in character. turn and r make choices vary
// from turn to turn while staying reproducible.
func (p simPersona) reply(question string, turn int, r uint64) string {
	q := strings.ToLower(collapseSpace(question))
	words := strings.Fields(q)
	next := func() uint64 { r = mix64(r); return r }
	fact := func() string {
		if len(p.facts) == 0 {
			return ""
		}
		return p.facts[(turn/2+int(next()%2))%len(p.facts)]
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
		if f == "" || (turn%2 == 1 && next()%3 != 0) {
			return s
		}
		switch next() % 3 {
		case 0:
			if p.role != "" {
				return s + " As " + indefiniteArticle(p.role) + " " + p.role + ", " + lowerFirst(f) + "."
			}
			return s + " " + f + "."
		case 1:
			return s + " " + f + ", so that shapes how I see it."
		}
		return s + " It probably matters that " + lowerFirst(f) + "."
	}
	subject := firstPersonSubject(question)

	switch {
	case len(words) == 0:
		return "Hello."
	case !strings.Contains(q, "?") && strings.Contains(q, "thank"):
		return pickBy(builtinClosings, next())
	case strings.Contains(q, "role") || strings.Contains(q, "occupation") || strings.Contains(q, "job") || strings.Contains(q, "do for a living") || strings.Contains(q, "what do you do"):
		if p.role == "" {
			return withFact(pickBy(builtinNoRole, next()))
		}
		s := "I'm " + indefiniteArticle(p.role) + " " + p.role + "."
		if f := fact(); f != "" {
			s += " " + f + "."
		}
		return s
	case strings.Contains(q, "how often") || strings.Contains(q, "how frequently"):
		return withFact(pickBy(builtinFrequency, next()))
	case strings.Contains(q, "more about") || strings.Contains(q, "example") || strings.Contains(q, "what makes you say") || strings.Contains(q, "what was that like") || strings.Contains(q, "you mentioned"):
		return withFact("Sure. For example, " + pickBy(builtinScenes, next()) + ". " + capitalise(toneLine()) + ".")
	case strings.Contains(q, "walk me through"):
		return withFact("The last time, " + pickBy(builtinScenes, next()) + ". " + capitalise(pickBy(builtinWays, next())) + ".")
	case strings.Contains(q, "frustrat") || strings.Contains(q, "difficult") || strings.Contains(q, "hardest"):
		return withFact("The most frustrating part is " + pickBy(builtinAspects, next()) + ". " + capitalise(toneLine()) + ".")
	case strings.Contains(q, "change one thing") || strings.Contains(q, "magic wand") || strings.Contains(q, "improve"):
		return "I'd make " + subjectOr(subject, "it") + " " + pickBy(builtinChanges, next()) + ". That would make the biggest difference for me."
	case strings.Contains(q, "anything else"):
		if f := fact(); f != "" {
			return "I think I've covered most of it. Maybe just that " + lowerFirst(f) + ", so " + pickBy(builtinAspects, next()) + " matters a lot to me."
		}
		return "I think I've covered it. Maybe just that " + pickBy(builtinAspects, next()) + " matters a lot to me."
	case strings.Contains(q, "why") || strings.Contains(q, "reason"):
		return withFact(pickBy(builtinOpeners, next()) + " " + pickBy(builtinReasons, next()) + ".")
	case strings.Contains(q, "how "):
		return withFact(pickBy(builtinOpeners, next()) + " " + pickBy(builtinWays, next()) + ".")
	case isYesNo(words):
		yes := []string{"Yes, mostly.", "Yes, definitely.", "Sometimes, yes."}
		if p.tone < 0 {
			yes = []string{"Not really.", "Sometimes, but not often.", "Only when I have to."}
		}
		return withFact(pickBy(yes, next()) + " " + capitalise(toneLine()) + ".")
	}
	if subject == "" {
		return withFact(pickBy(builtinOpeners, next()) + " " + toneLine() + ". The main thing for me is " + pickBy(builtinAspects, next()) + ".")
	}
	switch next() % 3 {
	case 0:
		return withFact("When it comes to " + subject + ", " + toneLine() + ".")
	case 1:
		return withFact("The main thing for me with " + subject + " is " + pickBy(builtinAspects, next()) + ".")
	}
	return withFact(pickBy(builtinOpeners, next()) + " " + toneLine() + " when it comes to " + subject + ".")
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
	for i, r := range s {
		return string(unicode.ToLower(r)) + s[i+len(string(r)):]
	}
	return s
}
