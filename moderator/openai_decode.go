package moderator

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"interviewd/kv"
)

// errChatInvalid marks a reply that is not what was asked for: malformed JSON, a
// missing field, or a brief that breaks the limits below. Such a reply counts as a
// failed attempt and is retried.
var errChatInvalid = errors.New("invalid model output")

// Limits on an authored brief. A model that returns more than this has lost the plot;
// the numbers leave room for any real study.
const (
	briefMaxTitle       = 200  // runes
	briefMaxItem        = 1000 // runes per objective or question
	briefMaxObjectives  = 20
	briefMaxQuestions   = 50 // per list
	briefMaxDuration    = 480
	chatMaxProbeRunes   = 500
	chatMaxReplyRunes   = 4000
	chatMaxRefusalRunes = 300
	// chatNoteLeakRunes is the shortest note the leak check looks for: a shorter note
	// is too likely to recur in an innocent probe.
	chatNoteLeakRunes = 20
)

// The JSON schemas sent as response_format. Strict mode wants every property required
// and no others; "refused" comes first so the model decides before it drafts.
const (
	chatBriefSchema = `{"type":"object","properties":{` +
		`"refused":{"type":"boolean","description":"true when the guidance is not a research request or asks for harmful content"},` +
		`"refusal_reason":{"type":"string","description":"one sentence on why, when refused; otherwise empty"},` +
		`"title":{"type":["string","null"]},` +
		`"objectives":{"type":"array","items":{"type":"string"}},` +
		`"pre_interview_questions":{"type":"array","items":{"type":"string"}},` +
		`"verbatim_questions":{"type":"array","items":{"type":"string"}},` +
		`"estimated_duration_minutes":{"type":["integer","null"]}` +
		`},"required":["refused","refusal_reason","title","objectives","pre_interview_questions","verbatim_questions","estimated_duration_minutes"],` +
		`"additionalProperties":false}`
	chatProbeSchema = `{"type":"object","properties":{` +
		`"probe":{"type":"string","description":"one short neutral follow-up question, or empty to move on"}` +
		`},"required":["probe"],"additionalProperties":false}`
	chatReplySchema = `{"type":"object","properties":{` +
		`"reply":{"type":"string","description":"the participant's reply, in character"}` +
		`},"required":["reply"],"additionalProperties":false}`
)

// chatResponse is the part of a chat completion interviewd reads.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// decodeChat returns the content of the first choice. It returns an error wrapping
// ErrRefused when the model refused (the refusal field, or a content filter stop) and
// errChatInvalid when the body is not a usable chat completion.
func decodeChat(body []byte) (string, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("%w: not a chat completion: %v", errChatInvalid, err)
	}
	if len(r.Choices) == 0 {
		return "", fmt.Errorf("%w: no choices", errChatInvalid)
	}
	c := r.Choices[0]
	if c.Message.Refusal != nil {
		if reason := chatOneLine(*c.Message.Refusal, chatMaxRefusalRunes); reason != "" {
			return "", fmt.Errorf("%w: %s", ErrRefused, reason)
		}
	}
	if c.FinishReason == "content_filter" {
		return "", fmt.Errorf("%w: stopped by the endpoint's content filter", ErrRefused)
	}
	if c.Message.Content == nil {
		return "", fmt.Errorf("%w: no content", errChatInvalid)
	}
	return *c.Message.Content, nil
}

// chatBriefReply is the content asked for by chatBriefSchema.
type chatBriefReply struct {
	Refused                  bool     `json:"refused"`
	RefusalReason            string   `json:"refusal_reason"`
	Title                    *string  `json:"title"`
	Objectives               []string `json:"objectives"`
	PreInterviewQuestions    []string `json:"pre_interview_questions"`
	VerbatimQuestions        []string `json:"verbatim_questions"`
	EstimatedDurationMinutes *float64 `json:"estimated_duration_minutes"`
}

// decodeBrief parses an authoring reply. It returns the brief with its strings trimmed
// (wording otherwise exactly as the model wrote it), an error wrapping ErrRefused when
// the model refused, or one wrapping errChatInvalid naming what is wrong.
func decodeBrief(content string) (kv.Brief, error) {
	var r chatBriefReply
	if err := json.Unmarshal([]byte(chatUnfence(content)), &r); err != nil {
		return kv.Brief{}, fmt.Errorf("%w: content is not the brief object: %v", errChatInvalid, err)
	}
	if r.Refused {
		reason := chatOneLine(r.RefusalReason, chatMaxRefusalRunes)
		if reason == "" {
			reason = "the model declined the guidance"
		}
		return kv.Brief{}, fmt.Errorf("%w: %s", ErrRefused, reason)
	}
	b := kv.Brief{
		Objectives:            chatTrimAll(r.Objectives),
		PreInterviewQuestions: chatTrimAll(r.PreInterviewQuestions),
		VerbatimQuestions:     chatTrimAll(r.VerbatimQuestions),
	}
	if r.Title != nil {
		t := strings.TrimSpace(*r.Title)
		b.Title = &t
	}
	if d := r.EstimatedDurationMinutes; d != nil {
		if *d != math.Trunc(*d) || *d < 1 || *d > briefMaxDuration {
			return kv.Brief{}, fmt.Errorf("%w: estimated_duration_minutes: want a whole number from 1 to %d", errChatInvalid, briefMaxDuration)
		}
		n := int(*d)
		b.EstimatedDurationMinutes = &n
	}
	if err := checkBrief(b); err != nil {
		return kv.Brief{}, err
	}
	return b.Normalised(), nil
}

// checkBrief returns an error wrapping errChatInvalid listing up to three ways b breaks
// the limits on an authored brief, or nil.
func checkBrief(b kv.Brief) error {
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 3 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	switch {
	case b.Title == nil:
		add("title: required")
	default:
		if p := chatCheckText(*b.Title, briefMaxTitle, false); p != "" {
			add("title: %s", p)
		}
	}
	list := func(name string, items []string, least, most int) {
		if len(items) < least {
			add("%s: at least %d required", name, least)
		}
		if len(items) > most {
			add("%s: at most %d allowed, got %d", name, most, len(items))
			return
		}
		for i, s := range items {
			if p := chatCheckText(s, briefMaxItem, true); p != "" {
				add("%s[%d]: %s", name, i, p)
			}
		}
	}
	list("objectives", b.Objectives, 1, briefMaxObjectives)
	list("pre_interview_questions", b.PreInterviewQuestions, 0, briefMaxQuestions)
	list("verbatim_questions", b.VerbatimQuestions, 1, briefMaxQuestions)
	if d := b.EstimatedDurationMinutes; d != nil && (*d < 1 || *d > briefMaxDuration) {
		add("estimated_duration_minutes: want 1 to %d", briefMaxDuration)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", errChatInvalid, strings.Join(problems, "; "))
}

// chatCheckText returns what is wrong with s as a brief string, or "": it must be
// trimmed, non-empty, at most limit runes, valid UTF-8, and free of control characters
// (tab and newline allowed only when multiline).
func chatCheckText(s string, limit int, multiline bool) string {
	switch {
	case s == "":
		return "empty"
	case s != strings.TrimSpace(s):
		return "surrounding whitespace"
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case utf8.RuneCountInString(s) > limit:
		return fmt.Sprintf("longer than %d characters", limit)
	}
	for _, r := range s {
		if (r == '\n' || r == '\t') && multiline {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
			return "control character"
		}
	}
	return ""
}

// decodeProbe parses an interviewer reply. It returns the probe ("" to move on) or an
// error wrapping errChatInvalid, including when the probe repeats the private note.
func decodeProbe(content, note string) (string, error) {
	var r struct {
		Probe *string `json:"probe"`
	}
	if err := json.Unmarshal([]byte(chatUnfence(content)), &r); err != nil {
		return "", fmt.Errorf("%w: content is not the probe object: %v", errChatInvalid, err)
	}
	if r.Probe == nil {
		return "", fmt.Errorf("%w: probe: required", errChatInvalid)
	}
	p := strings.TrimSpace(*r.Probe)
	if p == "" {
		return "", nil
	}
	if msg := chatCheckText(p, chatMaxProbeRunes, false); msg != "" {
		return "", fmt.Errorf("%w: probe: %s", errChatInvalid, msg)
	}
	if chatLeaks(p, note) {
		return "", fmt.Errorf("%w: probe repeats the researcher's private note", errChatInvalid)
	}
	return p, nil
}

// chatLeaks reports whether text quotes note, ignoring case and spacing. Short notes
// are not checked.
func chatLeaks(text, note string) bool {
	n := strings.ToLower(strings.Join(strings.Fields(note), " "))
	if utf8.RuneCountInString(n) < chatNoteLeakRunes {
		return false
	}
	return strings.Contains(strings.ToLower(strings.Join(strings.Fields(text), " ")), n)
}

// decodeReply parses a synthetic participant's reply. It returns the trimmed reply or
// an error wrapping errChatInvalid when it is missing, empty or out of bounds.
func decodeReply(content string) (string, error) {
	var r struct {
		Reply *string `json:"reply"`
	}
	if err := json.Unmarshal([]byte(chatUnfence(content)), &r); err != nil {
		return "", fmt.Errorf("%w: content is not the reply object: %v", errChatInvalid, err)
	}
	if r.Reply == nil {
		return "", fmt.Errorf("%w: reply: required", errChatInvalid)
	}
	p := strings.TrimSpace(*r.Reply)
	if msg := chatCheckText(p, chatMaxReplyRunes, true); msg != "" {
		return "", fmt.Errorf("%w: reply: %s", errChatInvalid, msg)
	}
	return p, nil
}

// chatUnfence strips a Markdown code fence around JSON, which endpoints that ignore
// response_format like to add.
func chatUnfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	if i := strings.IndexByte(inner, '\n'); i >= 0 {
		inner = inner[i+1:] // drop the info string, e.g. "json"
	} else {
		return s
	}
	return strings.TrimSpace(inner)
}

func chatTrimAll(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = strings.TrimSpace(s)
	}
	return out
}
