package moderator

import (
	"fmt"
	"strings"
)

// What the built-in engine refuses. It matches phrases, so it catches the plain cases
// and says why; it is no substitute for judgement. Where a study would collect
// credentials, or sensitive data from children, it errs on the side of refusing.

// refuse wraps ErrRefused with a reason a person can act on.
func refuse(reason string) error { return fmt.Errorf("%w: %s", ErrRefused, reason) }

// builtinFrame is what puts a harmful verb in the position of a request: "how to",
// "instructions for", "we want to", or the start of a sentence.
const builtinFrame = `(?:^\s*|\b(?:how\s+(?:to|do\s+(?:you|they|i|we)|would\s+(?:you|they)|can\s+(?:you|they|i|we)|they|you)|instructions?\s+(?:for|to|on)|steps?\s+(?:for|to)|guides?\s+(?:to|for|on)|tutorials?\s+(?:on|for)|recipes?\s+for|(?:best\s+)?ways?\s+to|teach\s+(?:\w+\s+){0,2}(?:how\s+)?to|help\s+(?:\w+\s+){0,2}(?:to\s+)?|(?:want|like|need|going|plan|planning|try|trying)\s+to|let's|please|and|then)\s+)`

// builtinHarms are patterns whose match alone is enough to refuse, each with its reason.
// A pattern runs only on a sentence containing one of its triggers (lowercase
// substrings), which keeps ordinary guidance off the slower patterns.
var builtinHarms = []struct {
	triggers []string
	re       *lazyRegexp
	reason   string
}{
	{[]string{"bomb", "explosive", "ied", "grenade", "gun", "firearm", "rifle", "pistol", "weapon", "silencer", "suppressor", "nerve", "sarin", "ricin", "anthrax", "napalm", "thermite", "molotov", "meth", "fentanyl", "heroin", "poison", "toxin"},
		newLazyRegexp(`(?i)` + builtinFrame + `(?:make|making|build|building|assemble|assembling|manufacture|manufacturing|construct|constructing|synthesi[sz]e|synthesi[sz]ing|3d[- ]print(?:ing)?|produce|producing|create|creating|cook|cooking|brew|brewing)\s+(?:[\w'-]+\s+){0,3}?(?:bombs?|explosives?|ieds?|grenades?|guns?|firearms?|rifles?|pistols?|weapons?|silencers?|suppressors?|nerve\s+agents?|sarin|ricin|anthrax|napalm|thermite|molotovs?|meth|methamphetamine|fentanyl|heroin|poisons?|toxins?|bioweapons?)\b`),
		"it asks how to make weapons, explosives, poisons or drugs"},
	{[]string{"malware", "ransomware", "virus", "trojan", "keylogger", "spyware", "botnet", "rootkit", "exploit", "phishing", "ddos"},
		newLazyRegexp(`(?i)` + builtinFrame + `(?:write|writing|code|coding|develop|developing|create|creating|build|building|deploy|deploying|spread|spreading|send|sending|make|making|launch|launching|craft|crafting)\s+(?:[\w'-]+\s+){0,3}?(?:malware|ransomware|viruses|virus|trojans?|keyloggers?|spyware|botnets?|rootkits?|exploits?|phishing\s+(?:emails?|messages?|pages?|sites?|websites?|kits?|campaigns?)|ddos\s+attacks?)\b`),
		"it asks for malicious software or phishing"},
	{[]string{"self", "themselves", "yourself", "himself", "herself", "lives", "suicide"},
		newLazyRegexp(`(?i)\b(?:encourage|encouraging|persuade|persuading|convince|convincing|push|pushing|pressure|pressuring|urge|urging|coach|coaching|dare|daring|goad|goading)\s+(?:[\w'-]+\s+){0,3}?to\s+(?:self[- ]harm|harm\s+(?:themselves|yourself|himself|herself)|hurt\s+(?:themselves|yourself|himself|herself)|kill\s+(?:themselves|yourself|himself|herself)|end\s+(?:their|your|his|her)\s+(?:own\s+)?lives?|commit\s+suicide|starve\s+(?:themselves|yourself)|cut\s+(?:themselves|yourself))`),
		"it encourages self-harm"},
	{[]string{"suicide", "kill", "self", "life"},
		newLazyRegexp(`(?i)\b(?:best|easiest|quickest|painless|most\s+effective)\s+(?:way|ways|method|methods)\s+(?:to|of)\s+(?:kill\s+(?:myself|yourself|themselves|oneself)|commit\s+suicide|self[- ]harm|end\s+(?:my|your|their)\s+(?:own\s+)?life)`),
		"it encourages self-harm"},
	{[]string{"harass", "intimidat", "threaten", "bully", "humiliat", "insult", "belittl", "shame", "stalk", "dox", "blackmail", "troll", "frighten", "scare", "abuse", "degrad", "demean"},
		newLazyRegexp(`(?i)(?:^\s*|\b(?:and|then|please|let's|will|would|should|must|we|(?:want|wants|like|need|going|plan|planning|try|trying|aim|intend|intending|wish|hope)\s+to|(?:ask|get|encourage|tell|help)\s+(?:[\w'-]+\s+){0,2}to)\s+)(?:harass|intimidate|threaten|bully|humiliate|insult|belittle|shame|stalk|doxx?|blackmail|troll|frighten|scare|abuse|degrade|demean)\b`),
		"it asks to harass, threaten or intimidate people"},
	{[]string{"lives", "address"},
		newLazyRegexp(`(?i)\bfind\s+(?:out\s+)?(?:where\s+(?:he|she|my\s+ex|this\s+person|that\s+person)\s+lives|(?:his|her|my\s+ex's)\s+(?:home\s+)?address)`),
		"it asks to track down a person"},
}

// Triggers of the patterns below.
var (
	builtinPromoteTriggers    = []string{"promot", "glorif", "glamori", "romantici"}
	builtinCredentialTriggers = []string{"pass", "pin", "card", "cvv", "cvc", "security", "ssn", "insurance", "account", "login", "log in", "log-in", "credential", "one-time", "one time", "2fa", "mfa", "verification", "otp", "maiden", "key", "phrase"}
	builtinMinorTriggers      = []string{"child", "kid", "minor", "under ", "under-", "under1", "teen", "adolescent", "pupil", "toddler", "infant", "year"}
)

// hasAnySubstring reports whether s contains any of subs.
func hasAnySubstring(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// builtinPromoteHarm glorifies self-harm unless a support word follows ("promoting
// suicide prevention" is research).
var (
	builtinPromoteHarm = newLazyRegexp(`(?i)\b(?:promote|promoting|glorify|glorifying|glamori[sz]e|glamori[sz]ing|romantici[sz]e|romantici[sz]ing)\s+(?:[\w'-]+\s+){0,2}?(?:self[- ]harm(?:ing)?|suicide|anorexia|bulimia|eating\s+disorders?|starving)\b(\s+[\w'-]+)?`)
	builtinHarmSupport = wordSet("prevention", "awareness", "support", "recovery", "helpline", "helplines", "services", "resources", "research", "education", "risk", "risks")
)

// Credentials: refused when a sentence both names a credential and asks for it.
var (
	builtinCredential      = newLazyRegexp(`(?i)\b(?:passwords?|passcodes?|pass\s+codes?|pin\s+(?:codes?|numbers?)|(?:their|your|bank|card|atm)\s+pins?|credit\s+cards?(?:\s+(?:numbers?|details|info(?:rmation)?))?|debit\s+cards?(?:\s+(?:numbers?|details))?|card\s+(?:numbers?|details)|cvvs?|cvcs?|security\s+codes?|social\s+security\s+numbers?|ssns?|national\s+insurance\s+numbers?|bank\s+(?:account\s+)?(?:details|numbers?|logins?|credentials|passwords?)|account\s+numbers?|log\s*-?\s*in\s+(?:details|credentials|info(?:rmation)?)|login\s+(?:details|credentials|info(?:rmation)?)|credentials|one[- ]time\s+(?:codes?|passwords?|passcodes?)|(?:2fa|mfa|verification)\s+codes?|otps?|security\s+(?:questions?|answers?)|mother's\s+maiden\s+names?|private\s+keys?|seed\s+phrases?|recovery\s+phrases?)\b(\s+[\w'-]+)?`)
	builtinCredentialTopic = wordSet("manager", "managers", "management", "policy", "policies", "reset", "resets", "strength", "habits", "hygiene", "practices", "practice", "rules", "requirements", "fatigue", "security", "safety", "usage", "use", "debt", "debts", "rewards", "fees", "fee", "interest", "limits", "limit", "offers", "statements", "spending", "payments", "applications", "sharing", "reuse", "recovery", "design", "ux", "flow", "flows", "screens", "screen", "experience", "experiences", "options", "choices")
	builtinAskFor          = newLazyRegexp(`(?i)\bask(?:s|ed|ing)?\s+(?:[\w'-]+\s+){0,3}?for\b|\bask(?:s|ed|ing)?\s+(?:[\w'-]+\s+){0,3}?to\s+(?:share|give|provide|tell|write|type|enter|send|read|reveal|disclose|confirm|show|hand)\b|\b(?:collect|collecting|gather|gathering|obtain|obtaining|harvest|harvesting|capture|capturing|steal|stealing|phish|phishing|extract|extracting|request|requesting)\b|\b(?:have|get|make|require|requiring|force|forcing|convince|persuade|trick|tricking)\s+(?:[\w'-]+\s+){0,2}?(?:to\s+)?(?:share|give|provide|tell|write|type|enter|send|read|reveal|disclose|confirm|hand\s+over)\b|^\s*(?:share|give|provide|tell\s+(?:us|me)|write\s+down|type|enter|send|read\s+out|reveal|disclose|confirm|hand\s+over)\b|\bwhat(?:'s|\s+is|\s+are)\s+(?:your|their)\b`)
)

// Children: refused when a sentence both names minors and sensitive personal data.
var (
	builtinMinors    = newLazyRegexp(`(?i)\b(?:children|child|kids|kid|minors|under[- ]?(?:1[0-8]|[5-9])s|under\s+(?:the\s+age\s+of\s+)?(?:1[0-8]|[5-9])\b|teens|teenagers|teenage|adolescents|schoolchildren|pupils|toddlers|infants|(?:[5-9]|1[0-7])[- ]?(?:to[- ]?(?:[5-9]|1[0-7])[- ]?)?years?[- ]olds?)\b`)
	builtinSensitive = newLazyRegexp(`(?i)\b(?:home\s+address(?:es)?|email\s+address(?:es)?|(?:their|your)\s+address(?:es)?|where\s+(?:they|he|she)\s+lives?|phone\s+numbers?|mobile\s+numbers?|(?:photos?|photographs?|pictures?|selfies?|videos?|images?)\s+of\s+(?:them|themselves|their\s+(?:bodies|faces|homes|rooms))|send\s+(?:us|me)\s+(?:[\w'-]+\s+)?(?:photos?|pictures?|selfies?|videos?|images?)|sexual|sexuality|sex|nude|nudes|naked|exact\s+location|current\s+location|gps|date\s+of\s+birth|passwords?|school\s+(?:name|address)|which\s+school|medical\s+records?|health\s+records?|social\s+security|bank\s+details|parents'\s+(?:income|finances|bank|credit\s+cards?))\b`)
)

// harmReason returns why any of the sentences asks for harmful content, or "".
func harmReason(sentences []string) string {
	for _, s := range sentences {
		low := strings.ToLower(s)
		for _, h := range builtinHarms {
			if hasAnySubstring(low, h.triggers) && h.re.MatchString(s) {
				return h.reason
			}
		}
		if hasAnySubstring(low, builtinPromoteTriggers) {
			for _, m := range builtinPromoteHarm.FindAllStringSubmatch(s, -1) {
				if !builtinHarmSupport.has(lowerWord(strings.TrimSpace(m[1]))) {
					return "it encourages self-harm"
				}
			}
		}
		if hasAnySubstring(low, builtinCredentialTriggers) && asksForCredential(s) {
			return "it asks participants for passwords, payment card numbers or other credentials"
		}
		if hasAnySubstring(low, builtinMinorTriggers) && builtinMinors.MatchString(s) && builtinSensitive.MatchString(s) {
			return "it seeks sensitive personal data from children"
		}
	}
	return ""
}

// asksForCredential reports whether s names a credential (not a topic such as "password
// managers") and asks for it.
func asksForCredential(s string) bool {
	named := false
	for _, m := range builtinCredential.FindAllStringSubmatch(s, -1) {
		if !builtinCredentialTopic.has(lowerWord(strings.TrimSpace(m[1]))) {
			named = true
			break
		}
	}
	return named && builtinAskFor.MatchString(s)
}

// Requests that are plainly something other than research.
var (
	builtinCreative = newLazyRegexp(`(?i)^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?(?:(?:write|compose|generate|create|make|give|draft)\s+(?:me\s+|us\s+)?(?:an?\s+|some\s+|the\s+|another\s+)?(?:[\w'-]+\s+){0,2}?(?:poem|poems|poetry|song|songs|lyrics|story|stories|haiku|limerick|sonnet|rap|joke|jokes|essay|novel|screenplay|tweet|slogan|birthday\s+card|love\s+letter|cover\s+letter|fan\s*fiction|riddle)|tell\s+(?:me|us)\s+(?:a\s+|another\s+)?(?:joke|story|riddle|bedtime\s+story))\b`)
	builtinCodeAsk  = newLazyRegexp(`(?i)^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?(?:write|generate|create|build|make|implement|code|fix|debug|refactor|optimi[sz]e|review|explain|convert)\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+|some\s+|this\s+|my\s+)?(?:[\w'+#-]+\s+){0,3}?(?:code|function|script|program|class|method|regex|regular\s+expression|sql|query|algorithm|app|application|website|web\s*page|api|endpoint|bug|unit\s+tests?|python|javascript|typescript|golang|java|html|css|c\+\+|rust)\b`)
	builtinCodeLike = newLazyRegexp("```|\\bfunc\\s+\\w+\\s*\\(|\\bdef\\s+\\w+\\s*\\(|#include\\s*<|\\bselect\\s+.+\\s+from\\s+\\w+|\\bconsole\\.log\\(|\\bimport\\s+(?:java|numpy|os|sys|react)\\b|=>\\s*\\{|\\bpublic\\s+static\\s+void\\b")
	builtinChat     = newLazyRegexp(`(?i)^(?:(?:hi|hello|hey)[,!]?\s+)?(?:what(?:'s|\s+is)\s+the\s+(?:weather|time|date|capital|meaning\s+of\s+life|population|score|news)|(?:will|is)\s+it\s+(?:going\s+to\s+)?(?:rain|snow|be\s+sunny)|weather\s+(?:forecast|today|tomorrow)|translate\b|calculate\b|solve\b|define\b|who\s+(?:won|are\s+you)\b|tell\s+me\s+about\s+yourself|what\s+is\s+\d+\s*[-+*/x]\s*\d+)`)
	builtinFileAsk  = newLazyRegexp(`(?i)\b(?:attached|file|files|document|documents|notes|upload\w*|draft|guide)\b`)
	builtinStrong   = newLazyRegexp(`(?i)\b(?:interview\w*|research\w*|study|studies|participants?|respondents?|survey\w*|usability|focus\s+groups?|discussion\s+guide|screeners?|diary\s+stud\w+)\b`)
)

// Research signals, looked up word by word: a word in the set, or starting with one of
// the stems, counts.
var (
	builtinStrongWords = wordSet("study", "studies", "participant", "participants", "respondent", "respondents", "usability", "screener", "screeners")
	builtinStrongStems = []string{"interview", "research", "survey"}
	builtinWeakWords   = wordSet("insight", "insights", "behaviour", "behaviours", "behavior", "behaviors", "habit", "habits", "needs", "motivation", "motivations", "attitude", "attitudes", "perception", "perceptions", "perceive", "opinion", "opinions", "feeling", "feelings", "views", "feedback", "challenge", "challenges", "problem", "problems", "expectation", "expectations", "preference", "preferences", "decision", "decisions", "decide", "choose", "choice", "choices", "satisfaction", "adoption", "retention", "onboarding", "journey", "journeys", "workflow", "workflows", "usage", "use", "uses", "using", "test", "testing", "concept", "concepts", "prototype", "prototypes", "product", "products", "service", "services", "feature", "features", "pricing", "brand", "trust", "barrier", "barriers", "reason", "reasons")
	builtinWeakStems   = []string{"understand", "learn", "explor", "discover", "uncover", "experienc", "frustrat", "struggl", "evaluat", "assess", "validat", "churn"}
	builtinWeakPhrases = []string{"find out", "pain point", "focus group", "discussion guide"}
)

// researchSignal reports whether guidance says something a study could be about:
// strong when it names research itself, weak when it names something to learn.
func researchSignal(g string) (strong, weak bool) {
	low := strings.ToLower(g)
	for _, w := range wordsOf(low) {
		w = lowerWord(w)
		strong = strong || builtinStrongWords.has(w) || hasAnyPrefix(w, builtinStrongStems)
		weak = weak || builtinWeakWords.has(w) || hasAnyPrefix(w, builtinWeakStems) || isGroupNoun(w)
	}
	return strong, weak || hasAnySubstring(low, builtinWeakPhrases)
}

// hasAnyPrefix reports whether w starts with any of prefixes.
func hasAnyPrefix(w string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// offTopicReason returns why guidance is not a research request, or "". When refining,
// the instructions themselves are judged later, so a missing research signal is fine.
func offTopicReason(guidance string, sentences []string, refining, hasFiles bool) string {
	strong, weak := researchSignal(guidance)
	if strings.ContainsAny(guidance, "`({<#=") && builtinCodeLike.MatchString(guidance) && !strong {
		return "it looks like code, not a research request"
	}
	for _, s := range sentences {
		switch {
		case builtinCreative.MatchString(s):
			return "it asks for creative writing, not a research study"
		case builtinCodeAsk.MatchString(s) && !builtinStrong.MatchString(s):
			return "it asks for software, not a research study"
		case builtinChat.MatchString(s) && !strong:
			return "it is a general question, not a research request"
		}
	}
	if refining || strong || weak {
		return ""
	}
	if hasFiles && builtinFileAsk.MatchString(guidance) {
		return ""
	}
	return "it does not describe a research goal; say what you want to learn and from whom, for example \"interview nurses about night shifts\""
}
