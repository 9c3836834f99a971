package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Working with transcripts: a study's tags (its code book) and the annotations of its
// interviews (a highlighted span of a participant message, with tags and a note).
// They are research data about participants' words, so every operation needs
// export:read, the scope that reads interviews, as analyses do. Text that comes from
// a transcript (an annotation's span) and the notes written beside it leave the API
// redacted by the organisation's chain, as in an export; the app, the researcher's own
// view of their data, shows them as stored.

// TagOut is one of a study's tags.
type TagOut struct {
	ID        kv.ID         `json:"id"`
	StudyID   kv.ID         `json:"study_id"`
	Name      string        `json:"name"`
	CreatedAt pipeline.Time `json:"created_at"`
	UpdatedAt pipeline.Time `json:"updated_at"`
}

func tagOut(t kv.Tag) TagOut {
	return TagOut{ID: t.ID, StudyID: t.StudyID, Name: t.Name, CreatedAt: pipeline.WireTime(t.CreatedAt), UpdatedAt: pipeline.WireTime(t.UpdatedAt)}
}

// TagInput names a new tag of a study.
type TagInput struct {
	StudyID kv.ID  `path:"study_id" doc:"The study."`
	Name    string `json:"name" required:"true" doc:"The tag's name: 1 to 60 characters on one line after trimming, unique in the study ignoring case."`
}

// TagRenameInput renames one of a study's tags.
type TagRenameInput struct {
	StudyID kv.ID  `path:"study_id" doc:"The study."`
	TagID   kv.ID  `path:"tag_id" doc:"The tag."`
	Name    string `json:"name" required:"true" doc:"The new name: 1 to 60 characters on one line after trimming, unique in the study ignoring case."`
}

// TagIDInput names one of a study's tags.
type TagIDInput struct {
	StudyID kv.ID `path:"study_id" doc:"The study."`
	TagID   kv.ID `path:"tag_id" doc:"The tag."`
}

// TagDeleted answers delete_tag.
type TagDeleted struct {
	ID                 kv.ID `json:"id"`
	Deleted            bool  `json:"deleted"`
	AnnotationsChanged int   `json:"annotations_changed" doc:"Annotations the tag was taken off; those left with no tag and no note were deleted."`
}

func (s *Service) listTags(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (pipeline.List[TagOut], error) {
	tags, err := s.DB.FindTags(ctx, p.Partition, in.StudyID)
	if err != nil {
		return pipeline.List[TagOut]{}, err
	}
	out := make([]TagOut, len(tags))
	for i, t := range tags {
		out[i] = tagOut(t)
	}
	return pipeline.NewList(out, ""), nil
}

func (s *Service) createTag(ctx context.Context, p *pipeline.Principal, in *TagInput) (TagOut, error) {
	t, err := s.DB.CreateTag(ctx, p.Partition, in.StudyID, in.Name)
	return tagOut(t), err
}

func (s *Service) renameTag(ctx context.Context, p *pipeline.Principal, in *TagRenameInput) (TagOut, error) {
	t, err := s.DB.RenameTag(ctx, p.Partition, in.StudyID, in.TagID, in.Name)
	return tagOut(t), err
}

func (s *Service) deleteTag(ctx context.Context, p *pipeline.Principal, in *TagIDInput) (TagDeleted, error) {
	n, err := s.DB.DeleteTag(ctx, p.Partition, in.StudyID, in.TagID)
	if err != nil {
		return TagDeleted{}, err
	}
	return TagDeleted{ID: in.TagID, Deleted: true, AnnotationsChanged: n}, nil
}

// AnnotationOut is one annotation. Text and note are redacted as in an export.
type AnnotationOut struct {
	ID           kv.ID         `json:"id"`
	InterviewID  kv.ID         `json:"interview_id"`
	StudyID      kv.ID         `json:"study_id"`
	MessageIndex int           `json:"message_index" doc:"The participant message, by its position in the transcript (from 0)."`
	Start        int           `json:"start" doc:"The span's first character in the message (Unicode code points from 0)."`
	End          int           `json:"end" doc:"Just after the span's last character."`
	Text         string        `json:"text" doc:"The span as an export shows it (redacted)."`
	TagIDs       []kv.ID       `json:"tag_ids"`
	Note         string        `json:"note" doc:"The researcher's note, redacted as an export's text is."`
	CreatedAt    pipeline.Time `json:"created_at"`
	UpdatedAt    pipeline.Time `json:"updated_at"`
}

// InterviewAnnotationsInput names an interview.
type InterviewAnnotationsInput struct {
	InterviewID kv.ID `path:"interview_id" doc:"The interview."`
}

// AnnotationInput is a new annotation.
type AnnotationInput struct {
	InterviewID  kv.ID   `path:"interview_id" doc:"The interview."`
	MessageIndex int     `json:"message_index" required:"true" min:"0" doc:"A participant message, by its position in the transcript (from 0)."`
	Start        int     `json:"start" required:"true" min:"0" doc:"The span's first character (Unicode code points from 0), as a search hit's start gives it."`
	End          int     `json:"end" required:"true" min:"1" doc:"Just after the span's last character; the span lies inside the message and is not only spaces."`
	TagIDs       []kv.ID `json:"tag_ids" doc:"Tags of the interview's study, at most 20. An annotation needs a tag or a note."`
	Note         string  `json:"note" maxLength:"2000" doc:"A note, up to 2,000 characters after trimming."`

	// Text, set by the app (never from the wire, where it would let a caller test
	// guesses at redacted words), is the selection the researcher made: the span
	// must be exactly it.
	Text *string `json:"-"`
	// NewTag, set by the app's form, names one more tag: the study's own of that name,
	// or one made in the annotation's transaction.
	NewTag string `json:"-"`
}

// AnnotationUpdateInput changes an annotation's tags or note.
type AnnotationUpdateInput struct {
	InterviewID  kv.ID    `path:"interview_id" doc:"The interview."`
	AnnotationID kv.ID    `path:"annotation_id" doc:"The annotation."`
	TagIDs       *[]kv.ID `json:"tag_ids" doc:"The tags, replacing the current ones; omitted or null leaves them."`
	Note         *string  `json:"note" maxLength:"2000" doc:"The note, replacing the current one (\"\" clears it); omitted or null leaves it."`
}

// AnnotationIDInput names one annotation.
type AnnotationIDInput struct {
	InterviewID  kv.ID `path:"interview_id" doc:"The interview."`
	AnnotationID kv.ID `path:"annotation_id" doc:"The annotation."`
}

// AnnotationDeleted answers delete_annotation.
type AnnotationDeleted struct {
	ID      kv.ID `json:"id"`
	Deleted bool  `json:"deleted"`
}

// annotationsOut renders annotations for the API, their text and notes redacted in
// one pass of the organisation's chain.
func (s *Service) annotationsOut(ctx context.Context, p *pipeline.Principal, anns []kv.Annotation) ([]AnnotationOut, error) {
	texts := make([]string, 0, 2*len(anns))
	for _, a := range anns {
		texts = append(texts, a.Text, a.Note)
	}
	red, err := s.Jobs.RedactTexts(ctx, p.Partition.Org, texts)
	if err != nil {
		return nil, err
	}
	out := make([]AnnotationOut, len(anns))
	for i, a := range anns {
		tags := a.TagIDs
		if tags == nil {
			tags = []kv.ID{}
		}
		out[i] = AnnotationOut{ID: a.ID, InterviewID: a.InterviewID, StudyID: a.StudyID, MessageIndex: a.MessageIndex, Start: a.Start, End: a.End,
			Text: red[2*i], TagIDs: tags, Note: red[2*i+1], CreatedAt: pipeline.WireTime(a.CreatedAt), UpdatedAt: pipeline.WireTime(a.UpdatedAt)}
	}
	return out, nil
}

func (s *Service) annotationOut(ctx context.Context, p *pipeline.Principal, a kv.Annotation, err error) (AnnotationOut, error) {
	if err != nil {
		return AnnotationOut{}, err
	}
	out, err := s.annotationsOut(ctx, p, []kv.Annotation{a})
	if err != nil {
		return AnnotationOut{}, err
	}
	return out[0], nil
}

func (s *Service) listAnnotations(ctx context.Context, p *pipeline.Principal, in *InterviewAnnotationsInput) (pipeline.List[AnnotationOut], error) {
	anns, err := s.DB.FindAnnotations(ctx, p.Partition, in.InterviewID)
	if err != nil {
		return pipeline.List[AnnotationOut]{}, err
	}
	out, err := s.annotationsOut(ctx, p, anns)
	if err != nil {
		return pipeline.List[AnnotationOut]{}, err
	}
	return pipeline.NewList(out, ""), nil
}

func (s *Service) createAnnotation(ctx context.Context, p *pipeline.Principal, in *AnnotationInput) (AnnotationOut, error) {
	a, err := s.DB.CreateAnnotation(ctx, kv.AnnotationInput{Partition: p.Partition, InterviewID: in.InterviewID, MessageIndex: in.MessageIndex,
		Start: in.Start, End: in.End, Text: in.Text, TagIDs: in.TagIDs, Note: in.Note, NewTag: in.NewTag})
	return s.annotationOut(ctx, p, a, err)
}

func (s *Service) updateAnnotation(ctx context.Context, p *pipeline.Principal, in *AnnotationUpdateInput) (AnnotationOut, error) {
	a, err := s.DB.UpdateAnnotation(ctx, p.Partition, in.InterviewID, in.AnnotationID, kv.AnnotationChange{TagIDs: in.TagIDs, Note: in.Note})
	return s.annotationOut(ctx, p, a, err)
}

func (s *Service) deleteAnnotation(ctx context.Context, p *pipeline.Principal, in *AnnotationIDInput) (AnnotationDeleted, error) {
	if err := s.DB.DeleteAnnotation(ctx, p.Partition, in.InterviewID, in.AnnotationID); err != nil {
		return AnnotationDeleted{}, err
	}
	return AnnotationDeleted{ID: in.AnnotationID, Deleted: true}, nil
}
