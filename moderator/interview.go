package moderator

import (
	"context"
	"fmt"

	"interviewd/kv"
)

// ConductInput is where a live interview stands when the participant speaks.
type ConductInput struct {
	Brief kv.Brief // the design version the interview started with
	// Script is the position saved with the interview (kv.Interview.Script); empty
	// before the interview has begun.
	Script []byte
	// Transcript is everything said so far, without Answer.
	Transcript []kv.Message
	Context    map[string]string // facts from the invite link, briefed as true
	Note       string            // researcher guidance; never shown to the participant
	Answer     string            // the participant's answer; "" opens the interview
	// Skip: the participant passed on the current question (Answer is not used). The
	// interview moves to the next scripted question with no follow-up.
	Skip bool
}

// Conducted is the interviewer's side of one turn.
type Conducted struct {
	Messages []string // the interviewer's messages, in order
	Script   []byte   // the new position, to store with the messages
	Done     bool     // the interview has ended; the last message is the thank-you
}

// Conduct runs one turn of a live interview with m as the engine: it opens the
// interview (greeting and first question) when in.Script is empty, and otherwise answers
// the participant by the Script: the next screener question not already answered by
// the context, every verbatim question word for word, short follow-up probes, then the
// thank-you. It returns an error for a saved position it cannot read, the engine's
// error (wrapped) when a probe cannot be had, and ctx's error when ctx is done.
func Conduct(ctx context.Context, m Engine, in ConductInput) (Conducted, error) {
	var s Script
	if len(in.Script) > 0 {
		var err error
		if s, err = decodeScript(in.Script); err != nil {
			return Conducted{}, fmt.Errorf("read interview position: %w", err)
		}
	}
	transcript := make([]Message, 0, len(in.Transcript)+1)
	for _, msg := range in.Transcript {
		transcript = append(transcript, Message{Speaker: msg.Speaker, Text: msg.Text})
	}
	answer := in.Answer
	if s.Phase == "" {
		answer = "" // the opening does not depend on anything said before it
	} else {
		transcript = append(transcript, Message{Speaker: kv.SpeakerParticipant, Text: answer})
	}
	var msgs []string
	var next Script
	var done bool
	var err error
	if in.Skip && (s.Phase == PhaseScreener || s.Phase == PhaseVerbatim) {
		msgs, next, done = s.Skip(in.Brief, in.Context)
	} else {
		msgs, next, done, err = s.Next(ctx, m, in.Brief, in.Context, in.Note, transcript, answer)
	}
	if err != nil {
		return Conducted{}, err
	}
	raw, err := encodeScript(next)
	if err != nil {
		return Conducted{}, err
	}
	return Conducted{Messages: msgs, Script: raw, Done: done}, nil
}

// Opening returns what the interviewer says to open an interview of brief with these
// facts from the link, and its position afterwards: the greeting and the first scripted
// question (or, for a brief with no questions, the closing, done). It asks no engine and
// depends on nothing else, so the opening can be stored with the interview it opens, in
// the transaction that creates it; Conduct opens an interview the same way.
func Opening(brief kv.Brief, facts map[string]string) Conducted {
	msgs, next, done, _ := Script{}.Next(context.Background(), nil, brief, facts, "", nil, "")
	raw, _ := encodeScript(next) // a Script always encodes
	return Conducted{Messages: msgs, Script: raw, Done: done}
}
