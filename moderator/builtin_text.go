package moderator

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text helpers of the built-in engine. They work on words and phrases with fixed tables
// rather than on any model of the language, which keeps the engine fast, offline and
// deterministic, and makes its limits easy to see.

// Limits on what the built-in engine writes into a brief. They sit inside the limits
// any engine's brief must meet, so a refined brief stays valid whichever engine drafted it.
const (
	builtinMaxTitle     = 100 // runes
	builtinMaxItem      = 400 // runes per objective or question it writes
	builtinMaxQuestions = 50  // per list
	builtinMaxMinutes   = 480
	builtinMaxScan      = 256 << 10 // bytes of each file's text read for questions and terms
	builtinMaxFileQs    = 10        // questions taken from files
)

// words is an immutable lookup table built on first use: the built-in engine has
// thirty of them, and building them all at package init cost every start and every
// admin command a millisecond before main ran.
type words struct {
	list []string
	once sync.Once
	set  map[string]bool
}

// wordSet returns the lookup table of list.
func wordSet(list ...string) *words { return &words{list: list} }

// has reports whether w is in the table.
func (s *words) has(w string) bool {
	s.once.Do(func() {
		s.set = make(map[string]bool, len(s.list))
		for _, w := range s.list {
			s.set[w] = true
		}
	})
	return s.set[w]
}

// builtinStopWords are function words and research boilerplate: never a key term, and
// never enough on their own to make a topic.
var builtinStopWords = wordSet(
	"a", "an", "the", "and", "or", "but", "nor", "so", "of", "on", "in", "at", "to", "by",
	"for", "with", "from", "as", "into", "onto", "about", "over", "under", "after", "before",
	"during", "than", "then", "that", "this", "these", "those", "there", "here", "it", "its",
	"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done",
	"have", "has", "had", "having", "can", "could", "will", "would", "shall", "should", "may",
	"might", "must", "not", "no", "yes", "if", "when", "where", "why", "how", "what", "which",
	"who", "whom", "whose", "whether", "while", "i", "me", "my", "we", "us", "our", "ours",
	"you", "your", "yours", "he", "him", "his", "she", "her", "they", "them", "their",
	"theirs", "themselves", "all", "any", "some", "each", "every", "more", "most", "much",
	"many", "very", "just", "also", "too", "only", "own", "same", "such", "other", "others",
	"both", "few", "like", "want", "wants", "wanted", "please", "help", "make", "create",
	"draft", "write", "need", "understand", "learn", "find", "out", "explore", "discover",
	"study", "studies", "research", "interview", "interviews", "question", "questions",
	"participant", "participants", "people", "person", "respondents", "brief", "know",
	"get", "really", "better", "way", "ways", "thing", "things", "lot", "well", "currently",
	"today", "now", "use", "using", "used", "via", "per", "etc", "e.g", "i.e", "let", "lets",
	"would", "like", "them", "into", "because", "since", "until", "again", "able", "one",
	"two", "three", "first", "second", "new", "old", "good", "bad", "great", "big", "small",
	"run", "set", "ask", "asking", "talk", "speak", "guide", "based", "around", "within",
	"without", "across", "through", "toward", "towards", "upon", "amongst", "among", "also",
	"yet", "even", "ever", "never", "always", "often", "usually", "sometimes", "feel",
	"think", "see", "say", "said", "tell", "give", "take", "look", "going", "go", "goes",
	"try", "trying", "kind", "sort", "type", "types", "bit", "little", "whatever",
)

// builtinGroupNouns name groups of people: participants and clause subjects.
var builtinGroupNouns = wordSet(
	"people", "persons", "users", "customers", "clients", "employees", "staff", "workers",
	"managers", "nurses", "doctors", "physicians", "clinicians", "patients", "students",
	"teachers", "parents", "developers", "engineers", "designers", "drivers", "owners",
	"buyers", "shoppers", "subscribers", "members", "researchers", "founders", "freelancers",
	"hires", "players", "gamers", "travellers", "travelers", "residents", "farmers",
	"adults", "seniors", "retirees", "teens", "teenagers", "children", "kids",
	"professionals", "admins", "administrators", "marketers", "agents", "consumers",
	"participants", "respondents", "readers", "listeners", "viewers", "visitors", "guests",
	"volunteers", "donors", "candidates", "applicants", "tenants", "landlords", "homeowners",
	"commuters", "cyclists", "runners", "athletes", "musicians", "artists", "writers",
	"creators", "sellers", "vendors", "suppliers", "partners", "teams", "leads",
	"executives", "lawyers", "accountants", "pharmacists", "caregivers", "carers",
	"mothers", "fathers", "mums", "moms", "dads", "men", "women", "individuals", "citizens",
	"voters", "millennials", "operators", "analysts", "scientists", "specialists",
	"therapists", "dentists", "technicians", "electricians", "plumbers", "chefs", "cooks",
	"waiters", "cashiers", "merchants", "retailers", "businesses", "companies",
	"organisations", "organizations", "startups", "investors", "authors", "editors",
	"actors", "instructors", "contractors", "supervisors", "directors", "mentors", "tutors",
	"counsellors", "counselors", "moderators", "educators", "coordinators", "inspectors",
	"sponsors", "collaborators", "contributors", "advisors", "advisers", "interviewees",
	"trainees", "attendees", "refugees", "migrants", "immigrants", "consultants",
	"assistants", "colleagues", "peers", "friends", "families", "households", "couples",
	"learners", "graduates", "interns", "recruiters", "hosts", "pilots", "soldiers",
	"veterans", "clinics", "schools", "hospitals", "pharmacies", "shops", "stores",
	"restaurants", "agencies", "charities", "nonprofits", "smbs", "smes",
)

// builtinNotPeople are words ending like a group of people ("-ers", "-ists") that are not.
var builtinNotPeople = wordSet(
	"others", "orders", "numbers", "offers", "papers", "letters", "layers", "filters",
	"matters", "answers", "barriers", "centers", "containers", "parameters", "folders",
	"headers", "footers", "markers", "servers", "computers", "printers", "stickers",
	"rivers", "flowers", "powers", "towers", "waters", "borders", "chapters", "corners",
	"covers", "dinners", "fibers", "ledgers", "lockers", "meters", "newsletters",
	"quarters", "registers", "reminders", "sliders", "timers", "triggers", "vouchers",
	"wrappers", "banners", "browsers", "burgers", "chargers", "characters", "clusters",
	"shelters", "sweaters", "trailers", "trackers", "transfers", "fingers", "shoulders",
	"summers", "winters", "theaters", "theatres", "posters", "lasers", "tenders",
	"blenders", "beers", "cheers", "remainders", "monsters", "thrillers", "spreadsheets",
	"lists", "playlists", "checklists", "wishlists", "twists", "wrists", "exists",
	"insists", "persists", "consists", "assists", "resists", "fists", "mists",
)

// builtinWhWords open an indirect question ("why customers cancel").
var builtinWhWords = wordSet("why", "how", "what", "whether", "if", "when", "where", "which", "who")

// isGroupNoun reports whether w (any case) names a group of people.
func isGroupNoun(w string) bool {
	w = lowerWord(w)
	if builtinGroupNouns.has(w) {
		return true
	}
	if builtinNotPeople.has(w) || utf8.RuneCountInString(w) < 6 {
		return false
	}
	return strings.HasSuffix(w, "ers") || strings.HasSuffix(w, "ists") || strings.HasSuffix(w, "ians") || strings.HasSuffix(w, "ees")
}

// isWordRune reports whether r belongs inside a word: letters, digits, apostrophes and
// hyphens ("don't", "self-service").
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == '-'
}

// lowerWord lowercases a word, trims stray hyphens and quotes and folds the typographic
// apostrophe, so table lookups see one spelling.
func lowerWord(w string) string {
	w = strings.ToLower(strings.Trim(w, "-'’\""))
	return strings.ReplaceAll(w, "’", "'")
}

// mapWords rewrites every word of s with f and keeps everything between words byte for byte.
func mapWords(s string, f func(string) string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) && r != utf8.RuneError {
			if start < 0 {
				start = i
			}
		} else {
			if start >= 0 {
				b.WriteString(f(s[start:i]))
				start = -1
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	if start >= 0 {
		b.WriteString(f(s[start:]))
	}
	return b.String()
}

// wordsOf returns the words of s in order, as written.
func wordsOf(s string) []string {
	var out []string
	mapWords(s, func(w string) string {
		if t := strings.Trim(w, "-'’"); t != "" {
			out = append(out, t)
		}
		return w
	})
	return out
}

// swapWords rewrites words found in table (by lowercase) and keeps a leading capital.
func swapWords(s string, table map[string]string) string {
	return mapWords(s, func(w string) string {
		to, ok := table[lowerWord(w)]
		if !ok {
			return w
		}
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && w != "I" {
			return capitalise(to)
		}
		return to
	})
}

// builtinToParticipant turns the researcher's third person into the interviewer's second
// person: "how they plan their week" becomes "how you plan your week", and the
// researcher's "my app" becomes the organisation's "our app".
var builtinToParticipant = map[string]string{
	"they": "you", "them": "you", "their": "your", "theirs": "yours",
	"themselves": "yourself", "they're": "you're", "they've": "you've", "they'd": "you'd",
	"they'll": "you'll", "my": "our", "me": "us", "myself": "ourselves", "mine": "ours",
}

// builtinToOrg keeps the researcher's first person as the organisation's: "my app" reads
// "our app" in a brief others will read.
var builtinToOrg = map[string]string{"my": "our", "me": "us", "myself": "ourselves", "mine": "ours"}

// secondPerson addresses a phrase written about participants to the participant.
func secondPerson(s string) string { return swapWords(s, builtinToParticipant) }

// capitalise upper-cases the first rune of s.
// A first word with capitals inside ("iPhone", "eBay") is left as written.
func capitalise(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || !unicode.IsLower(r) {
		return s
	}
	for _, c := range s[size:] {
		if unicode.IsSpace(c) {
			break
		}
		if unicode.IsUpper(c) {
			return s
		}
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// cleanText makes outside text safe to copy into a brief: invalid UTF-8 dropped, control
// characters (C0, C1, line and paragraph separators) read as spaces, line breaks kept.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// collapseSpace trims s and folds every run of white space (newlines included) to one space.
// A probe is usually already one line with single spaces, and is then returned as is.
func collapseSpace(s string) string {
	prevSpace := true // a leading space is folded
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (r != ' ' || prevSpace) {
			return strings.Join(strings.Fields(s), " ")
		}
		prevSpace = space
	}
	if prevSpace && s != "" { // a trailing space
		return strings.Join(strings.Fields(s), " ")
	}
	return s
}

// wordCount is len(strings.Fields(s)), without making the slice.
func wordCount(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}

// trimPhrase strips surrounding white space and punctuation.
func trimPhrase(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '\'' && r != '’') || r == '`'
	})
}

// truncateRunes cuts s to at most n runes, at a word boundary when there is one.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if cut >= n {
			s = s[:i]
			break
		}
		cut++
	}
	if i := strings.LastIndexByte(s, ' '); i > len(s)/2 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ,;:-")
}

// asQuestion makes s a single-line question: collapsed, bounded, capitalised, ending in '?'.
func asQuestion(s string) string {
	s = truncateRunes(collapseSpace(s), builtinMaxItem-1)
	s = strings.TrimRight(s, " .!,;:")
	if s == "" {
		return ""
	}
	if !strings.HasSuffix(s, "?") {
		s += "?"
	}
	return capitalise(s)
}

// asSentence makes s a single-line sentence: collapsed, bounded, capitalised, ending in a stop.
func asSentence(s string) string {
	s = truncateRunes(collapseSpace(s), builtinMaxItem-1)
	s = strings.TrimRight(s, " ,;:")
	if s == "" {
		return ""
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return capitalise(s)
}

// builtinMinorWords stay lower case inside a title.
var builtinMinorWords = wordSet("a", "an", "the", "and", "but", "or", "nor", "for", "of", "on", "in", "at", "to", "by", "with", "from", "as", "vs", "via", "per")

// titleCase capitalises the words of s except minor words inside it; words already
// carrying capitals ("iOS", "CRM") are kept as written.
func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if strings.IndexFunc(w, unicode.IsUpper) >= 0 {
			continue
		}
		if i > 0 && i < len(words)-1 && builtinMinorWords.has(lowerWord(w)) {
			continue
		}
		parts := strings.Split(w, "-")
		for j, p := range parts {
			parts[j] = capitalise(p)
		}
		words[i] = strings.Join(parts, "-")
	}
	return strings.Join(words, " ")
}

// contentWords returns the lowercase words of s that are not stop words, numbers or
// contractions, and have at least min runes.
func contentWords(s string, min int) []string {
	var out []string
	for _, w := range wordsOf(s) {
		lw := lowerWord(w)
		if builtinStopWords.has(lw) || strings.ContainsRune(lw, '\'') || utf8.RuneCountInString(lw) < min {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(lw); !unicode.IsLetter(r) {
			continue
		}
		out = append(out, lw)
	}
	return out
}

// keyTerms returns up to n of the most frequent content words of texts, ties broken by
// first appearance, leaving out words in skip.
func keyTerms(texts []string, n int, skip map[string]bool) []string {
	count := map[string]int{}
	var order []string
	for _, t := range texts {
		for _, w := range contentWords(t, 4) {
			if skip[w] || skip[stemWord(w)] {
				continue
			}
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w]++
		}
	}
	// A stable selection: repeatedly take the best remaining word. n is small.
	var out []string
	taken := map[string]bool{}
	for len(out) < n {
		best := ""
		for _, w := range order {
			if !taken[w] && (best == "" || count[w] > count[best]) {
				best = w
			}
		}
		if best == "" {
			break
		}
		taken[best] = true
		out = append(out, best)
	}
	return out
}

// stemWord is a light suffix stripper so "pricing", "prices" and "price" meet as "pric".
func stemWord(w string) string {
	w = lowerWord(w)
	for _, suf := range []string{"ing", "ies", "es", "ed", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			break
		}
	}
	return strings.TrimSuffix(w, "e")
}

// joinList writes "a", "a and b" or "a, b and c".
func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// hashStrings is FNV-1a over the parts, each followed by a separator byte.
func hashStrings(parts ...string) uint64 {
	// hash/fnv's New64a, inline: hashing a probe's question and answer allocates nothing.
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * prime64
		}
		h *= prime64 // the separator, 0
	}
	return h
}

// mix64 is the splitmix64 finaliser: a cheap, well-spread step for deterministic choices.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pickBy chooses one of items deterministically from r.
func pickBy(items []string, r uint64) string { return items[r%uint64(len(items))] }

// splitSentences cuts s at sentence ends, semicolons and line breaks that are outside
// double quotes; a '?' stays with its sentence.
func splitSentences(s string) []string { return splitOutsideQuotes(s, nil) }

// splitOutsideQuotes cuts s at sentence ends, semicolons and line breaks outside double
// (straight or curly) quotes, and, when connector is set, at every ',' or ' ' where
// connector reports a connector's length (the connector itself is dropped).
func splitOutsideQuotes(s string, connector func(string) int) []string {
	var out []string
	start, inQuote := 0, false
	emit := func(end, next int) {
		if p := strings.TrimSpace(s[start:end]); p != "" {
			out = append(out, p)
		}
		start = next
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			inQuote = !inQuote
		case r == '“':
			inQuote = true
		case r == '”':
			inQuote = false
		case inQuote:
		case r == '\n' || r == ';':
			emit(i, i+size)
		case r == '.' || r == '!' || r == '?':
			if i+size == len(s) || s[i+size] == ' ' || s[i+size] == '\n' || s[i+size] == '\t' {
				emit(i+size, i+size)
			}
		case connector != nil && (r == ',' || r == ' '):
			if n := connector(s[i:]); n > 0 {
				emit(i, i+n)
				i += n
				continue
			}
		}
		i += size
	}
	emit(len(s), len(s))
	return out
}

// unquoteText returns the text inside matching surrounding quotes and true, or s and false.
func unquoteText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"‘", "’"}} {
		if len(s) >= len(q[0])+len(q[1])+1 && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			return strings.TrimSpace(s[len(q[0]) : len(s)-len(q[1])]), true
		}
	}
	return s, false
}

// firstWord returns the lowercase first word of s.
// It reads only as far as the first word, however long s is.
func firstWord(s string) string {
	start := -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		word := isWordRune(r) && r != utf8.RuneError
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if w := lowerWord(s[start:i]); w != "" {
				return w
			}
			start = -1
		}
		i += size
	}
	if start >= 0 {
		return lowerWord(s[start:])
	}
	return ""
}
