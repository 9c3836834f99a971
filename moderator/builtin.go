package moderator

import (
	"context"
	"strings"

	"interviewd/kv"
)

// Builtin is interviewd's embedded moderator: a template-driven engine that works
// offline and always gives the same output for the same input. It is not a language
// model. It reads guidance with phrase patterns, drafts plain, serviceable briefs from
// fixed templates, refines them with a small set of recognised instructions, asks short
// neutral probes and plays personas from phrase tables. Anything it cannot place is
// refused with a reason rather than guessed at.
type Builtin struct{}

var _ Engine = (*Builtin)(nil)

// NewBuiltin returns the built-in engine. It holds no state and is safe for concurrent use.
func NewBuiltin() *Builtin { return &Builtin{} }

// Author drafts a brief from guidance and file text, or applies refine guidance to
// req.Current. It returns an error wrapping ErrRefused when the guidance is empty, not a
// research request, asks for harmful content, or (refining) is not an instruction it
// understands; and ctx's error when ctx is done.
func (*Builtin) Author(ctx context.Context, req AuthorRequest) (kv.Brief, error) {
	if err := ctx.Err(); err != nil {
		return kv.Brief{}, err
	}
	if req.Current == nil {
		return draftBrief(req.Guidance, req.Files)
	}
	return refineBrief(*req.Current, req.Guidance)
}

// Probe returns one short neutral follow-up to a verbatim question's answer, or "" to
// move on: after the first probe, after a screener question, after a long or declined
// answer. It returns ctx's error when ctx is done.
func (*Builtin) Probe(ctx context.Context, req ProbeRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return builtinProbe(req), nil
}

// Participant returns a reply in character for req.Persona (or a persona invented from
// req.Seed) to the transcript's last interviewer message, about that message's subject
// or the study's. The reply depends only on the persona, the seed, the brief, the
// transcript's length and replies so far, and that message. It returns ctx's error when
// ctx is done.
func (*Builtin) Participant(ctx context.Context, req ParticipantRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	text := strings.TrimSpace(req.Persona)
	if text == "" {
		text = InventPersona(req.Seed)
	}
	question := ""
	for i := len(req.Transcript) - 1; i >= 0; i-- {
		if req.Transcript[i].Speaker != "participant" {
			question = req.Transcript[i].Text
			break
		}
	}
	replies := 0
	for _, m := range req.Transcript {
		if m.Speaker == "participant" {
			replies++
		}
	}
	turn := len(req.Transcript)
	r := mix64(uint64(req.Seed) ^ mix64(uint64(turn)) ^ hashStrings(text, question))
	return parsePersona(text).reply(simTurn{question: question, replies: replies, turn: turn, r: r,
		topic: studyTopic(req.Brief), group: studyGroup(req.Brief)}), nil
}
