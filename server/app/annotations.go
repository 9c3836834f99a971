package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// Working with transcripts in the app: highlights of participant messages with the
// study's tags and a note, the tag list beside the transcript, the way to the study's
// previous and next interviews, and the search of a study's transcripts. The pages
// read as the transcript does (every role); changes need a role that changes research
// (accessResearch: not a viewer); every
// change goes through the research operations, so their rules hold here too. The app
// is the researcher's own view: it shows spans and notes as stored, unredacted.

func (s *App) appAnnotationRoutes() []appRoute {
	return []appRoute{
		{"POST", "/interviews/{interview_id}/annotations", AccessResearch, s.handleAppAnnotate},
		{"POST", "/interviews/{interview_id}/annotations/{annotation_id}/delete", AccessResearch, s.handleAppAnnotationDelete},
		{"POST", "/interviews/{interview_id}/tags", AccessResearch, s.handleAppTagCreate},
		{"POST", "/interviews/{interview_id}/tags/{tag_id}", AccessResearch, s.handleAppTagRename},
		{"POST", "/interviews/{interview_id}/tags/{tag_id}/delete", AccessResearch, s.handleAppTagDelete},
		{"GET", "/studies/{study_id}/search", AccessMember, s.handleAppStudySearch},
	}
}

// messageLabelRunes is how much of a message the highlight form's list shows.
const messageLabelRunes = 60

// messageOptions lists the participant messages, each labelled with its first words.
func messageOptions(msgs []kv.Message) []webui.MessageOption {
	var out []webui.MessageOption
	for i, m := range msgs {
		if m.Speaker != kv.SpeakerParticipant {
			continue
		}
		label := strings.Join(strings.Fields(m.Text), " ")
		if utf8.RuneCountInString(label) > messageLabelRunes {
			label = kv.RuneSlice(label, 0, messageLabelRunes-1) + "…"
		}
		out = append(out, webui.MessageOption{Index: i, Label: "Message " + strconv.Itoa(i+1) + ": " + label})
	}
	return out
}

// transcriptNotes reads what the transcript page shows beside the messages: the
// study's tags, the interview's highlights (and the marks they put on each message),
// and its neighbours. marksKey names the marks, for the render cache: a render with
// other highlights is another render.
func (s *App) transcriptNotes(ctx context.Context, p *pipeline.Principal, rec kv.Interview) (*webui.TranscriptNotes, map[int][]webui.Mark, string, error) {
	if err := p.Require(kv.ScopeExportRead); err != nil {
		return nil, nil, "", err
	}
	tags, err := s.DB.FindTags(ctx, p.Partition, rec.StudyID)
	if kv.ErrorCode(err) == kv.ENOTFOUND {
		tags, err = nil, nil // a removed study: no tags to show
	}
	if err != nil {
		return nil, nil, "", err
	}
	anns, err := s.DB.FindAnnotations(ctx, p.Partition, rec.ID)
	if err != nil {
		return nil, nil, "", err
	}
	prev, next, at, of, err := s.DB.InterviewNeighbours(ctx, p.Partition, rec.ID)
	if err != nil {
		return nil, nil, "", err
	}
	n := &webui.TranscriptNotes{StudyID: rec.StudyID.String(), Position: at, Of: of}
	if prev != nil {
		n.Prev = prev.String()
	}
	if next != nil {
		n.Next = next.String()
	}
	names := map[kv.ID]string{}
	here := map[kv.ID]int{}
	for _, a := range anns {
		for _, t := range a.TagIDs {
			here[t]++
		}
	}
	for _, t := range tags {
		names[t.ID] = t.Name
		n.Tags = append(n.Tags, webui.TagRow{ID: t.ID.String(), Name: t.Name, Here: here[t.ID]})
	}
	marks := map[int][]webui.Mark{}
	h := sha256.New()
	for _, a := range anns {
		row := webui.HighlightRow{ID: a.ID.String(), MessageIndex: a.MessageIndex, Text: a.Text, Note: a.Note}
		for _, t := range a.TagIDs {
			row.Tags = append(row.Tags, names[t])
		}
		n.Highlights = append(n.Highlights, row)
		label := "highlighted"
		if len(row.Tags) > 0 {
			label += ": " + strings.Join(row.Tags, ", ")
		}
		if a.Note != "" {
			label += "; note: " + a.Note
		}
		marks[a.MessageIndex] = append(marks[a.MessageIndex], webui.Mark{Start: a.Start, End: a.End, Label: label})
		h.Write([]byte(strconv.Itoa(a.MessageIndex) + ":" + strconv.Itoa(a.Start) + ":" + strconv.Itoa(a.End) + ":" + label + "\x00"))
	}
	key := ""
	if len(anns) > 0 {
		key = hex.EncodeToString(h.Sum(nil))
	}
	return n, marks, key, nil
}

// interviewInPath returns the interview the path names, in the caller's partition.
func (s *App) interviewInPath(r *pipeline.Request) (kv.Interview, error) {
	id, err := pathID(r, "interview_id")
	if err != nil {
		return kv.Interview{}, err
	}
	if _, err := Call[research.Interview](r.Ctx, s, r.P, "get_interview", &research.InterviewIDInput{InterviewID: id}); err != nil {
		return kv.Interview{}, err
	}
	return s.DB.FindInterviewByID(r.Ctx, r.P.Partition, id)
}

func transcriptURL(id kv.ID, done, anchor string) string {
	u := "/app/interviews/" + id.String()
	if done != "" {
		u += "?done=" + done
	}
	if anchor != "" {
		u += "#" + anchor
	}
	return u
}

// handleAppAnnotate saves a highlight. The span comes from a selection (start and end,
// in characters, with the selected words to check them against) or, without a
// script, from the words typed: their first place in the message.
func (s *App) handleAppAnnotate(r *pipeline.Request) error {
	iv, err := s.interviewInPath(r)
	if err != nil {
		return err
	}
	f := webui.AnnotateForm{Quote: formValue(r, "quote"), Start: formValue(r, "start"), End: formValue(r, "end"),
		Tags: formValues(r, "tags"), NewTag: strings.TrimSpace(formValue(r, "new_tag")), Note: formValue(r, "note")}
	fe := webui.FieldErrors{}
	f.Message, err = strconv.Atoi(formValue(r, "message"))
	if err != nil {
		fe["message"] = "Choose a message."
		return s.annotateFormError(r, iv, f, fe)
	}
	in := &research.AnnotationInput{InterviewID: iv.ID, MessageIndex: f.Message, Note: f.Note}
	if start, end, ok := formSpan(f.Start, f.End); ok {
		in.Start, in.End, in.Text = start, end, &f.Quote
	} else {
		msgs, err := s.findTranscript(r.Ctx, r.P, iv.ID)
		if err != nil {
			return err
		}
		if f.Message < 0 || f.Message >= len(msgs) {
			fe["message"] = "Choose a message."
			return s.annotateFormError(r, iv, f, fe)
		}
		if in.Start, in.End, ok = findQuote(msgs[f.Message].Text, f.Quote); !ok {
			fe["quote"] = "These words are not in the message: copy them exactly, or select them in the transcript."
			return s.annotateFormError(r, iv, f, fe)
		}
	}
	for _, t := range f.Tags {
		id, ok := kv.ParseID(t)
		if !ok {
			fe["tags"] = "Choose tags from the list."
			return s.annotateFormError(r, iv, f, fe)
		}
		in.TagIDs = append(in.TagIDs, id)
	}
	// A new tag is made in the annotation's own transaction: a refused highlight leaves
	// no tag behind.
	in.NewTag = f.NewTag
	_, err = Call[research.AnnotationOut](r.Ctx, s, r.P, "create_annotation", in)
	if fe := formErrors(err); fe != nil {
		return s.annotateFormError(r, iv, f, annotateErrors(fe))
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: transcriptURL(iv.ID, "highlighted", "m"+strconv.Itoa(f.Message))}
	return nil
}

// annotateErrors moves the operation's refusals onto the form's fields.
func annotateErrors(fe webui.FieldErrors) webui.FieldErrors {
	out := webui.FieldErrors{}
	for k, v := range fe {
		switch k {
		case "message_index":
			out["message"] = v
		case "start", "end", "text":
			out["quote"] = v
		case "tag_ids":
			out["tags"] = v
		default:
			out[k] = v
		}
	}
	return out
}

// formSpan reads a selection's characters; ok is false when there is none.
func formSpan(start, end string) (int, int, bool) {
	s, err1 := strconv.Atoi(start)
	e, err2 := strconv.Atoi(end)
	return s, e, err1 == nil && err2 == nil
}

// findQuote returns where quote first stands in text, in characters: as typed, else
// ignoring case.
func findQuote(text, quote string) (int, int, bool) {
	quote = strings.TrimSpace(quote)
	if quote == "" {
		return 0, 0, false
	}
	if i := strings.Index(text, quote); i >= 0 {
		start := utf8.RuneCountInString(text[:i])
		return start, start + utf8.RuneCountInString(quote), true
	}
	q := research.Fold(quote)
	if i := research.IndexRunes(research.Fold(text), q, 0); i >= 0 {
		return i, i + len(q), true
	}
	return 0, 0, false
}

// annotateFormError shows the transcript again with the form as it was sent.
func (s *App) annotateFormError(r *pipeline.Request, iv kv.Interview, f webui.AnnotateForm, fe webui.FieldErrors) error {
	page, err := s.buildTranscriptPage(r.Ctx, r.P, iv.ID)
	if err != nil {
		return err
	}
	page.Notes.Form, page.Notes.Errors = f, fe
	page.Notes.Messages = selectMessage(page.Notes.Messages, f.Message)
	r.Out = &appPage{name: webui.PageTranscript, status: 422, title: "Interview · " + page.StudyName, nav: webui.NavInterviews, data: page}
	return nil
}

// selectMessage returns a copy of the options with message index selected (the
// options may be a kept render's, shared).
func selectMessage(opts []webui.MessageOption, index int) []webui.MessageOption {
	out := make([]webui.MessageOption, len(opts))
	for i, o := range opts {
		o.Selected = o.Index == index
		out[i] = o
	}
	return out
}

func (s *App) handleAppAnnotationDelete(r *pipeline.Request) error {
	iv, err := s.interviewInPath(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "annotation_id")
	if err != nil {
		return err
	}
	if _, err := Call[research.AnnotationDeleted](r.Ctx, s, r.P, "delete_annotation", &research.AnnotationIDInput{InterviewID: iv.ID, AnnotationID: id}); err != nil {
		return err
	}
	r.Out = appRedirect{to: transcriptURL(iv.ID, "highlight_deleted", "highlights-h")}
	return nil
}

func (s *App) handleAppTagCreate(r *pipeline.Request) error {
	iv, err := s.interviewInPath(r)
	if err != nil {
		return err
	}
	_, err = Call[research.TagOut](r.Ctx, s, r.P, "create_tag", &research.TagInput{StudyID: iv.StudyID, Name: formValue(r, "name")})
	if fe := formErrors(err); fe != nil {
		return s.tagFormError(r, iv, fe)
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: transcriptURL(iv.ID, "tag_added", "tags-h")}
	return nil
}

func (s *App) handleAppTagRename(r *pipeline.Request) error {
	iv, err := s.interviewInPath(r)
	if err != nil {
		return err
	}
	tag, err := pathID(r, "tag_id")
	if err != nil {
		return err
	}
	_, err = Call[research.TagOut](r.Ctx, s, r.P, "rename_tag", &research.TagRenameInput{StudyID: iv.StudyID, TagID: tag, Name: formValue(r, "name")})
	if fe := formErrors(err); fe != nil {
		return s.tagFormError(r, iv, fe)
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: transcriptURL(iv.ID, "tag_renamed", "tags-h")}
	return nil
}

func (s *App) handleAppTagDelete(r *pipeline.Request) error {
	iv, err := s.interviewInPath(r)
	if err != nil {
		return err
	}
	tag, err := pathID(r, "tag_id")
	if err != nil {
		return err
	}
	if _, err := Call[research.TagDeleted](r.Ctx, s, r.P, "delete_tag", &research.TagIDInput{StudyID: iv.StudyID, TagID: tag}); err != nil {
		return err
	}
	r.Out = appRedirect{to: transcriptURL(iv.ID, "tag_deleted", "tags-h")}
	return nil
}

// tagFormError shows the transcript again with the tag form's refusal.
func (s *App) tagFormError(r *pipeline.Request, iv kv.Interview, fe webui.FieldErrors) error {
	page, err := s.buildTranscriptPage(r.Ctx, r.P, iv.ID)
	if err != nil {
		return err
	}
	page.Notes.Errors = webui.FieldErrors{"tag": fe["name"] + fe[""]}
	r.Out = &appPage{name: webui.PageTranscript, status: 422, title: "Interview · " + page.StudyName, nav: webui.NavInterviews, data: page}
	return nil
}

// searchPageSize is the hits a search page shows.
const searchPageSize = 20

func (s *App) handleAppStudySearch(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	st, err := Call[research.StudyDetail](r.Ctx, s, r.P, "get_study", &research.StudyIDInput{StudyID: id})
	if err != nil {
		return err
	}
	page := webui.StudySearchPage{StudyID: id.String(), StudyName: st.Name, Query: query(r, "q")}
	if strings.TrimSpace(page.Query) != "" {
		limit := searchPageSize
		in := &research.TranscriptSearchInput{StudyID: id, Query: page.Query, Limit: &limit, Cursor: query(r, "cursor"), Raw: true}
		list, err := Call[pipeline.List[research.TranscriptHit]](r.Ctx, s, r.P, "search_transcripts", in)
		if fe := formErrors(err); fe != nil {
			page.Errors = webui.FieldErrors{"q": fe["q"] + fe["cursor"] + fe["limit"] + fe[""]}
		} else if err != nil {
			return err
		} else {
			page.Searched = true
			s.searchRows(r.Ctx, r.P, &page, list)
			if list.NextCursor != nil {
				page.NextURL = "/app/studies/" + id.String() + "/search?q=" + url.QueryEscape(page.Query) + "&cursor=" + url.QueryEscape(*list.NextCursor)
			}
		}
	}
	r.Out = &appPage{name: webui.PageStudySearch, title: "Search · " + st.Name, nav: webui.NavInterviews, data: page}
	return nil
}

// searchRows lays the hits out, each placed by its interview's start.
func (s *App) searchRows(ctx context.Context, p *pipeline.Principal, page *webui.StudySearchPage, list pipeline.List[research.TranscriptHit]) {
	started := map[kv.ID]string{}
	for _, h := range list.Items {
		where, ok := started[h.InterviewID]
		if !ok {
			where = "Interview"
			if iv, err := s.DB.FindInterviewByID(ctx, p.Partition, h.InterviewID); err == nil {
				where = "Interview started " + StampOf(iv.StartedAt).Text
			}
			started[h.InterviewID] = where
		}
		spans := make([][2]int, len(h.Highlights))
		for i, sp := range h.Highlights {
			spans[i] = [2]int{sp.Start, sp.End}
		}
		speaker := "Participant"
		if h.Speaker == kv.SpeakerInterviewer {
			speaker = "Interviewer"
		}
		page.Hits = append(page.Hits, webui.SearchHitRow{URL: "/app/interviews/" + h.InterviewID.String() + "#m" + strconv.Itoa(h.MessageIndex),
			Where: where + ", message " + strconv.Itoa(h.MessageIndex+1), Speaker: speaker, Rehearsal: h.IsTest, Parts: webui.SnippetParts(h.Snippet, spans)})
	}
}
