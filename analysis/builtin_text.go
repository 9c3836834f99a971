package analysis

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/jdkato/prose/v2"
	"github.com/kljensen/snowball/english"
	"gopkg.in/neurosnap/sentences.v1"
	sentenglish "gopkg.in/neurosnap/sentences.v1/english"

	"interviewd/tagger"
)

// Bounds on what the engine reads, so one hostile answer costs no more than an
// ordinary long one. Text past them is not read (quotes still come from the real
// message, so they stay exact spans of it).
const (
	// MaxReadBytes is how much of one message the built-in engine reads.
	MaxReadBytes = 8 << 10
	// maxSentenceBytes splits run-on text (no full stops) into pieces a quote can be.
	maxSentenceBytes = 400
	// maxSentences is how many statements one message may contribute.
	maxSentences = 40
)

// reader does the per-message language work: sentences (Punkt, as prose uses it),
// tokens (prose), Snowball stems, polarity from the lexicon and the shape of a
// suggestion; and, for the few statements that name a group, parts of speech
// (prose's tagger) and the noun phrases they give. Everything it holds is
// read-only after construction, so one reader serves every goroutine.
type reader struct {
	seg     *sentences.DefaultSentenceTokenizer
	tagger  *prose.Model
	lex     lexicon
	fillers map[string]bool
}

// newReader returns the process's reader, built on first use: it is read-only, so
// every engine shares it, and an engine made for one analysis (a job's, a
// test's) does not decode the sentence model again.
func newReader() (*reader, error) { return sharedReader() }

var sharedReader = sync.OnceValues(buildReader)

func buildReader() (*reader, error) {
	seg, err := sentenglish.NewSentenceTokenizer(nil)
	if err != nil {
		return nil, err
	}
	// The tagging model is the process's shared one (the built-in interviewer reads
	// with it too): decoded once, not per engine or per call.
	model, err := tagger.Model()
	if err != nil {
		return nil, err
	}
	return &reader{seg: seg, tagger: model, lex: newLexicon(), fillers: stemSet(fillers)}, nil
}

// sentDoc is one statement: a sentence (or a piece of a run-on) of a participant
// message, reduced to what analysis needs.
type sentDoc struct {
	Start, End int32    // the exact span in the message text
	Feats      []feat   // stems and adjacent content-word pairs, sorted by hash, weights summed
	Marks      []uint64 // hashes counted but not weighed: word triples and subject–judgement pairs
	Pos, Neg   int8     // polar judgements found
	Content    int8     // content words (capped), a measure of substance
	Suggest    bool     // shaped like a request or idea
	// labels holds the statement's noun and predicate phrases, found by the tagger
	// only when the statement is read to name a group (see corpus.labelsOf).
	labels *labelSlot
}

// labelSlot is a statement's candidate labels, tagged at most once even when
// several analyses share the cached reading.
type labelSlot struct {
	once    sync.Once
	phrases []phrase // noun phrases ("offline mode") and predicates ("price too high")
}

// feat is one raw feature of a statement before IDF weighting.
type feat struct {
	H uint64
	W float32
}

// msgDoc is one participant message's statements.
type msgDoc struct {
	Index int32
	Sents []sentDoc
}

// ivDoc is one interview's participant messages, as cached.
type ivDoc struct {
	Msgs []msgDoc
}

// readInterview reads every participant message of iv.
func (r *reader) readInterview(iv Interview, sc *readScratch) *ivDoc {
	d := &ivDoc{}
	for mi, m := range iv.Messages {
		if m.Speaker != SpeakerParticipant {
			continue
		}
		md := msgDoc{Index: int32(mi)}
		text := boundText(m.Text, MaxReadBytes)
		for _, sp := range r.spans(text) {
			if sd, ok := r.readSentence(text[sp[0]:sp[1]], sc); ok {
				sd.Start, sd.End = int32(sp[0]), int32(sp[1])
				md.Sents = append(md.Sents, sd)
			}
			if len(md.Sents) >= maxSentences {
				break
			}
		}
		if len(md.Sents) > 0 {
			d.Msgs = append(d.Msgs, md)
		}
	}
	return d
}

// spans returns the byte spans of text's sentences, trimmed of surrounding space,
// with run-ons cut at a space so no span exceeds maxSentenceBytes.
func (r *reader) spans(text string) [][2]int {
	var out [][2]int
	for _, s := range r.seg.Tokenize(text) {
		start, end := s.Start, s.End
		for start < end {
			c, size := utf8.DecodeRuneInString(text[start:])
			if !unicode.IsSpace(c) {
				break
			}
			start += size
		}
		for end > start {
			c, size := utf8.DecodeLastRuneInString(text[:end])
			if !unicode.IsSpace(c) {
				break
			}
			end -= size
		}
		for end-start > maxSentenceBytes {
			cut := strings.LastIndexByte(text[start:start+maxSentenceBytes], ' ')
			if cut <= 0 {
				cut = boundLen(text[start:], maxSentenceBytes)
			}
			out = append(out, [2]int{start, start + cut})
			start += cut
			for start < end && text[start] == ' ' {
				start++
			}
		}
		if end > start {
			out = append(out, [2]int{start, end})
		}
		if len(out) >= 4*maxSentences {
			break
		}
	}
	return out
}

// stemMemo remembers the Snowball stems one reading goroutine has computed: a
// study's vocabulary is a few thousand words said over and over, and stemming is
// the dearest step of a statement's reading after splitting it. A nil memo stems
// every word afresh.
type stemMemo map[string]string

// readScratch is one reading goroutine's memo of stems and the buffers each
// statement is split into (reused statement after statement, so reading
// allocates little besides what it keeps).
type readScratch struct {
	stems stemMemo
	words []string
	toks  []token
	raw   []feat
}

func newReadScratch() *readScratch { return &readScratch{stems: stemMemo{}} }

// maxStemMemo bounds a memo: past it, it starts again empty.
const maxStemMemo = 1 << 16

func (m stemMemo) stem(lower string) string {
	if m == nil {
		return english.Stem(lower, false)
	}
	if st, ok := m[lower]; ok {
		return st
	}
	if len(m) >= maxStemMemo {
		clear(m)
	}
	st := english.Stem(lower, false)
	m[lower] = st
	return st
}

// copulas link a subject to the judgement after it ("the price is too high").
var copulas = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "'s": true, "'re": true, "be": true,
	"been": true, "feels": true, "felt": true, "seems": true, "seemed": true, "looks": true,
	"looked": true, "gets": true, "got": true, "became": true, "becomes": true, "remains": true,
}

// degree adverbs kept in a predicate label; others ("really") are dropped from it.
var degree = map[string]bool{"too": true, "very": true, "so": true, "way": true, "overly": true, "not": true}

type token struct {
	lower, stem, tag string
	word, content    bool
}

// tokens splits s into tokens. Given a scratch (reading), it splits with words
// and stems through the scratch's memo, into its buffers; given none
// (labelling), prose tokenizes and tags it (tagging is most of the cost of
// reading, so only labels use it).
func (r *reader) tokens(s string, sc *readScratch) []token {
	var texts, tags []string
	var stems stemMemo
	var toks []token
	if sc == nil {
		doc, err := prose.NewDocument(s, prose.WithSegmentation(false), prose.WithExtraction(false), prose.UsingModel(r.tagger))
		if err != nil {
			return nil
		}
		for _, t := range doc.Tokens() {
			texts, tags = append(texts, t.Text), append(tags, t.Tag)
		}
		toks = make([]token, len(texts))
	} else {
		sc.words = appendWords(sc.words[:0], s)
		texts, stems = sc.words, sc.stems
		toks = slices.Grow(sc.toks[:0], len(texts))[:len(texts)]
		sc.toks = toks
	}
	for i, text := range texts {
		lower := strings.ToLower(strings.ReplaceAll(text, "’", "'"))
		tk := token{lower: lower, word: hasLetter(lower)}
		if tags != nil {
			tk.tag = tags[i]
		}
		if tk.word {
			tk.stem = stems.stem(lower)
			tk.content = len(lower) > 1 && !english.IsStopWord(lower) && !r.fillers[lower] && !r.fillers[tk.stem]
			// Contractions left whole ("i'd", "can't") are function words when their
			// base is one.
			if base, _, ok := strings.Cut(lower, "'"); ok && (english.IsStopWord(base) || strings.HasSuffix(lower, "n't") || base == "") {
				tk.content = false
			}
		}
		toks[i] = tk
	}
	return toks
}

// readSentence reduces one sentence without tagging it; ok is false when it has no
// content.
func (r *reader) readSentence(s string, sc *readScratch) (sentDoc, bool) {
	toks := r.tokens(s, sc)

	var sd sentDoc
	raw := sc.raw[:0]
	defer func() { sc.raw = raw[:0] }()
	negate := 0
	for i, tk := range toks {
		if negators[tk.lower] || strings.HasSuffix(tk.lower, "n't") {
			negate = 3
			continue
		}
		pol := int8(0)
		if tk.word {
			pol = r.lex.of(tk.lower)
		}
		// "too" before a judgement or amount marks excess: "too high", "too many
		// steps" (not "me too", "too: the app").
		if tk.lower == "too" && i+1 < len(toks) && excessWord(toks[i+1]) && r.lex.of(toks[i+1].lower) == 0 {
			pol = -1
		}
		if pol != 0 && negate > 0 {
			pol = -pol
		}
		switch {
		case pol > 0:
			sd.Pos++
		case pol < 0:
			sd.Neg++
		}
		if negate > 0 {
			negate--
		}
		if tk.content {
			w := float32(1)
			if r.lex.of(tk.lower) != 0 || (i > 0 && toks[i-1].lower == "too") {
				// Judgements say how, not what about: "the price is fair" and "the
				// price is too high" are one subject with two polarities.
				w = 0.4
			}
			raw = append(raw, feat{H: hashKey(tk.stem), W: w})
			sd.Content = min(sd.Content+1, 100)
		}
	}

	// Adjacent content words stand for the noun phrases the tagger would find
	// ("offline mode", "monthly price"): pairs are weighed, triples only counted
	// (a label's rarity across the study is read from these counts).
	for i := 0; i+1 < len(toks); i++ {
		if !toks[i].content || !toks[i+1].content {
			continue
		}
		pair := hashMore(hashMore(hashMore(hashMore(fnvOffset, "p:"), toks[i].stem), " "), toks[i+1].stem)
		raw = append(raw, feat{H: pair, W: 1})
		if i+2 < len(toks) && toks[i+2].content {
			sd.Marks = append(sd.Marks, hashMore(hashMore(pair, " "), toks[i+2].stem))
		}
	}
	// A subject, a copula and the first content word after it: the shape of a
	// predicate label ("the price is way too high" counts as "price high").
	for i := 1; i+1 < len(toks); i++ {
		if !copulas[toks[i].lower] || !toks[i-1].content {
			continue
		}
		for k := i + 1; k < len(toks) && k <= i+4; k++ {
			if toks[k].content && !degree[toks[k].lower] {
				sd.Marks = append(sd.Marks, hashMore(hashMore(hashMore(hashMore(fnvOffset, "q:"), toks[i-1].stem), " "), toks[k].stem))
				break
			}
		}
	}
	if len(raw) == 0 {
		return sentDoc{}, false
	}
	sd.Feats = slices.Clone(mergeFeats(raw))
	sd.labels = &labelSlot{}
	// Every shape of a suggestion has one of these words; most sentences have none,
	// and the expression is the dearest step of a reading.
	if slices.ContainsFunc(toks, func(t token) bool { return suggestionWords[t.lower] }) {
		sd.Suggest = suggestionShape.MatchString(strings.ToLower(strings.ReplaceAll(s, "’", "'")))
	}
	return sd, true
}

// excessWord is a word "too" can qualify: a judgement or an amount, not a pronoun,
// article or conjunction.
func excessWord(t token) bool {
	return t.word && (t.content || amounts[t.lower])
}

// amounts are stop words "too" still qualifies ("too many steps", "too much").
var amounts = map[string]bool{"much": true, "many": true, "few": true, "little": true, "long": true, "often": true, "late": true, "early": true}

// countKey is the hash under which a phrase's rarity across the study is counted:
// a single stem, a pair (a feature), a triple or a subject–judgement pair (marks).
func (p phrase) countKey() (h uint64, mark bool) {
	switch {
	case p.pred:
		// Subject and judgement only, as readSentence marks them: degree words
		// between them ("way too") are left out of the count.
		words := strings.Fields(p.key)
		return hashKey("q:" + words[0] + " " + words[len(words)-1]), true
	case p.words <= 1:
		return hashKey(p.key), false
	case p.words == 2:
		return hashKey("p:" + p.key), false
	}
	return hashKey("p:" + p.key), true
}

type phrase struct {
	surface, key string
	words        int
	pred         bool // a predicate phrase: a label, not a feature (it carries the judgement)
}

// phrases finds noun phrases in tagged tokens (adjectives and nouns ending in a
// noun, at most three words) and, when a copula and an adjective follow, the
// predicate phrase that reads as a finding ("price too high").
func phrases(toks []token) []phrase {
	var out []phrase
	for i := 0; i < len(toks); {
		if !toks[i].content || !(isNoun(toks[i].tag) || isAdj(toks[i].tag) || toks[i].tag == "VBG") {
			i++
			continue
		}
		j, lastNoun := i, -1
		for j < len(toks) && toks[j].content && (isNoun(toks[j].tag) || isAdj(toks[j].tag) || toks[j].tag == "VBG") {
			if isNoun(toks[j].tag) {
				lastNoun = j
			}
			j++
		}
		if lastNoun < 0 {
			i = j
			continue
		}
		from := max(i, lastNoun-2)
		np := toks[from : lastNoun+1]
		out = append(out, makePhrase(np, nil))
		// Predicate: NP copula (degree)* adjective.
		k := lastNoun + 1
		if k < len(toks) && copulas[toks[k].lower] {
			k++
			var deg []token
			for k < len(toks) && (isAdv(toks[k].tag) || toks[k].lower == "not") {
				if degree[toks[k].lower] {
					deg = append(deg, toks[k])
				}
				k++
			}
			if k < len(toks) && isAdj(toks[k].tag) && toks[k].word {
				p := makePhrase(np[len(np)-1:], append(deg, toks[k]))
				p.pred = true
				out = append(out, p)
			}
		}
		i = j
	}
	return out
}

func makePhrase(np, pred []token) phrase {
	var surface, key []string
	for _, t := range append(slices.Clone(np), pred...) {
		surface = append(surface, t.lower)
		if t.content {
			key = append(key, t.stem)
		}
	}
	return phrase{surface: strings.Join(surface, " "), key: strings.Join(key, " "), words: len(key)}
}

// mergeFeats sorts features by hash and sums duplicates.
func mergeFeats(fs []feat) []feat {
	slices.SortFunc(fs, func(a, b feat) int {
		switch {
		case a.H < b.H:
			return -1
		case a.H > b.H:
			return 1
		}
		return 0
	})
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && out[n-1].H == f.H {
			out[n-1].W += f.W
			continue
		}
		out = append(out, f)
	}
	return slices.Clip(out)
}

func stemOf(s string) string { return english.Stem(s, false) }

// hashKey is the 64-bit FNV-1a hash of s (as hash/fnv's New64a gives it).
func hashKey(s string) uint64 { return hashMore(fnvOffset, s) }

// hashMore continues an FNV-1a hash h over s: hashMore(hashKey(a), b) is
// hashKey(a + b), without building a + b (statements are hashed word by word).
func hashMore(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func isNoun(tag string) bool { return strings.HasPrefix(tag, "NN") }
func isAdj(tag string) bool  { return strings.HasPrefix(tag, "JJ") }
func isAdv(tag string) bool  { return strings.HasPrefix(tag, "RB") }

func hasLetter(s string) bool {
	for _, c := range s {
		if unicode.IsLetter(c) {
			return true
		}
	}
	return false
}

// boundText returns at most n bytes of s, cut on a rune boundary.
func boundText(s string, n int) string { return s[:boundLen(s, n)] }

// boundLen is the length of the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func boundLen(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
