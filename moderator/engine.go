// Package moderator holds the engines behind authoring, the live interviewer and the
// synthetic participant: the one Engine interface, the built-in offline engine, the
// OpenAI-compatible one, and the interview script that keeps verbatim questions
// verbatim whatever an engine says. It is its own package because the live interviewer
// runs inside a participant's request, not as background work: the participant API calls
// Conduct directly, and jobs uses the same engines for authoring and simulations.
package moderator

import (
	"context"
	"errors"
	"strings"

	"interviewd/kv"
)

// Engine is the one model interface behind authoring, the live interviewer and the
// synthetic participant. The interview script (which question comes next, verbatim
// wording, when the interview ends) is owned by interviewd, not by an engine: an engine
// only drafts briefs, proposes follow-up probes and plays synthetic participants.
type Engine interface {
	// Author drafts a brief from guidance and file text (req.Current == nil) or applies
	// refine guidance to req.Current. It returns an error wrapping ErrRefused when the
	// guidance is not a research request or asks for harmful content.
	Author(ctx context.Context, req AuthorRequest) (kv.Brief, error)
	// Probe returns a short neutral follow-up to the participant's last answer, or ""
	// to move on to the next scripted question.
	Probe(ctx context.Context, req ProbeRequest) (string, error)
	// Participant returns a synthetic participant's reply to the interviewer's last
	// message, in character for req.Persona (or a plausible invented participant).
	Participant(ctx context.Context, req ParticipantRequest) (string, error)
}

// ProbesFromTranscript reports whether e's Probe reads ProbeRequest.Transcript. The
// built-in engine does not (its probes follow the question and the latest answer), so a
// live turn on it need not read what was said before; any other engine is a model that
// is given the whole conversation.
func ProbesFromTranscript(e Engine) bool {
	_, builtin := e.(*Builtin)
	return !builtin
}

// Bounded reports whether e's calls end on their own, quickly: the built-in engine works
// in-process from its arguments alone, so a turn on it needs no deadline of its own;
// any other engine is a model behind a network, which may hang.
func Bounded(e Engine) bool {
	_, builtin := e.(*Builtin)
	return builtin
}

// ErrRefused marks authoring guidance an engine declines to act on.
var ErrRefused = errors.New("authoring refused")

// RefusalReason returns why an engine refused, from an error wrapping ErrRefused (as
// "authoring refused: <reason>"): the reason alone, for the researcher. It returns ""
// when err is not a refusal or gives no reason.
func RefusalReason(err error) string {
	if !errors.Is(err, ErrRefused) {
		return ""
	}
	msg := err.Error()
	if _, reason, ok := strings.Cut(msg, ErrRefused.Error()+": "); ok {
		return strings.TrimSpace(reason)
	}
	if msg == ErrRefused.Error() {
		return ""
	}
	return strings.TrimSpace(msg)
}

// AuthorRequest is the input of Engine.Author.
type AuthorRequest struct {
	Guidance string
	Files    []FileText
	Current  *kv.Brief // nil when creating a study; the current brief when refining
}

// FileText is the extracted text of an uploaded file passed in file_ids.
type FileText struct {
	Name string
	Text string
}

// Message is one line of an interview or simulation transcript.
type Message struct {
	Speaker string // "interviewer" or "participant"
	Text    string
}

// ProbeRequest is the input of Engine.Probe.
type ProbeRequest struct {
	Brief       kv.Brief
	Question    string            // the scripted question being answered
	Answer      string            // the participant's latest answer
	ProbesSoFar int               // follow-ups already asked for this question
	Context     map[string]string // facts from the invite link, briefed as true
	Note        string            // researcher guidance; never shown to the participant
	Transcript  []Message
	// topicOpen: the script has found that Answer does not close the topic (closesTopic),
	// so the built-in engine need not work that out again.
	topicOpen bool
	// asked is the script's filter of the follow-ups asked so far (Script.Asked): the
	// built-in engine proposes one whose bit is clear, so it never repeats itself
	// without reading the transcript.
	asked uint64
}

// ParticipantRequest is the input of Engine.Participant.
type ParticipantRequest struct {
	Persona    string // empty: the engine invents a plausible participant from Seed
	Seed       int64
	Brief      kv.Brief
	Transcript []Message // the last message is the interviewer's
}
