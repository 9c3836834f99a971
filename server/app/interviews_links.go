package app

import (
	"context"
	"strings"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The interviews list's recruitment side: each row's participant link by its label and
// the context it stored, and filters by link, modality and context, so "which one was
// the enterprise customer?" is a filter, not a page per interview.

// recruitmentFilters moves the query's link, modality and context filters into in.
func (q InterviewsQuery) recruitmentFilters(in *research.ListInterviewsInput) error {
	if q.Link != "" {
		id, ok := kv.ParseID(q.Link)
		if !ok {
			return kv.Invalid(kv.FieldError{Loc: []any{"query", "link"}, Type: "uuid_parsing", Msg: "Choose a link from the list."})
		}
		in.LinkID = &id
	}
	switch q.Modality {
	case "", kv.ModalityText, kv.ModalityVoice:
		in.Modality = q.Modality
	default:
		return kv.Invalid(kv.FieldError{Loc: []any{"query", "modality"}, Type: "enum", Msg: "Modality is text, voice or empty."})
	}
	if utf8.RuneCountInString(q.Context) > 200 {
		return kv.Invalid(kv.FieldError{Loc: []any{"query", "context"}, Type: "string_too_long", Msg: "The context filter is at most 200 characters."})
	}
	in.ContextHas = strings.TrimSpace(q.Context)
	for _, l := range interviewLengths {
		if l.value == q.Length {
			in.MinSeconds, in.MaxSeconds = l.min, l.max
			return nil
		}
	}
	return kv.Invalid(kv.FieldError{Loc: []any{"query", "length"}, Type: "enum", Msg: "Choose a length from the list."})
}

// interviewLengths are the length filter's choices: at least min and under max seconds
// (0: no bound), by the interview's duration_seconds.
var interviewLengths = []struct {
	value, label string
	min, max     int
}{
	{"", "Any length", 0, 0},
	{"lt5", "Under 5 minutes", 0, 5 * 60},
	{"5to15", "5 to 15 minutes", 5 * 60, 15 * 60},
	{"15to30", "15 to 30 minutes", 15 * 60, 30 * 60},
	{"gt30", "30 minutes or more", 30 * 60, 0},
}

// recruitmentOptions fills the modality filter and, with a study chosen and links:read,
// the link filter with the study's links by label.
func (s *App) recruitmentOptions(ctx context.Context, p *pipeline.Principal, q InterviewsQuery, page *webui.InterviewsPage) error {
	page.ContextHas = q.Context
	for _, l := range interviewLengths {
		page.Lengths = append(page.Lengths, webui.Option{Value: l.value, Label: l.label, Selected: l.value == q.Length})
	}
	for _, o := range []webui.Option{{Value: "", Label: "Text and voice"}, {Value: kv.ModalityText, Label: "Text"}, {Value: kv.ModalityVoice, Label: "Voice"}} {
		o.Selected = o.Value == q.Modality
		page.Modalities = append(page.Modalities, o)
	}
	id, ok := kv.ParseID(q.Study)
	if !ok || !p.Has(kv.ScopeLinksRead) {
		return nil
	}
	links, err := Call[pipeline.List[research.ParticipantLinkStatus]](ctx, s, p, "list_participant_links", &research.StudyIDInput{StudyID: id})
	if err != nil {
		return err
	}
	page.Links = []webui.Option{{Value: "", Label: "Any link", Selected: q.Link == ""}}
	for _, l := range links.Items {
		label := l.Label
		if label == "" {
			label = "Unlabelled " + l.Audience + " link, " + wireStamp(l.CreatedAt).Text
		}
		page.Links = append(page.Links, webui.Option{Value: l.ID.String(), Label: label, Selected: l.ID.String() == q.Link})
	}
	return nil
}

// linkLabels returns the labels of the links the interviews came through, by token;
// nothing without links:read (a link's label is part of reading links).
func (s *App) linkLabels(ctx context.Context, p *pipeline.Principal, ivs []research.Interview) (map[string]string, error) {
	labels := map[string]string{}
	if !p.Has(kv.ScopeLinksRead) {
		return labels, nil
	}
	for _, iv := range ivs {
		if iv.LinkToken == "" {
			continue
		}
		if _, seen := labels[iv.LinkToken]; seen {
			continue
		}
		l, err := s.DB.FindLinkByToken(ctx, iv.LinkToken)
		switch {
		case kv.ErrorCode(err) == kv.ENOTFOUND:
		case err != nil:
			return nil, err
		case l.OrgID == p.Partition.Org && l.Env == p.Partition.Env:
			labels[iv.LinkToken] = l.Label
		}
	}
	return labels, nil
}
