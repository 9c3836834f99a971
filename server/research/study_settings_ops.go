package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// A study's participant settings: what its participants see around the interview
// (a consent step, the welcome and thank-you texts, a completion code and a redirect
// back to a panel). They are research operations like the brief, so they are in the
// table and reach REST, MCP and A2A alike; the study detail keeps the contract's exact
// fields and does not carry them.

// GetParticipantSettingsInput names the study.
type GetParticipantSettingsInput struct {
	StudyID kv.ID `path:"study_id" doc:"The study."`
}

// UpdateParticipantSettingsInput replaces a study's participant settings whole, as PUT
// does: a field left out (or null) goes back to its default.
type UpdateParticipantSettingsInput struct {
	StudyID               kv.ID   `path:"study_id" doc:"The study."`
	ConsentText           *string `json:"consent_text" docMaxLength:"5000" doc:"Consent the participant must tick before the interview starts, up to 5,000 characters after trimming; null or empty: no consent step. Each interview records when it was given and the text agreed to; exports carry both."`
	WelcomeText           *string `json:"welcome_text" docMaxLength:"2000" doc:"Replaces the welcome card's introduction, up to 2,000 characters after trimming; null or empty: the built-in text."`
	ThankYouText          *string `json:"thank_you_text" docMaxLength:"2000" doc:"Replaces the thank-you once the interview is complete, up to 2,000 characters after trimming; null or empty: the built-in text."`
	CompletionCode        *bool   `json:"completion_code" doc:"Issue each completed interview a random completion code, shown on the thank-you screen and in exports (a completion_redirect_url that uses {completion_code} issues one too). Default false."`
	CompletionRedirectURL *string `json:"completion_redirect_url" docMaxLength:"2000" doc:"An https URL the thank-you screen sends the participant on to (a panel's completion URL), with {completion_code} and {interview_id} filled in; no other placeholders, none in the host. Null or empty: none."`
}

// ParticipantSettingsOut is a study's participant settings; null where the default
// applies.
type ParticipantSettingsOut struct {
	StudyID               kv.ID   `json:"study_id"`
	ConsentText           *string `json:"consent_text" doc:"The consent asked before the interview starts; null: none."`
	WelcomeText           *string `json:"welcome_text" doc:"The welcome's introduction; null: the built-in one."`
	ThankYouText          *string `json:"thank_you_text" doc:"The thank-you text; null: the built-in one."`
	CompletionCode        bool    `json:"completion_code" doc:"Whether completed interviews get a completion code (true whenever a redirect is set)."`
	CompletionRedirectURL *string `json:"completion_redirect_url" doc:"The https URL template the thank-you screen sends participants on to; null: none."`
}

func participantSettingsOut(st kv.Study) ParticipantSettingsOut {
	p := st.ParticipantSettings()
	return ParticipantSettingsOut{StudyID: st.ID, ConsentText: NilIfEmpty(p.ConsentText), WelcomeText: NilIfEmpty(p.WelcomeText),
		ThankYouText: NilIfEmpty(p.ThankYouText), CompletionCode: p.IssuesCompletionCode(), CompletionRedirectURL: NilIfEmpty(p.CompletionRedirectURL)}
}

func NilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (in *UpdateParticipantSettingsInput) settings() kv.ParticipantSettings {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return kv.ParticipantSettings{ConsentText: str(in.ConsentText), WelcomeText: str(in.WelcomeText), ThankYouText: str(in.ThankYouText),
		CompletionCode: in.CompletionCode != nil && *in.CompletionCode, CompletionRedirectURL: str(in.CompletionRedirectURL)}
}

// Validate reports every broken rule at once, before anything is read (kv checks them
// again in the transaction).
func (in *UpdateParticipantSettingsInput) Validate() []kv.FieldError {
	if _, err := kv.ValidateParticipantSettings(in.settings()); err != nil {
		var ke *kv.Error
		if pipeline.AsKV(err, &ke) {
			return ke.Fields
		}
		return []kv.FieldError{{Loc: []any{}, Msg: err.Error(), Type: "value_error"}}
	}
	return nil
}

func (s *Service) getParticipantSettings(ctx context.Context, p *pipeline.Principal, in *GetParticipantSettingsInput) (ParticipantSettingsOut, error) {
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return ParticipantSettingsOut{}, err
	}
	return participantSettingsOut(st), nil
}

// updateParticipantSettings replaces the study's participant settings. They apply from
// then on: an interview already started keeps the consent it recorded, and the
// settings at completion decide its code and its thank-you.
func (s *Service) updateParticipantSettings(ctx context.Context, p *pipeline.Principal, in *UpdateParticipantSettingsInput) (ParticipantSettingsOut, error) {
	st, changed, err := s.DB.SetParticipantSettings(ctx, kv.ParticipantSettingsEdit{Partition: p.Partition, StudyID: in.StudyID, Settings: in.settings(),
		Idem: func(st kv.Study) *kv.IdemWrite { return pipeline.IdemWrite(ctx, participantSettingsOut(st)) }})
	if err != nil {
		return ParticipantSettingsOut{}, err
	}
	if changed {
		ps := st.ParticipantSettings()
		s.Log.Info().Str("org_id", p.Partition.Org.String()).Str("environment", string(p.Partition.Env)).Str("study_id", st.ID.String()).
			Bool("consent", ps.ConsentText != "").Bool("completion_code", ps.IssuesCompletionCode()).Bool("redirect", ps.CompletionRedirectURL != "").
			Msg("study participant settings changed")
	}
	return participantSettingsOut(st), nil
}
