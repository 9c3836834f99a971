package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// ParticipantLinkInput is the participant link request.
type ParticipantLinkInput struct {
	StudyID  kv.ID             `path:"study_id" doc:"The study."`
	Context  map[string]string `json:"context" doc:"Facts about the participant, briefed to the interviewer and stored on the interview: at most 20 keys (1-100 characters, no control characters, not a reserved name), values up to 2048 characters, 16384 UTF-8 bytes encoded in total."`
	Audience string            `json:"audience" enum:"group,person" default:"group" doc:"group (default): one reusable link for a segment; person: the link addresses one interview."`
	Note     string            `json:"note" default:"" doc:"Guidance for the interviewer, up to 2048 characters after trimming; never shown to the participant or exported."`
	Label    string            `json:"label" default:"" doc:"The researcher's name for the link (an interviewd addition), up to 200 characters on one line after trimming; never shown to the participant. See list_participant_links."`
}

func (in *ParticipantLinkInput) Validate() []kv.FieldError {
	req, err := kv.ValidateLinkRequest(kv.LinkRequest{Context: in.Context, Audience: in.Audience, Note: in.Note, Label: in.Label})
	if err != nil {
		var ke *kv.Error
		if pipeline.AsKV(err, &ke) {
			return ke.Fields
		}
		return []kv.FieldError{{Loc: []any{}, Msg: err.Error(), Type: "value_error"}}
	}
	in.Context, in.Audience, in.Note, in.Label = req.Context, req.Audience, req.Note, req.Label
	return nil
}

// ParticipantLink is a minted participant link.
type ParticipantLink struct {
	URL      string  `json:"url"`
	Audience string  `json:"audience" enum:"group,person"`
	Mode     kv.Mode `json:"mode" enum:"test,live,paused,closed"`
}

func (s *Service) createParticipantLink(ctx context.Context, p *pipeline.Principal, in *ParticipantLinkInput) (ParticipantLink, error) {
	var st StudyDetail // its mode, from the rendering get_study keeps when still current
	err := s.DB.ViewStudyRecord(ctx, p.Partition, in.StudyID, func(raw []byte) error {
		var err error
		st, err = s.StudyRenders.Detail(in.StudyID, raw)
		return err
	})
	if err != nil {
		return ParticipantLink{}, err
	}
	token := kv.NewLinkToken()
	out := ParticipantLink{URL: s.LinkURL(token), Audience: in.Audience, Mode: st.Mode}
	req := kv.LinkRequest{Context: in.Context, Audience: in.Audience, Note: in.Note, Label: in.Label}
	if _, _, err := s.DB.CreateParticipantLink(ctx, p.Partition, in.StudyID, req, token, pipeline.IdemWrite(ctx, out)); err != nil {
		return ParticipantLink{}, err
	}
	return out, nil
}
