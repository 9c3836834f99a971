package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// WhoamiInput takes nothing.
type WhoamiInput struct{}

func (s *Service) whoami(ctx context.Context, p *pipeline.Principal, _ *WhoamiInput) (Whoami, error) {
	w := Whoami{
		KeyID: p.KeyID, ExpiresAt: pipeline.WireTimePtr(p.ExpiresAt), OrgID: p.Partition.Org, OrgName: p.OrgName,
		Environment: string(p.Partition.Env), Scopes: append([]string{}, p.Scopes...), CredentialType: p.CredentialType,
		GrantID: p.GrantID,
	}
	if p.CredentialType == pipeline.CredentialAPIKey {
		name := p.KeyName
		w.KeyName = &name
		if p.Partition.Env == kv.EnvLive {
			// Read now, not from the credential: credits move with every interview.
			org, err := s.DB.FindOrgByID(ctx, p.Partition.Org)
			if err != nil {
				return Whoami{}, err
			}
			w.Credits = &org.Credits
		}
	}
	if p.CredentialType == pipeline.CredentialOAuth {
		id := p.ClientID
		w.ClientID = &id
	}
	return w, nil
}

// ListStudiesInput pages through studies.
type ListStudiesInput struct {
	Limit  *int   `query:"limit" min:"1" max:"200" default:"50" doc:"Page size, 1 to 200 (default 50)."`
	Cursor string `query:"cursor" doc:"Opaque cursor: the X-Next-Cursor (REST) or next_cursor (MCP) of the previous page."`
}

func pageLimit(l *int) int {
	if l == nil {
		return 50
	}
	return *l
}

func (s *Service) listStudies(ctx context.Context, p *pipeline.Principal, in *ListStudiesInput) (pipeline.List[StudySummary], error) {
	page, err := s.DB.FindStudies(ctx, kv.StudyFilter{Partition: p.Partition, Limit: pageLimit(in.Limit), Cursor: in.Cursor})
	if err != nil {
		return pipeline.List[StudySummary]{}, err
	}
	items := make([]StudySummary, len(page.Items))
	for i, st := range page.Items {
		items[i] = studySummary(st)
	}
	return pipeline.NewList(items, page.Next), nil
}

// StudyIDInput names one study.
type StudyIDInput struct {
	StudyID kv.ID `path:"study_id" doc:"The study's id."`
}

// getStudy serves the study's detail, rendered from its stored record only when that
// record changed since it was last rendered (studyRenders).
func (s *Service) getStudy(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (StudyDetail, error) {
	var d StudyDetail
	err := s.DB.ViewStudyRecord(ctx, p.Partition, in.StudyID, func(raw []byte) error {
		var err error
		d, err = s.StudyRenders.Detail(in.StudyID, raw)
		return err
	})
	return d, err
}

func (s *Service) getInterviewLink(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (InviteLink, error) {
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return InviteLink{}, err
	}
	return InviteLink{URL: s.LinkURL(st.LinkToken), Mode: st.Mode}, nil
}
