package research

import (
	"context"
	"strings"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Recruitment operations: a study's participant links with their labels and counts,
// disabling and enabling a link, a batch of person links from a CSV (optionally mailed
// to each person), and a study's quota of completed interviews. interviewd's own
// additions beside the contract's create_participant_link, which they leave as it is.

// ParticipantLinkStatus is a participant link with what happened through it.
type ParticipantLinkStatus struct {
	ID       kv.ID             `json:"id"`
	URL      string            `json:"url"`
	Label    string            `json:"label"`
	Audience string            `json:"audience" enum:"group,person"`
	Context  map[string]string `json:"context"`
	Note     string            `json:"note"`
	Disabled bool              `json:"disabled"`
	// Status is the furthest any participant got through the link (rehearsals aside).
	Status         string         `json:"status" enum:"unopened,opened,started,completed"`
	Opened         int            `json:"opened"`
	Started        int            `json:"started"`
	Completed      int            `json:"completed"`
	LastActivityAt *pipeline.Time `json:"last_activity_at"`
	CreatedAt      pipeline.Time  `json:"created_at"`
	DisabledAt     *pipeline.Time `json:"disabled_at"`
}

func (s *Service) linkStatus(l kv.LinkStatus) ParticipantLinkStatus {
	ctx := l.Context
	if ctx == nil {
		ctx = map[string]string{}
	}
	aud := l.Audience
	if aud == "" {
		aud = kv.AudienceGroup
	}
	return ParticipantLinkStatus{ID: l.ID, URL: s.LinkURL(l.Token), Label: l.Label, Audience: aud, Context: ctx, Note: l.Note,
		Disabled: l.Disabled, Status: l.Stats.Progress(), Opened: l.Stats.Opened, Started: l.Stats.Started, Completed: l.Stats.Completed,
		LastActivityAt: pipeline.WireTimePtr(l.Stats.LastActivityAt), CreatedAt: pipeline.WireTime(l.CreatedAt), DisabledAt: pipeline.WireTimePtr(l.DisabledAt)}
}

func (s *Service) listParticipantLinks(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (pipeline.List[ParticipantLinkStatus], error) {
	ls, err := s.DB.FindLinkStatuses(ctx, p.Partition, in.StudyID)
	if err != nil {
		return pipeline.List[ParticipantLinkStatus]{}, err
	}
	out := make([]ParticipantLinkStatus, len(ls))
	for i, l := range ls {
		out[i] = s.linkStatus(l)
	}
	return pipeline.NewList(out, ""), nil
}

// UpdateParticipantLinkInput changes a link's label or whether it is disabled; a field
// left out (or null) stays as it is.
type UpdateParticipantLinkInput struct {
	StudyID  kv.ID   `path:"study_id" doc:"The study."`
	LinkID   kv.ID   `path:"link_id" doc:"The link's id (from list_participant_links)."`
	Label    *string `json:"label" doc:"The researcher's name for the link, up to 200 characters on one line after trimming; \"\" removes it. Never shown to participants."`
	Disabled *bool   `json:"disabled" doc:"true: the link offers no new interview (its page says the study is closed; interviews under way continue for their own browsers). false: it works again."`
}

func (s *Service) updateParticipantLink(ctx context.Context, p *pipeline.Principal, in *UpdateParticipantLinkInput) (ParticipantLinkStatus, error) {
	l, err := s.DB.UpdateParticipantLink(ctx, p.Partition, in.StudyID, in.LinkID, kv.LinkPatch{Label: in.Label, Disabled: in.Disabled})
	if err != nil {
		return ParticipantLinkStatus{}, err
	}
	if in.Disabled != nil {
		s.Log.Info().Str("org_id", p.Partition.Org.String()).Str("environment", string(p.Partition.Env)).Str("study_id", in.StudyID.String()).
			Str("link_id", in.LinkID.String()).Bool("disabled", l.Disabled).Msg("participant link updated")
	}
	return s.linkStatus(l), nil
}

// CreateParticipantLinksInput is a batch of person links as CSV text.
type CreateParticipantLinksInput struct {
	StudyID    kv.ID  `path:"study_id" doc:"The study."`
	CSV        string `json:"csv" required:"true" doc:"CSV text, a header row then one row per person (at most 1,000 rows, 512 KB): a label column (required, each row's label 1 to 200 characters), an optional note column (guidance for the interviewer), an optional email column (used only to mail the link, never stored), and any other column a context key whose cells are that person's context (empty cells are left out)."`
	SendEmail  bool   `json:"send_email" default:"false" doc:"Mail each person their link through the server's SMTP server (needs an email column). Refused with 409 mail_not_configured, creating nothing, when the server has no SMTP server."`
	SenderName string `json:"sender_name" default:"" doc:"The name the mail comes from (default: the study's name), up to 100 characters."`
}

func (in *CreateParticipantLinksInput) Validate() []kv.FieldError {
	in.SenderName = strings.TrimSpace(in.SenderName)
	if len([]rune(in.SenderName)) > 100 || strings.ContainsAny(in.SenderName, "\r\n<>\"") {
		return []kv.FieldError{{Loc: []any{"sender_name"}, Type: "value_error", Msg: "Sender name is up to 100 characters on one line, without < > or quotes."}}
	}
	return nil
}

// ParticipantLinksBatch is a created batch: its links in the CSV's order, and how many
// mails were handed to the mail server's queue.
type ParticipantLinksBatch struct {
	Links   []ParticipantLinkStatus `json:"links" component:"ParticipantLinkStatus"`
	Emailed int                     `json:"emailed"`
}

func (s *Service) createParticipantLinks(ctx context.Context, p *pipeline.Principal, in *CreateParticipantLinksInput) (ParticipantLinksBatch, error) {
	rows, err := parseLinksCSV(in.CSV, in.SendEmail)
	if err != nil {
		return ParticipantLinksBatch{}, err
	}
	if in.SendEmail && s.MailWhere() != pipeline.MailSent {
		return ParticipantLinksBatch{}, kv.Errorf(kv.ECONFLICT, "mail_not_configured",
			"This server has no mail server (INTERVIEWD_SMTP_URL), so the links cannot be emailed; nothing was created. Create them without send_email and share them yourself.")
	}
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return ParticipantLinksBatch{}, err
	}
	reqs := make([]kv.LinkRequest, len(rows))
	tokens := make([]string, len(rows))
	for i, r := range rows {
		reqs[i], tokens[i] = r.req, kv.NewLinkToken()
	}
	var out ParticipantLinksBatch
	answer := func(links []kv.Link) ParticipantLinksBatch {
		b := ParticipantLinksBatch{Links: make([]ParticipantLinkStatus, len(links))}
		for i, l := range links {
			b.Links[i] = s.linkStatus(kv.LinkStatus{Link: l, ID: kv.LinkIDOf(l.Token)})
		}
		if in.SendEmail {
			b.Emailed = len(links)
		}
		return b
	}
	links, err := s.DB.CreateParticipantLinks(ctx, p.Partition, in.StudyID, reqs, tokens, func(links []kv.Link) *kv.IdemWrite {
		return pipeline.IdemWrite(ctx, answer(links))
	})
	if err != nil {
		return ParticipantLinksBatch{}, err
	}
	out = answer(links)
	s.Log.Info().Str("org_id", p.Partition.Org.String()).Str("environment", string(p.Partition.Env)).Str("study_id", in.StudyID.String()).
		Int("links", len(links)).Int("emailed", out.Emailed).Msg("participant links created")
	if in.SendEmail {
		sender := in.SenderName
		if sender == "" {
			sender = st.Name
		}
		msgs := make([]mail.Message, len(rows))
		for i, r := range rows {
			msgs[i] = linkInvitation(r.email, sender, st.Name, out.Links[i].URL)
		}
		s.sendMailBatch(msgs)
	}
	return out, nil
}

// StudyQuotaInput sets a study's quota.
type StudyQuotaInput struct {
	StudyID kv.ID `path:"study_id" doc:"The study."`
	Quota   *int  `json:"quota" required:"true" min:"0" max:"100000" doc:"Completed real interviews at which the study pauses itself, 1 to 100,000; 0 removes the quota."`
}

// StudyQuota is a study's quota and where it stands.
type StudyQuota struct {
	Quota     int            `json:"quota"`
	Completed int            `json:"completed"`
	Reached   bool           `json:"reached"`
	ReachedAt *pipeline.Time `json:"reached_at"`
	Mode      kv.Mode        `json:"mode" enum:"test,live,paused,closed"`
}

func studyQuota(q kv.StudyQuota, mode kv.Mode) StudyQuota {
	return StudyQuota{Quota: q.Quota, Completed: q.Completed, Reached: q.Reached(), ReachedAt: pipeline.WireTimePtr(q.ReachedAt), Mode: mode}
}

func (s *Service) setStudyQuota(ctx context.Context, p *pipeline.Principal, in *StudyQuotaInput) (StudyQuota, error) {
	q, st, err := s.DB.SetStudyQuota(ctx, p.Partition, in.StudyID, *in.Quota)
	if err != nil {
		return StudyQuota{}, err
	}
	return studyQuota(q, st.Mode), nil
}

func (s *Service) getStudyQuota(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (StudyQuota, error) {
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return StudyQuota{}, err
	}
	q, err := s.DB.FindStudyQuota(ctx, p.Partition, in.StudyID)
	if err != nil {
		return StudyQuota{}, err
	}
	return studyQuota(q, st.Mode), nil
}

// PausedKind is the notice of a paused study's invite page: its quota's own words when
// the quota paused it (and still holds), else the plain pause. A failed read costs the
// participant nothing: the plain pause is true too.
func (s *Service) PausedKind(r *pipeline.Request, st kv.Study) string {
	q, err := s.DB.FindStudyQuota(r.Ctx, st.Partition(), st.ID)
	if err == nil && q.Reached() && q.ReachedAt != nil {
		return webui.NoticeFull
	}
	return webui.NoticePaused
}
