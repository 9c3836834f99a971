package app

import (
	"context"
	"html/template"
	"net/url"
	"strconv"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The interviews pages: the filtered list and the transcript at the permalink
// (/app/interviews/{id}). Both need export:read, as the API's interview operations do:
// a member (who never holds it) is refused, never shown a transcript.

// interviewsPageSize is the interviews list's page.
const interviewsPageSize = 50

// InterviewsQuery is the interviews list's filters, as the page's form sends them.
type InterviewsQuery struct {
	Study     string // a study id, or ""
	Status    string // in_progress, completed, failed, or ""
	Rehearsal string // "yes" (rehearsals only), "no" (real interviews only), or ""
	Link      string // a participant link's id (with Study), or ""
	Modality  string // text, voice, or ""
	Context   string // text a context entry ("key=value") contains, or ""
	Length    string // one of interviewLengths' values, or ""
	Cursor    string
}

func (q InterviewsQuery) url(cursor string) string {
	v := url.Values{}
	if q.Study != "" {
		v.Set("study", q.Study)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Rehearsal != "" {
		v.Set("rehearsal", q.Rehearsal)
	}
	for k, val := range map[string]string{"link": q.Link, "modality": q.Modality, "context": q.Context, "length": q.Length} {
		if val != "" {
			v.Set(k, val)
		}
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if len(v) == 0 {
		return "/app/interviews"
	}
	return "/app/interviews?" + v.Encode()
}

// studyNames lists the partition's newest studies for filters and row labels: at most
// the API's largest page, which is as many as a select can usefully offer.
func (s *App) studyNames(ctx context.Context, p *pipeline.Principal) ([]research.StudySummary, error) {
	limit := 200
	list, err := Call[pipeline.List[research.StudySummary]](ctx, s, p, "list_studies", &research.ListStudiesInput{Limit: &limit})
	return list.Items, err
}

func (s *App) buildInterviewsPage(ctx context.Context, p *pipeline.Principal, q InterviewsQuery) (webui.InterviewsPage, error) {
	limit := interviewsPageSize
	in := &research.ListInterviewsInput{Status: q.Status, Limit: &limit, Cursor: q.Cursor}
	if q.Study != "" {
		id, ok := kv.ParseID(q.Study)
		if !ok {
			return webui.InterviewsPage{}, kv.Invalid(kv.FieldError{Loc: []any{"query", "study"}, Type: "uuid_parsing", Msg: "Choose a study from the list."})
		}
		in.StudyID = &id
	}
	switch q.Rehearsal {
	case "yes", "no":
		v := q.Rehearsal == "yes"
		in.IsTest = &v
	case "":
	default:
		return webui.InterviewsPage{}, kv.Invalid(kv.FieldError{Loc: []any{"query", "rehearsal"}, Type: "enum", Msg: "Rehearsal is yes, no or empty."})
	}
	if err := q.recruitmentFilters(in); err != nil {
		return webui.InterviewsPage{}, err
	}
	list, err := Call[pipeline.List[research.Interview]](ctx, s, p, "list_interviews", in)
	if err != nil {
		return webui.InterviewsPage{}, err
	}
	studies, err := s.studyNames(ctx, p)
	if err != nil {
		return webui.InterviewsPage{}, err
	}
	names := make(map[kv.ID]string, len(studies))
	page := webui.InterviewsPage{Interviews: make([]webui.InterviewRow, len(list.Items)),
		Studies:  []webui.Option{{Value: "", Label: "All studies", Selected: q.Study == ""}},
		Filtered: q.Study != "" || q.Status != "" || q.Rehearsal != "" || q.Link != "" || q.Modality != "" || q.Context != "" || q.Length != "", SearchStudy: q.Study}
	for _, st := range studies {
		names[st.ID] = st.Name
		page.Studies = append(page.Studies, webui.Option{Value: st.ID.String(), Label: st.Name, Selected: st.ID.String() == q.Study})
	}
	for _, o := range []webui.Option{{Value: "", Label: "Any status"}, {Value: kv.InterviewInProgress, Label: "In progress"},
		{Value: kv.InterviewCompleted, Label: "Completed"}, {Value: kv.InterviewFailed, Label: "Failed"}} {
		o.Selected = o.Value == q.Status
		page.Statuses = append(page.Statuses, o)
	}
	for _, o := range []webui.Option{{Value: "", Label: "Interviews and rehearsals"}, {Value: "no", Label: "Interviews only"}, {Value: "yes", Label: "Rehearsals only"}} {
		o.Selected = o.Value == q.Rehearsal
		page.Rehearsals = append(page.Rehearsals, o)
	}
	if err := s.recruitmentOptions(ctx, p, q, &page); err != nil {
		return page, err
	}
	labels, err := s.linkLabels(ctx, p, list.Items)
	if err != nil {
		return page, err
	}
	for i, iv := range list.Items {
		row := webui.InterviewRow{ID: iv.ID.String(), StudyID: iv.StudyID.String(), StudyName: names[iv.StudyID], Status: iv.Status,
			Rehearsal: iv.IsTest, Started: wireStamp(iv.StartedAt)}
		if row.StudyName == "" {
			row.StudyName = "Study " + row.StudyID[:8]
		}
		if iv.DurationSeconds != nil {
			row.Duration = spoken(*iv.DurationSeconds)
		}
		if iv.InviteAudience != nil {
			row.Audience = *iv.InviteAudience
		}
		row.Modality, row.LinkLabel, row.Context = iv.Modality, labels[iv.LinkToken], sortedPairs(iv.EntryAttributes)
		page.Interviews[i] = row
	}
	if list.NextCursor != nil {
		page.NextURL = q.url(*list.NextCursor)
	}
	if q.Cursor != "" {
		page.FirstURL = q.url("")
	}
	return page, nil
}

// findTranscript returns an interview's messages under export:read: the scope that
// reads interviews at all (no operation serves transcripts; exports carry them
// redacted, and this page is the researcher's own view of their data).
func (s *App) findTranscript(ctx context.Context, p *pipeline.Principal, id kv.ID) ([]kv.Message, error) {
	if err := s.appMay(p, "get_interview", nil); err != nil {
		return nil, err
	}
	return s.DB.FindTranscript(ctx, p.Partition, id)
}

// buildTranscriptPage is the permalink's page: the interview as the API shows it, its
// record (design version, transcript length, start instant for offsets), its study's
// name, and its transcript unless a render of the same content is kept.
func (s *App) buildTranscriptPage(ctx context.Context, p *pipeline.Principal, id kv.ID) (webui.TranscriptPage, error) {
	iv, err := Call[research.Interview](ctx, s, p, "get_interview", &research.InterviewIDInput{InterviewID: id})
	if err != nil {
		return webui.TranscriptPage{}, err
	}
	rec, err := s.DB.FindInterviewByID(ctx, p.Partition, id)
	if err != nil {
		return webui.TranscriptPage{}, err
	}
	page := webui.TranscriptPage{ID: iv.ID.String(), StudyID: iv.StudyID.String(), Status: iv.Status, Rehearsal: iv.IsTest,
		Modality: iv.Modality, Started: wireStamp(iv.StartedAt), Completed: wireStampPtr(iv.CompletedAt),
		Context: sortedPairs(iv.EntryAttributes), DesignVersion: rec.DesignVersion,
		Consented: stampPtr(rec.ConsentedAt), ConsentText: rec.ConsentText, CompletionCode: rec.CompletionCode}
	if iv.InviteAudience != nil {
		page.Audience = *iv.InviteAudience
	}
	if iv.DurationSeconds != nil {
		page.Duration = spoken(*iv.DurationSeconds)
	}
	st, err := s.DB.FindStudyByID(ctx, p.Partition, iv.StudyID)
	switch {
	case err == nil:
		page.StudyName = st.Name
	case kv.ErrorCode(err) == kv.ENOTFOUND:
		page.StudyName = "A removed study"
	default:
		return page, err
	}
	// Everything the content shows but the messages is above; the messages are named
	// by the transcript's length. A kept render of the same is the page's content.
	notes, marks, marksKey, err := s.transcriptNotes(ctx, p, rec)
	if err != nil {
		return page, err
	}
	notes.ReadOnly = !p.MayChangeResearch()
	page.Notes = notes
	key := strings.Join([]string{strconv.Itoa(rec.TranscriptLen), page.Status, page.Duration, page.StudyName, page.Audience,
		strconv.Itoa(page.DesignVersion), strconv.FormatBool(page.Rehearsal), stampText(page.Completed), marksKey,
		strconv.FormatBool(notes.ReadOnly)}, "\x00")
	if body, options, ok := s.transcripts.get(rec.ID, key); ok {
		page.Body = body
		notes.Messages = options
		return page, nil
	}
	msgs, err := s.findTranscript(ctx, p, rec.ID)
	if err != nil {
		return page, err
	}
	page.Messages = make([]webui.Message, len(msgs))
	for i, m := range msgs {
		page.Messages[i] = webui.Message{Speaker: m.Speaker, Text: m.Text, At: StampOf(m.At), Offset: clock(m.At.Sub(rec.StartedAt)), Marks: marks[i]}
	}
	notes.Messages = messageOptions(msgs)
	page.Transcript, page.Count = page.MessagesHTML(), len(msgs)
	var body strings.Builder
	if err := s.UI.RenderAppPart(&body, webui.PageTranscript, "interview_body", page); err != nil {
		return page, err
	}
	page.Body = template.HTML(body.String()) // rendered by html/template just now
	if len(msgs) == rec.TranscriptLen {      // else the transcript grew meanwhile: keep nothing
		s.transcripts.put(rec.ID, key, page.Body, notes.Messages)
	}
	return page, nil
}

func stampText(s *webui.Stamp) string {
	if s == nil {
		return ""
	}
	return s.ISO
}
