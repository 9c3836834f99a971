package participant

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/pipeline"
)

// The participant's side of an interview: opening a link and answering. A link token is
// the capability (no bearer), and a session secret, minted here and kept in the
// participant's cookie, says which interview of a group link is theirs. The transcript
// goes back only to a session of its own interview; the link's note never does.

// ParticipantTurnTimeout bounds the interviewer's work on one turn (an engine call).
const ParticipantTurnTimeout = 45 * time.Second

// MaxAnswerChars bounds one participant message, counted in characters after trimming.
const MaxAnswerChars = 10_000

// ParticipantMessage is one line of the conversation as the participant sees it.
type ParticipantMessage struct {
	Speaker string        `json:"speaker" enum:"interviewer,participant"`
	Text    string        `json:"text"`
	At      pipeline.Time `json:"at"`
}

// ParticipantSession answers POST /i/{token}/session. Session, Status and Messages are
// only filled when State is open.
type ParticipantSession struct {
	State    string               `json:"state" enum:"open,paused,closed,unavailable,consent_required"`
	Session  *string              `json:"session"`
	Status   *string              `json:"status" enum:"in_progress,completed,failed"`
	Messages []ParticipantMessage `json:"messages"`
	// Progress is the scripted question being asked; null unless in progress.
	Progress *ParticipantProgress `json:"progress"`
	// Rehearsal marks a test-mode interview: its answers are not collected.
	Rehearsal bool `json:"rehearsal"`
	// Consent is the study's consent, when State is consent_required: open again with
	// {"consent": true} once the participant has ticked it.
	Consent *ParticipantConsent `json:"consent,omitempty"`
	// Completion is a completed interview's code (and redirect), when its study issues one.
	Completion *ParticipantCompletion `json:"completion,omitempty"`
	// Organisation is who runs the research.
	Organisation *ParticipantOrganisation `json:"organisation,omitempty"`
}

// ParticipantTurn answers POST /i/{token}/messages: the interview's status after the
// turn and the messages the turn added (the participant's, then the interviewer's).
type ParticipantTurn struct {
	Status   string               `json:"status" enum:"in_progress,completed,failed"`
	Messages []ParticipantMessage `json:"messages"`
	Progress *ParticipantProgress `json:"progress"` // as in ParticipantSession
	// Completion is set on the turn that completes the interview, when its study
	// issues completion codes.
	Completion *ParticipantCompletion `json:"completion,omitempty"`
}

// ParticipantMessageInput is the body of POST /i/{token}/messages.
type ParticipantMessageInput struct {
	Text     string `json:"text" required:"true" doc:"The answer: 1 to 10,000 characters after trimming."`
	Modality string `json:"modality" enum:"text,voice" doc:"voice when the answer was spoken (the interview then counts as a voice interview); default text."`
}

func (in *ParticipantMessageInput) Validate() []kv.FieldError {
	in.Text = strings.TrimSpace(in.Text)
	if in.Modality == "" {
		in.Modality = kv.ModalityText
	}
	switch n := utf8.RuneCountInString(in.Text); {
	case n == 0:
		return []kv.FieldError{{Loc: []any{"text"}, Msg: "String should have at least 1 character after trimming.", Type: "string_too_short",
			Ctx: map[string]any{"min_length": 1}}}
	case n > MaxAnswerChars:
		return []kv.FieldError{{Loc: []any{"text"}, Msg: "String should have at most 10000 characters.", Type: "string_too_long",
			Ctx: map[string]any{"max_length": MaxAnswerChars}}}
	}
	return nil
}

// sessionBytes is the entropy of a session secret; encoded it is 43 base64url characters.
const sessionBytes = 32

func NewSessionSecret() string {
	var b [sessionBytes]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// wellFormedSession reports whether s looks like a session secret. Anything else is
// never looked up: it cannot be a session, and it should not reach the store.
func wellFormedSession(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(sessionBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// wellFormedToken reports whether s can be a link token (22 base64url characters).
func wellFormedToken(s string) bool {
	if len(s) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

var (
	errLinkNotFound = &pipeline.APIError{Status: 404, Code: "not_found", Detail: "This interview link does not exist."}
	errNoSession    = &pipeline.APIError{Status: 401, Code: "invalid_session",
		Detail: "Send the session from opening the link (cookie or X-Interview-Session header); open the link again to get one."}
	errShuttingDown = &pipeline.APIError{Status: 503, Code: "unavailable", Detail: "The service is restarting; please send your answer again in a moment."}
)

// openParticipantSession opens the link for the presented session and returns the
// link's state with, when open, the session and the whole transcript. The server mints
// sessions: one the store does not know for this link (made up, from another link, or
// malformed) is replaced by a fresh secret, so a client can never choose its own. A new
// interview gets its opening messages here, before it is returned. ENOTFOUND for an
// unknown token. consented says the participant ticked the study's consent: a study
// that asks for it starts no interview without it (State consent_required).
func (s *Pages) openParticipantSession(ctx context.Context, token, presented string, consented bool) (ParticipantSession, error) {
	if !wellFormedToken(token) {
		return ParticipantSession{}, errLinkNotFound
	}
	if !wellFormedSession(presented) {
		presented = ""
	}
	// A new interview is stored with its opening, in one commit.
	opened, err := s.DB.ResumeLinkConsented(ctx, token, presented, NewSessionSecret(), consented, s.openingTurn)
	if err != nil {
		return ParticipantSession{}, err
	}
	s.Metrics.InterviewOpened(opened)
	session := opened.Session
	s.LogOpened(opened)
	if opened.Opening != nil {
		s.Metrics.InterviewTurned(kv.InterviewInProgress, *opened.Interview)
		s.InterviewEnded(*opened.Interview)
	}
	if opened.State != kv.LinkOpen {
		out := ParticipantSession{State: opened.State, Messages: []ParticipantMessage{}}
		if opened.State == kv.LinkConsentRequired {
			out.Consent = &ParticipantConsent{Text: opened.Study.ParticipantSettings().ConsentText}
			s.sessionExtras(ctx, token, &out, opened.Study, nil)
		}
		return out, nil
	}
	if opened.Opening != nil {
		// Just started: the opening is the whole transcript, and nothing is read back.
		iv := opened.Interview
		out := ParticipantSession{State: kv.LinkOpen, Session: &session, Status: &iv.Status, Messages: participantMessages(opened.Opening),
			Progress: participantProgress(opened.Brief, *iv), Rehearsal: iv.IsTest}
		s.sessionExtras(ctx, token, &out, opened.Study, iv)
		return out, nil
	}
	unlock := s.Turns.lock(opened.Interview.ID)
	defer unlock()
	conv, err := s.DB.FindConversation(ctx, token, session)
	if err != nil {
		return ParticipantSession{}, err
	}
	if conv.Interview.Status == kv.InterviewInProgress && len(conv.Transcript) == 0 {
		if conv, _, err = s.openInterview(ctx, conv, session); err != nil {
			return ParticipantSession{}, err
		}
	}
	status := conv.Interview.Status
	out := ParticipantSession{State: kv.LinkOpen, Session: &session, Status: &status, Messages: participantMessages(conv.Transcript),
		Progress: participantProgress(conv.Brief, conv.Interview), Rehearsal: conv.Interview.IsTest}
	s.sessionExtras(ctx, token, &out, opened.Study, &conv.Interview)
	return out, nil
}

// postParticipantMessage answers the interviewer with in, as session, and returns what
// the turn added. The turn runs alone on its interview (see turnLocks) and is stored in
// one transaction. An engine failure ends the interview failed (the answer is kept).
// Errors: 404 for an unknown token, 401 for a session not of the link's interview, 409
// interview_finished, 503 when the server is shutting down.
func (s *Pages) postParticipantMessage(ctx context.Context, token, session string, in *ParticipantMessageInput) (ParticipantTurn, error) {
	return s.postParticipantTurn(ctx, token, session, in, false)
}

// postParticipantTurn is postParticipantMessage, or with skip the participant passing
// on the current question (in is then not read): the transcript records
// moderator.SkippedAnswer and the interviewer moves on with no follow-up.
func (s *Pages) postParticipantTurn(ctx context.Context, token, session string, in *ParticipantMessageInput, skip bool) (ParticipantTurn, error) {
	if !wellFormedToken(token) {
		return ParticipantTurn{}, errLinkNotFound
	}
	if !wellFormedSession(session) {
		return ParticipantTurn{}, errNoSession
	}
	read := s.DB.FindConversationHead
	if s.transcripts {
		read = s.DB.FindConversation
	}
	mark := s.Turns.mark()
	conv, err := read(ctx, token, session)
	if err != nil {
		return ParticipantTurn{}, err
	}
	unlock := s.Turns.lock(conv.Interview.ID)
	defer unlock()
	// Another turn may have landed since the read (while this one waited, or just
	// before it came to wait): one record read tells.
	if s.Turns.endedSince(conv.Interview.ID, mark) {
		if conv, err = s.DB.CurrentConversation(ctx, token, session, conv); err != nil {
			return ParticipantTurn{}, err
		}
	}
	if conv.Interview.Status != kv.InterviewInProgress {
		return ParticipantTurn{}, kv.Errorf(kv.ECONFLICT, "interview_finished", "This interview has finished; no more answers can be added.")
	}
	var added []kv.Message
	if conv.Interview.TranscriptLen == 0 { // opened outside the page: say the opening first
		if conv, added, err = s.openInterview(ctx, conv, session); err != nil {
			return ParticipantTurn{}, err
		}
		if conv.Interview.Status != kv.InterviewInProgress {
			return ParticipantTurn{Status: conv.Interview.Status, Messages: participantMessages(added), Progress: participantProgress(conv.Brief, conv.Interview)}, nil
		}
	}
	text, voice := in.Text, in.Modality == kv.ModalityVoice
	if skip {
		text, voice = moderator.SkippedAnswer, false
	}
	answer := kv.Message{Speaker: kv.SpeakerParticipant, Text: text, At: s.Now()}
	turn := kv.Turn{Session: session, ExpectLen: conv.Interview.TranscriptLen, Status: kv.InterviewInProgress, Voice: voice}
	out, err := s.conduct(ctx, conv, text, skip)
	if err != nil {
		if ctx.Err() != nil {
			return ParticipantTurn{}, errShuttingDown
		}
		s.Log.Error().Err(err).Str("interview_id", conv.Interview.ID.String()).Msg("interviewer failed; the interview ends failed")
		turn.Status, turn.Messages = kv.InterviewFailed, []kv.Message{answer}
	} else {
		turn.Messages, turn.Script = append(make([]kv.Message, 0, len(out.Messages)+1), answer), out.Script
		now := s.Now()
		for _, m := range out.Messages {
			turn.Messages = append(turn.Messages, kv.Message{Speaker: kv.SpeakerInterviewer, Text: m, At: now})
		}
		if out.Done {
			turn.Status = kv.InterviewCompleted
		}
	}
	var settings kv.ParticipantSettings
	if turn.Status == kv.InterviewCompleted { // the code is stored with the completion
		turn.CompletionCode, settings = s.completionCode(ctx, conv.Interview)
	}
	before := conv.Interview.Status
	iv, err := s.DB.AppendTurnTo(ctx, &conv, turn)
	if err != nil {
		return ParticipantTurn{}, err
	}
	s.Metrics.InterviewTurned(before, iv)
	s.InterviewEnded(iv)
	return ParticipantTurn{Status: iv.Status, Messages: participantMessages(added, turn.Messages), Progress: participantProgress(conv.Brief, iv),
		Completion: participantCompletion(iv, settings)}, nil
}

// openInterview has the interviewer open a new interview (greeting and first question),
// stores it, and returns the conversation as it now stands and the messages added. An
// engine failure ends the interview failed.
func (s *Pages) openInterview(ctx context.Context, conv kv.Conversation, session string) (kv.Conversation, []kv.Message, error) {
	turn := kv.Turn{Session: session, Status: kv.InterviewInProgress}
	out, err := s.conduct(ctx, conv, "", false)
	switch {
	case err != nil && ctx.Err() != nil:
		return conv, nil, errShuttingDown
	case err != nil:
		s.Log.Error().Err(err).Str("interview_id", conv.Interview.ID.String()).Msg("interviewer could not open; the interview ends failed")
		turn.Status = kv.InterviewFailed
	default:
		now := s.Now()
		for _, m := range out.Messages {
			turn.Messages = append(turn.Messages, kv.Message{Speaker: kv.SpeakerInterviewer, Text: m, At: now})
		}
		turn.Script = out.Script
		if out.Done { // a brief with no questions: greeting and thank-you
			turn.Status = kv.InterviewCompleted
			turn.CompletionCode, _ = s.completionCode(ctx, conv.Interview)
		}
	}
	before := conv.Interview.Status
	iv, err := s.DB.AppendTurnTo(ctx, &conv, turn)
	if err != nil {
		return conv, nil, err
	}
	s.Metrics.InterviewTurned(before, iv)
	s.InterviewEnded(iv)
	conv.Transcript = append(conv.Transcript, turn.Messages...)
	return conv, turn.Messages, nil
}

// openingTurn is the interviewer's opening of a new interview (see moderator.Opening),
// stored by kv.ResumeLinkOpening in the transaction that creates the interview.
func (s *Pages) openingTurn(brief kv.Brief, iv kv.Interview, _ kv.Link) kv.Turn {
	out := moderator.Opening(brief, iv.EntryAttributes)
	turn := kv.Turn{Status: kv.InterviewInProgress, Script: out.Script}
	now := s.Now()
	for _, m := range out.Messages {
		turn.Messages = append(turn.Messages, kv.Message{Speaker: kv.SpeakerInterviewer, Text: m, At: now})
	}
	if out.Done { // a brief with no questions: greeting and thank-you
		turn.Status = kv.InterviewCompleted
	}
	return turn
}

// conduct asks the interviewer for its side of a turn, under the request's context (it
// ends when the server stops) and, for an engine that may hang, a per-turn deadline.
func (s *Pages) conduct(ctx context.Context, conv kv.Conversation, answer string, skip bool) (moderator.Conducted, error) {
	if s.turnDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ParticipantTurnTimeout)
		defer cancel()
	}
	out, err := moderator.Conduct(ctx, s.moderator, moderator.ConductInput{
		Brief: conv.Brief, Script: conv.Interview.Script, Transcript: conv.Transcript,
		Context: conv.Interview.EntryAttributes, Note: conv.Link.Note, Answer: answer, Skip: skip,
	})
	if err == nil && len(out.Messages) == 0 {
		err = errors.New("interviewer said nothing")
	}
	return out, err
}
