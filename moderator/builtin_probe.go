package moderator

import (
	"strings"
)

// The built-in interviewer's follow-ups: one short neutral probe per verbatim question at
// most, none after a long answer, a screener question, or an answer that closes the
// topic ("No, that's everything"). A probe names something the participant said (a
// noun phrase of their answer: "You mentioned the rota. …"), never asks for an example
// the answer already gives, and is never one already asked in the interview (the
// script's filter, ProbeRequest.asked). Every probe is an open question that suggests
// no answer (never "wasn't that frustrating?"). A note can steer which word a probe
// picks up, but the probe only ever repeats the participant's own words, so neither
// the note nor the context is shown.

// builtinProbes are the neutral follow-ups, for an answer with nothing to name.
var builtinProbes = []string{
	"Could you tell me more about that?",
	"What makes you say that?",
	"Can you give me an example?",
	"What was that like for you?",
}

// builtinPhraseProbes name a phrase of the answer (%s).
var builtinPhraseProbes = []string{
	"You mentioned %s. Could you tell me more about that?",
	"Could you say a bit more about %s?",
	"You mentioned %s. How does that play out for you?",
	"You mentioned %s. Can you give me an example?",
}

// asksExample reports whether a probe asks for an example, which an answer that gives
// one does not get.
func asksExample(probe string) bool { return strings.Contains(probe, "example") }

const (
	builtinProbeMaxWords = 40 // an answer longer than this needs no prompting
	builtinProbesPerQ    = 1
)

var (
	// builtinNoteFocus reads the subject out of a steering note: "dig into pricing".
	builtinNoteFocus = newLazyRegexp(`(?i)\b(?:dig\s+(?:into|in\s+on|deeper\s+(?:into|on))|probe(?:\s+(?:on|about|into|for))?|focus\s+on|ask\s+(?:more\s+)?about|explore|follow\s+up\s+on|find\s+out\s+about|push\s+on|get\s+at|look\s+for|learn\s+about|interested\s+in|curious\s+about)\s+(.+)`)
	// builtinDecline is an answer that opts out; it is not pressed.
	builtinDecline = newLazyRegexp(`(?i)^(?:i(?:'d|\s+would)\s+rather\s+not|(?:i\s+)?prefer\s+not|pass\b|skip\b|no\s+comment|next\s+question|i\s+don't\s+want\s+to)`)
	// builtinNoteNoise are words of a note that say how to interview, not what about.
	builtinNoteNoise = wordSet("participant", "participants", "interviewee", "answer", "answers", "probe", "probes", "mention", "mentions", "mentioned", "deeper", "dig", "focus", "follow", "polite", "gently", "carefully", "please", "customer", "user")
	// builtinGivesExample is an answer that already tells of an instance: "for example",
	// "like when", "the other day", "last Tuesday", "a few weeks ago".
	builtinGivesExample = newLazyRegexp(`(?i)\b(?:for\s+(?:example|instance)|e\.g\.|such\s+as|like\s+(?:when|the\s+time|last|that\s+time|once)|one\s+time|once\s+when|the\s+other\s+(?:day|week|night)|last\s+(?:week|month|year|time|night|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter|christmas)|yesterday|this\s+(?:morning|week)|(?:a|one|two|three|few|couple\s+of)\s+(?:days|weeks|months|years)\s+ago|in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)\b|(?:recently|once),?\s+(?:i|we|my|our))\b`)
)

// builtinProbe returns the built-in follow-up for req, or "" to move on: the first of
// its candidates (see probeCandidates) not already asked in the interview.
func builtinProbe(req ProbeRequest) string {
	if req.ProbesSoFar >= builtinProbesPerQ {
		return ""
	}
	q := strings.TrimSpace(req.Question)
	for _, s := range req.Brief.PreInterviewQuestions {
		if strings.TrimSpace(s) == q {
			return ""
		}
	}
	ans := strings.TrimSpace(req.Answer)
	if n := wordCount(ans); n == 0 || n > builtinProbeMaxWords || builtinDecline.MatchString(ans) || (!req.topicOpen && closesTopic(q, ans)) {
		return ""
	}
	for _, p := range probeCandidates(req.Note, req.Context, q, ans) {
		if req.asked == 0 || req.asked&probeBit(probeFacts(p).words) == 0 {
			return p
		}
	}
	return ""
}

// probeCandidates lists the follow-ups for an answer, best first: the note's word when
// the answer uses it, then each noun phrase of the answer in each phrasing, then the
// neutral probes; none asking for an example when the answer gives one. Which phrasing
// and which neutral probe lead is chosen by a hash of question and answer. A phrase
// holding a fact of the link's context is not named: the participant said it, but an
// interviewer echoing it can seem to know more than it was told.
func probeCandidates(note string, facts map[string]string, question, answer string) []string {
	example := builtinGivesExample.MatchString(answer)
	r := hashStrings(question, answer)
	var out []string
	add := func(p string) {
		if !(example && asksExample(p)) {
			out = append(out, p)
		}
	}
	if w := noteMention(note, answer); w != "" {
		add("You mentioned " + w + ". Could you tell me more about that?")
	}
	for _, np := range answerPhrases(answer, question) {
		if holdsFact(np, facts) {
			continue
		}
		for k := range builtinPhraseProbes {
			add(strings.Replace(builtinPhraseProbes[(int(r%uint64(len(builtinPhraseProbes)))+k)%len(builtinPhraseProbes)], "%s", np, 1))
		}
	}
	for k := range builtinProbes {
		add(builtinProbes[(int(r%uint64(len(builtinProbes)))+k)%len(builtinProbes)])
	}
	return out
}

// holdsFact reports whether phrase and some non-empty context value contain one another
// as whole words (case and punctuation aside).
func holdsFact(phrase string, facts map[string]string) bool {
	if len(facts) == 0 {
		return false
	}
	p := " " + normalisedWords(phrase) + " "
	for _, v := range facts {
		if w := normalisedWords(v); w != "" && (strings.Contains(p, " "+w+" ") || strings.Contains(" "+w+" ", p)) {
			return true
		}
	}
	return false
}

// noteMention returns the first word of the answer that the note asks to dig into, as
// the participant wrote it, or "".
func noteMention(note, answer string) string {
	if strings.TrimSpace(note) == "" {
		return ""
	}
	focus := note
	if m := builtinNoteFocus.FindStringSubmatch(note); m != nil {
		focus = m[1]
	}
	terms := map[string]bool{}
	for _, w := range contentWords(focus, 4) {
		if !builtinNoteNoise.has(w) {
			terms[stemWord(w)] = true
		}
	}
	for _, w := range wordsOf(answer) {
		if len(w) >= 4 && terms[stemWord(w)] {
			return strings.ToLower(w)
		}
	}
	return ""
}
