package participant

import (
	"bytes"
	"context"
	"reflect"

	"interviewd/kv"
)

// The study's participant settings on the participant's side: consent given when the
// session opens, and the completion code and redirect once the interview completes.

// ParticipantSessionInput is the optional body of POST /i/{token}/session.
type ParticipantSessionInput struct {
	Consent *bool `json:"consent" doc:"true: the participant ticked the study's consent. An interview of a study that asks for consent starts only with it."`
}

// ParticipantConsent is the consent a study asks for before its interview starts.
type ParticipantConsent struct {
	Text string `json:"text"`
}

// ParticipantCompletion is what a completed interview of a study that issues codes
// gives the participant: the code to quote, and where the panel wants them next.
type ParticipantCompletion struct {
	Code        string  `json:"code"`
	RedirectURL *string `json:"redirect_url"`
}

// sessionConsent reads the session body: absent or empty means no consent given.
// Anything but {"consent": bool} is 422, as the API's other bodies.
func (s *Pages) sessionConsent(body []byte) (bool, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return false, nil
	}
	var in ParticipantSessionInput
	plan := s.sessionPlan
	errs := plan.BindBody(reflect.ValueOf(&in).Elem(), body)
	if err := plan.Finish(&in, errs); err != nil {
		return false, err
	}
	return in.Consent != nil && *in.Consent, nil
}

// participantCompletion is a completed interview's completion for the participant, or
// nil when it has no code.
func participantCompletion(iv kv.Interview, ps kv.ParticipantSettings) *ParticipantCompletion {
	if iv.Status != kv.InterviewCompleted || iv.CompletionCode == "" {
		return nil
	}
	c := &ParticipantCompletion{Code: iv.CompletionCode}
	if u := ps.CompletionRedirect(iv.ID, iv.CompletionCode); u != "" {
		c.RedirectURL = &u
	}
	return c
}

// completionCode returns a new completion code for a turn that completes iv when its
// study issues them (read now: the settings at completion decide), else "". A failed
// read issues none rather than failing the participant's last answer.
func (s *Pages) completionCode(ctx context.Context, iv kv.Interview) (string, kv.ParticipantSettings) {
	st, err := s.DB.FindStudyByID(ctx, iv.Partition(), iv.StudyID)
	if err != nil {
		s.Log.Error().Err(err).Str("interview_id", iv.ID.String()).Msg("read the study's participant settings at completion; no completion code")
		return "", kv.ParticipantSettings{}
	}
	ps := st.ParticipantSettings()
	if !ps.IssuesCompletionCode() {
		return "", ps
	}
	return kv.NewCompletionCode(), ps
}

// sessionExtras adds who runs the research and, for a completed interview, its
// completion to a session answer. They are courtesies: a failed read leaves them out
// rather than failing the participant's page.
func (s *Pages) sessionExtras(ctx context.Context, token string, out *ParticipantSession, st kv.Study, iv *kv.Interview) {
	if org, err := s.DB.FindOrgByID(ctx, st.OrgID); err == nil {
		out.Organisation = participantOrganisation(token, org)
	}
	if iv != nil {
		out.Completion = participantCompletion(*iv, st.ParticipantSettings())
	}
}
