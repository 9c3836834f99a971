package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Interview is an interview as the API lists it: metadata only, never a transcript,
// answers or participant identity.
type Interview struct {
	ID              kv.ID             `json:"id"`
	StudyID         kv.ID             `json:"study_id"`
	Status          string            `json:"status" enum:"in_progress,completed,failed"`
	IsComplete      bool              `json:"is_complete"`
	IsTest          bool              `json:"is_test"`
	Modality        string            `json:"modality" enum:"text,voice"`
	StartedAt       pipeline.Time     `json:"started_at"`
	CompletedAt     *pipeline.Time    `json:"completed_at"`
	DurationSeconds *int              `json:"duration_seconds"`
	EntryAttributes map[string]string `json:"entry_attributes"`
	InviteAudience  *string           `json:"invite_audience" enum:"group,person"`
	Permalink       string            `json:"permalink"`
	// LinkToken is the link the interview came through, for the app's list (its label);
	// not on the wire, where the token would be the link's secret.
	LinkToken string `json:"-"`
}

func (s *Service) interview(iv kv.Interview) Interview {
	attrs := iv.EntryAttributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return Interview{
		ID: iv.ID, StudyID: iv.StudyID, Status: iv.Status, IsComplete: iv.Status == kv.InterviewCompleted,
		IsTest: iv.IsTest, Modality: iv.Modality, StartedAt: pipeline.WireTime(iv.StartedAt), CompletedAt: pipeline.WireTimePtr(iv.CompletedAt),
		DurationSeconds: iv.DurationSeconds, EntryAttributes: attrs, InviteAudience: iv.InviteAudience,
		Permalink: s.BaseURL + "/app/interviews/" + iv.ID.String(), LinkToken: iv.LinkToken,
	}
}

// ListInterviewsInput filters and pages interviews.
type ListInterviewsInput struct {
	StudyID *kv.ID `query:"study_id" doc:"Only this study's interviews."`
	Status  string `query:"status" enum:"in_progress,completed,failed" doc:"Only interviews with this status."`
	Limit   *int   `query:"limit" min:"1" max:"200" default:"50" doc:"Page size, 1 to 200 (default 50)."`
	Cursor  string `query:"cursor" doc:"Opaque cursor of the previous page."`
	LinkID  *kv.ID `query:"link_id" doc:"Only interviews that came through this participant link (its id from list_participant_links)."`
	// modality keeps only text or only voice interviews, contextHas those with a
	// context entry containing the text: the app's filters.
	Modality, ContextHas string `json:"-"`
	// minSeconds and maxSeconds keep interviews of a length: the app's length filter.
	MinSeconds, MaxSeconds int `json:"-"`
	// IsTest keeps only rehearsals or only real interviews: the app's filter, not a
	// wire parameter (the contract lists none), so it has no tag to bind from.
	IsTest *bool `json:"-"`
}

func (s *Service) listInterviews(ctx context.Context, p *pipeline.Principal, in *ListInterviewsInput) (pipeline.List[Interview], error) {
	page, err := s.DB.FindInterviews(ctx, kv.InterviewFilter{Partition: p.Partition, StudyID: in.StudyID, Status: in.Status, IsTest: in.IsTest,
		LinkID: in.LinkID, Modality: in.Modality, ContextHas: in.ContextHas, MinSeconds: in.MinSeconds, MaxSeconds: in.MaxSeconds, Limit: pageLimit(in.Limit), Cursor: in.Cursor})
	if err != nil {
		return pipeline.List[Interview]{}, err
	}
	items := make([]Interview, len(page.Items))
	for i, iv := range page.Items {
		items[i] = s.interview(iv)
	}
	return pipeline.NewList(items, page.Next), nil
}

// InterviewIDInput names one interview.
type InterviewIDInput struct {
	InterviewID kv.ID `path:"interview_id" doc:"The interview's id."`
}

func (s *Service) getInterview(ctx context.Context, p *pipeline.Principal, in *InterviewIDInput) (Interview, error) {
	iv, err := s.DB.FindInterviewByID(ctx, p.Partition, in.InterviewID)
	if err != nil {
		return Interview{}, err
	}
	return s.interview(iv), nil
}
