package moderator

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
)

// The interview script is owned by interviewd, not by an engine: which question comes
// next, the wording of every screener and verbatim question, and when the interview ends
// are decided here. An engine is only asked for follow-up probes, and a probe that
// rewords a scripted question, runs long, or goes beyond the cap is dropped.

// Script phases.
const (
	PhaseScreener = "screener"
	PhaseVerbatim = "verbatim"
	PhaseDone     = "done"
)

// Script messages the interviewer sends around the brief's questions.
const (
	ScriptGreeting = "Hello, and thank you for taking part. I'll ask you a few questions; there are no right or wrong answers, and you can skip anything you'd rather not answer."
	ScriptClosing  = "That's all my questions. Thank you very much for your time and for sharing your experience."
	// ScriptSkipped acknowledges a skipped question before the next one: a skip is a
	// right the greeting promised, so it is taken without comment or pressure.
	ScriptSkipped = "No problem, let's move on."
	// SkippedAnswer is what the transcript records for a question the participant
	// skipped, so an export shows the question was asked and passed on, not forgotten.
	SkippedAnswer = "(skipped)"
)

const (
	// scriptMaxProbes caps follow-ups per verbatim question whatever an engine proposes.
	scriptMaxProbes = 2
	// scriptMaxProbeRunes: a longer "probe" is a speech, not a follow-up.
	scriptMaxProbeRunes = 300
	// scriptMinFragment is the shortest probe checked for being a piece of a scripted
	// question: shorter ones ("Why?") are too likely to occur innocently.
	scriptMinFragment = 20
)

// Script is the position of an interview in its brief. Zero value = not started.
type Script struct {
	Phase  string `json:"phase"`  // "", "screener", "verbatim" or "done"
	Index  int    `json:"index"`  // 0-based position in the phase's question list
	Probes int    `json:"probes"` // follow-ups already asked for the current verbatim question
	// Asked remembers every follow-up asked so far in the interview as one bit of a
	// 64-bit filter (probeBit), so that none is asked twice: a follow-up whose bit is
	// set is not asked. Another follow-up's bit can only pass over one never asked. A
	// filter rather than the list keeps the position a few bytes however long the
	// interview, and lets the built-in interviewer avoid repeats without reading the
	// transcript.
	Asked uint64 `json:"asked,omitempty"`
}

// Next is called after each participant answer (answer=="" at the start) and returns the
// interviewer's messages to send and the new position. done is true when the interview
// has ended (the last message is a thank-you). It returns the engine's error (wrapped)
// when a probe cannot be had, ctx's error when ctx is done, and an error for an unknown
// phase; the position is then unchanged.
func (s Script) Next(ctx context.Context, m Engine, brief kv.Brief, interviewCtx map[string]string, note string, transcript []Message, answer string) (msgs []string, next Script, done bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, s, false, err
	}
	switch s.Phase {
	case "":
		next := s.following(brief, interviewCtx)
		return []string{ScriptGreeting, next.say(brief)}, next, next.Phase == PhaseDone, nil
	case PhaseScreener:
	case PhaseVerbatim:
		q := s.Question(brief)
		if q != "" && s.Probes < scriptMaxProbes && !closesTopic(q, answer) {
			p, err := m.Probe(ctx, ProbeRequest{
				Brief:       brief,
				Question:    q,
				Answer:      answer,
				ProbesSoFar: s.Probes,
				Context:     interviewCtx,
				Note:        note,
				Transcript:  transcript,
				topicOpen:   true,
				asked:       s.Asked,
			})
			if err != nil {
				return nil, s, false, fmt.Errorf("probe for verbatim question %d: %w", s.Index+1, err)
			}
			if p, words, ok := acceptProbe(p, brief); ok {
				if bit := probeBit(words); s.Asked&bit == 0 && !saidBefore(p, transcript) {
					return []string{p}, Script{Phase: PhaseVerbatim, Index: s.Index, Probes: s.Probes + 1, Asked: s.Asked | bit}, false, nil
				}
			}
		}
	case PhaseDone:
		return nil, s, true, nil
	default:
		return nil, s, false, fmt.Errorf("interview script: unknown phase %q", s.Phase)
	}
	next = s.following(brief, interviewCtx)
	return []string{next.say(brief)}, next, next.Phase == PhaseDone, nil
}

// Skip returns the messages and position after the participant skips the current
// question: the next scripted question (never a follow-up), or the closing.
func (s Script) Skip(brief kv.Brief, facts map[string]string) (msgs []string, next Script, done bool) {
	if s.Phase == PhaseDone {
		return nil, s, true
	}
	next = s.following(brief, facts)
	if next.Phase == PhaseDone {
		return []string{ScriptClosing}, next, true
	}
	return []string{ScriptSkipped, next.say(brief)}, next, false
}

// Onward returns the messages and position of moving on from s to the next scripted
// question, or the closing, with no follow-up: what a rehearsal short of turns does so
// that it still asks every question. Before the start it is the opening, as Next's.
func (s Script) Onward(brief kv.Brief, facts map[string]string) (msgs []string, next Script, done bool) {
	switch s.Phase {
	case PhaseDone:
		return nil, s, true
	case "":
		next = s.following(brief, facts)
		return []string{ScriptGreeting, next.say(brief)}, next, next.Phase == PhaseDone
	}
	next = s.following(brief, facts)
	return []string{next.say(brief)}, next, next.Phase == PhaseDone
}

// Question returns the current scripted question exactly as the brief words it, or ""
// before the start, once done, or when the position is outside the brief.
func (s Script) Question(brief kv.Brief) string {
	var list []string
	switch s.Phase {
	case PhaseScreener:
		list = brief.PreInterviewQuestions
	case PhaseVerbatim:
		list = brief.VerbatimQuestions
	}
	if s.Index < 0 || s.Index >= len(list) {
		return ""
	}
	return list[s.Index]
}

// say returns what the interviewer says on arriving at s: its question, or the closing.
func (s Script) say(brief kv.Brief) string {
	if s.Phase == PhaseDone {
		return ScriptClosing
	}
	return s.Question(brief)
}

// following returns the position of the next question to ask after s: the next screener
// question the context has not already answered, else the next verbatim question, else
// done. Blank questions are passed over; verbatim questions are never skipped otherwise.
// The follow-ups asked so far go with it.
func (s Script) following(brief kv.Brief, facts map[string]string) Script {
	next := s.next(brief, facts)
	next.Asked = s.Asked
	return next
}

func (s Script) next(brief kv.Brief, facts map[string]string) Script {
	phase, i := s.Phase, s.Index+1
	if phase == "" {
		phase, i = PhaseScreener, 0
	}
	if phase == PhaseScreener {
		for ; i < len(brief.PreInterviewQuestions); i++ {
			q := brief.PreInterviewQuestions[i]
			if strings.TrimSpace(q) != "" && !answeredByContext(q, facts) {
				return Script{Phase: PhaseScreener, Index: i}
			}
		}
		phase, i = PhaseVerbatim, 0
	}
	if phase == PhaseVerbatim {
		for ; i < len(brief.VerbatimQuestions); i++ {
			if strings.TrimSpace(brief.VerbatimQuestions[i]) != "" {
				return Script{Phase: PhaseVerbatim, Index: i}
			}
		}
	}
	return Script{Phase: PhaseDone}
}

// acceptProbe returns an engine's probe tidied to one line, its normalised words, and
// whether it may be asked: not empty, not over scriptMaxProbeRunes, not leading (see
// isLeading), and not a scripted question in disguise (containing one, or being a
// sizeable piece of one).
func acceptProbe(p string, brief kv.Brief) (string, string, bool) {
	p = collapseSpace(p)
	if p == "" || utf8.RuneCountInString(p) > scriptMaxProbeRunes {
		return "", "", false
	}
	f := probeFacts(p)
	np := f.words
	if f.leading || np == "" {
		return "", "", false
	}
	for _, list := range [][]string{brief.VerbatimQuestions, brief.PreInterviewQuestions} {
		for _, q := range list {
			nq := questionWords(q)
			if nq == "" {
				continue
			}
			if strings.Contains(np, nq) || (len(np) >= scriptMinFragment && strings.Contains(nq, np)) {
				return "", "", false
			}
		}
	}
	return p, np, true
}

// probeBit is a follow-up's bit in Script.Asked, from its normalised words: the same
// follow-up with other punctuation or case is the same follow-up.
func probeBit(words string) uint64 { return 1 << (hashStrings(words) % 64) }

// saidBefore reports whether the interviewer has already said p in transcript (a model
// engine is given the transcript; the built-in one is kept from repeats by Asked).
func saidBefore(p string, transcript []Message) bool {
	for _, m := range transcript {
		if m.Speaker != kv.SpeakerParticipant && m.Text == p {
			return true
		}
	}
	return false
}

// normalisedWords lowercases s and keeps only its letters and digits, one space between
// words, so punctuation and spacing cannot disguise a question.
// It runs on every scripted question at every probe, so it is one pass with one
// allocation (strings.ToLower is unicode.ToLower rune by rune, as here).
func normalisedWords(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s {
		r = unicode.ToLower(r)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			gap = true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte(' ')
		}
		gap = false
		b.WriteRune(r)
	}
	return b.String()
}

// builtinFactSynonyms group words a context key and a screener question may use for the
// same fact.
var builtinFactSynonyms = [][]string{
	{"role", "job", "occupation", "position", "profession", "title"},
	{"age", "old"},
	{"company", "organisation", "organization", "employer", "business", "workplace"},
	{"location", "city", "country", "live", "based", "region", "town"},
	{"team", "department"},
	{"industry", "sector"},
	{"email", "mail"},
	{"plan", "tier", "subscription"},
}

// answeredByContext reports whether a context fact already answers a screener question:
// every word of some context key with a non-empty value appears in the question
// (case-insensitive, underscores and hyphens read as spaces, simple plurals and the
// synonyms above matched).
func answeredByContext(question string, facts map[string]string) bool {
	if len(facts) == 0 {
		return false
	}
	qw := map[string]bool{}
	for _, w := range strings.Fields(normalisedWords(question)) {
		qw[singularWord(w)] = true
	}
	for k, v := range facts {
		if strings.TrimSpace(v) == "" {
			continue
		}
		key := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(k)
		words := strings.Fields(normalisedWords(key))
		kept := 0
		all := true
		for _, w := range words {
			if builtinStopWords.has(w) {
				continue
			}
			kept++
			if !qw[singularWord(w)] && !synonymIn(singularWord(w), qw) {
				all = false
				break
			}
		}
		if kept > 0 && all {
			return true
		}
	}
	return false
}

// singularWord drops a plural "s" so "roles" meets "role".
func singularWord(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// synonymIn reports whether a synonym of w is among words.
func synonymIn(w string, words map[string]bool) bool {
	for _, group := range builtinFactSynonyms {
		has := false
		for _, g := range group {
			has = has || g == w
		}
		if !has {
			continue
		}
		for _, g := range group {
			if words[g] {
				return true
			}
		}
	}
	return false
}
