package moderator

import (
	"strings"
)

// The built-in interviewer's follow-ups: one short neutral probe per verbatim question at
// most, none after a long answer, a screener question, or an answer that closes the
// topic ("No, that's everything"). Every probe is an open question that suggests no
// answer (never "wasn't that frustrating?"). A note can steer which word a
// probe picks up, but the probe only ever repeats the participant's own word, so neither
// the note nor the context is shown.

// builtinProbes are the neutral follow-ups, chosen by a hash of question and answer.
var builtinProbes = []string{
	"Could you tell me more about that?",
	"What makes you say that?",
	"Can you give me an example?",
	"What was that like for you?",
}

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
)

// builtinProbe returns the built-in follow-up for req, or "" to move on.
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
	if w := noteMention(req.Note, ans); w != "" {
		return "You mentioned " + w + ". Could you tell me more about that?"
	}
	return pickBy(builtinProbes, hashStrings(q, ans))
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
