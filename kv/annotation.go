package kv

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A researcher works with transcripts by highlighting a span of a participant message,
// tagging it with the study's tags and adding a note. Tags belong to a study (a study's
// code book); annotations belong to an interview and name their span by message and
// by characters (Unicode code points, as REFI-QDA counts them), and keep the span's
// text, which is checked to be exactly what those characters of the message are.
//
// Keys lead with the partition and the study, so a study's tags and every annotation of
// its interviews are one prefix: the analysis reads them in one walk, and erasing an
// interview deletes its annotations by a longer prefix.

// Limits of tags and annotations.
const (
	TagMaxName                = 60   // characters of a tag's name, after trimming
	TagMaxPerStudy            = 200  // tags in one study
	AnnotationMaxNote         = 2000 // characters of a note, after trimming
	AnnotationMaxTags         = 20   // tags on one annotation
	AnnotationMaxPerInterview = 500  // annotations on one interview
)

// Tag is one of a study's codes.
type Tag struct {
	ID        ID        `json:"id"`
	StudyID   ID        `json:"study_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Annotation is a highlighted span of one participant message, with its tags and note.
type Annotation struct {
	ID           ID        `json:"id"`
	StudyID      ID        `json:"study_id"`
	InterviewID  ID        `json:"interview_id"`
	MessageIndex int       `json:"message_index"`
	Start        int       `json:"start"` // first character of the span, from 0
	End          int       `json:"end"`   // just after its last character
	Text         string    `json:"text"`  // the span itself
	TagIDs       []ID      `json:"tag_ids"`
	Note         string    `json:"note"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// tagKey is partition + study + tag id; annotationKey partition + study + interview +
// annotation id.
func tagKey(p Partition, study, tag ID) []byte {
	return append(p.key(study), tag[:]...)
}

func annotationKey(p Partition, study, interview, ann ID) []byte {
	return append(append(p.key(study), interview[:]...), ann[:]...)
}

// ValidateTagName returns the trimmed name, or EINVALID at ["name"].
func ValidateTagName(name string) (string, error) {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return "", Invalid(FieldError{Loc: []any{"name"}, Type: "string_too_short", Msg: "A tag needs a name.", Ctx: map[string]any{"min_length": 1}})
	case n > TagMaxName:
		return "", Invalid(FieldError{Loc: []any{"name"}, Type: "string_too_long", Msg: "A tag's name is at most 60 characters.", Ctx: map[string]any{"max_length": TagMaxName}})
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", Invalid(FieldError{Loc: []any{"name"}, Type: "control_character", Msg: "A tag's name is one line without control characters."})
	}
	return name, nil
}

// FindTags returns the study's tags in the order they were made. ENOTFOUND for a study
// outside the partition.
func (db *DB) FindTags(ctx context.Context, p Partition, study ID) ([]Tag, error) {
	var out []Tag
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		var err error
		out, err = tagsOf(tx, p, study)
		return err
	})
	return out, err
}

func tagsOf(tx Tx, p Partition, study ID) ([]Tag, error) {
	prefix := p.key(study)
	out := []Tag{}
	c := tx.Bucket(bucketTags).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var t Tag
		if err := jsonUnmarshal(v, &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func errTagNameTaken() *Error {
	return Invalid(FieldError{Loc: []any{"name"}, Type: "tag_exists", Msg: "The study already has a tag of this name."})
}

// CreateTag adds a tag to the study. EINVALID for a bad or taken name (names are
// compared ignoring case), ECONFLICT (reason tag_limit) past TagMaxPerStudy, ENOTFOUND
// for a study outside the partition.
func (db *DB) CreateTag(ctx context.Context, p Partition, study ID, name string) (Tag, error) {
	name, err := ValidateTagName(name)
	if err != nil {
		return Tag{}, err
	}
	var out Tag
	err = db.update(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		tags, err := tagsOf(tx, p, study)
		if err != nil {
			return err
		}
		for _, t := range tags {
			if strings.EqualFold(t.Name, name) {
				return errTagNameTaken()
			}
		}
		out, err = db.putNewTag(tx, p, study, name, len(tags))
		return err
	})
	return out, err
}

// putNewTag stores a new tag of the study, which has held tags already (ECONFLICT
// tag_limit past TagMaxPerStudy).
func (db *DB) putNewTag(tx Tx, p Partition, study ID, name string, held int) (Tag, error) {
	if held >= TagMaxPerStudy {
		return Tag{}, Errorf(ECONFLICT, "tag_limit", "A study has at most 200 tags; delete or merge some first.")
	}
	now := db.Now()
	t := Tag{ID: db.NewID(), StudyID: study, Name: name, CreatedAt: now, UpdatedAt: now}
	return t, putJSON(tx.Bucket(bucketTags), tagKey(p, study, t.ID), t)
}

// RenameTag renames one of the study's tags. Errors as CreateTag; ENOTFOUND for an
// unknown tag.
func (db *DB) RenameTag(ctx context.Context, p Partition, study, tag ID, name string) (Tag, error) {
	name, err := ValidateTagName(name)
	if err != nil {
		return Tag{}, err
	}
	var out Tag
	err = db.update(ctx, func(tx Tx) error {
		tags, err := tagsOf(tx, p, study)
		if err != nil {
			return err
		}
		found := false
		for _, t := range tags {
			if t.ID == tag {
				out, found = t, true
			} else if strings.EqualFold(t.Name, name) {
				return errTagNameTaken()
			}
		}
		if !found {
			return notFound("Tag")
		}
		if out.Name == name {
			return nil
		}
		out.Name, out.UpdatedAt = name, db.Now()
		return putJSON(tx.Bucket(bucketTags), tagKey(p, study, tag), out)
	})
	return out, err
}

// DeleteTag deletes one of the study's tags and takes it off every annotation; an
// annotation left with no tag and no note goes too. It returns how many annotations
// it changed or deleted. ENOTFOUND for an unknown tag.
func (db *DB) DeleteTag(ctx context.Context, p Partition, study, tag ID) (int, error) {
	n := 0
	err := db.update(ctx, func(tx Tx) error {
		n = 0
		tb := tx.Bucket(bucketTags)
		if tb.Get(tagKey(p, study, tag)) == nil {
			return notFound("Tag")
		}
		if err := tb.Delete(tagKey(p, study, tag)); err != nil {
			return err
		}
		ab := tx.Bucket(bucketAnnotations)
		prefix := p.key(study)
		type change struct {
			key []byte
			a   Annotation
		}
		var changes []change
		c := ab.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var a Annotation
			if err := jsonUnmarshal(v, &a); err != nil {
				return err
			}
			if i := slices.Index(a.TagIDs, tag); i >= 0 {
				a.TagIDs = slices.Delete(a.TagIDs, i, i+1)
				changes = append(changes, change{append([]byte(nil), k...), a})
			}
		}
		now := db.Now()
		for _, ch := range changes { // written after the walk: no writes under a cursor
			n++
			if len(ch.a.TagIDs) == 0 && ch.a.Note == "" {
				if err := ab.Delete(ch.key); err != nil {
					return err
				}
				continue
			}
			ch.a.UpdatedAt = now
			if err := putJSON(ab, ch.key, ch.a); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// AnnotationInput is a new annotation: a span of one participant message of the
// interview, with tags of the interview's study and a note (at least one of the two).
type AnnotationInput struct {
	Partition    Partition
	InterviewID  ID
	MessageIndex int
	Start, End   int     // characters, End exclusive
	Text         *string // when given, must be exactly the span
	TagIDs       []ID
	Note         string
	// NewTag names one more tag: the study's tag of that name (ignoring case), or a
	// new one made in the same transaction as the annotation (the app's form).
	NewTag string
}

// CreateAnnotation validates the span against the stored message and saves the
// annotation. EINVALID with the fields at fault (message_index, start, end, text,
// tag_ids, note); ECONFLICT (reason annotation_limit) past AnnotationMaxPerInterview;
// ENOTFOUND for an interview outside the partition.
func (db *DB) CreateAnnotation(ctx context.Context, in AnnotationInput) (Annotation, error) {
	note, err := validateNote(in.Note)
	if err != nil {
		return Annotation{}, err
	}
	newTag := ""
	if in.NewTag != "" {
		if newTag, err = ValidateTagName(in.NewTag); err != nil {
			return Annotation{}, relocate(err, "new_tag")
		}
	}
	var out Annotation
	err = db.update(ctx, func(tx Tx) error {
		iv, err := interviewByID(tx, in.Partition, in.InterviewID)
		if err != nil {
			return err
		}
		text, err := spanOf(tx, iv, in)
		if err != nil {
			return err
		}
		tags, err := checkTagIDs(tx, in.Partition, iv.StudyID, in.TagIDs)
		if err != nil {
			return err
		}
		if newTag != "" {
			id, err := db.tagNamed(tx, in.Partition, iv.StudyID, newTag)
			if err != nil {
				return err
			}
			if !slices.Contains(tags, id) {
				tags = append(tags, id)
			}
			if len(tags) > AnnotationMaxTags {
				return Invalid(FieldError{Loc: []any{"tag_ids"}, Type: "too_long", Msg: "An annotation has at most 20 tags.", Ctx: map[string]any{"max_length": AnnotationMaxTags}})
			}
		}
		if len(tags) == 0 && note == "" {
			return Invalid(FieldError{Loc: []any{"tag_ids"}, Type: "too_short", Msg: "Give the highlight a tag or a note."})
		}
		prefix := append(in.Partition.key(iv.StudyID), iv.ID[:]...)
		count := 0
		c := tx.Bucket(bucketAnnotations).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			count++
		}
		if count >= AnnotationMaxPerInterview {
			return Errorf(ECONFLICT, "annotation_limit", "An interview has at most 500 annotations.")
		}
		now := db.Now()
		out = Annotation{ID: db.NewID(), StudyID: iv.StudyID, InterviewID: iv.ID, MessageIndex: in.MessageIndex, Start: in.Start, End: in.End,
			Text: text, TagIDs: tags, Note: note, CreatedAt: now, UpdatedAt: now}
		return putJSON(tx.Bucket(bucketAnnotations), annotationKey(in.Partition, iv.StudyID, iv.ID, out.ID), out)
	})
	return out, err
}

// tagNamed returns the id of the study's tag named name (ignoring case), making it when
// there is none (ECONFLICT tag_limit past TagMaxPerStudy), inside the caller's
// transaction.
func (db *DB) tagNamed(tx Tx, p Partition, study ID, name string) (ID, error) {
	tags, err := tagsOf(tx, p, study)
	if err != nil {
		return ID{}, err
	}
	for _, t := range tags {
		if strings.EqualFold(t.Name, name) {
			return t.ID, nil
		}
	}
	t, err := db.putNewTag(tx, p, study, name, len(tags))
	return t.ID, err
}

// relocate moves the fields of a validation error to loc (a name checked for another
// field), leaving any other error as it is.
func relocate(err error, loc string) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	fields := make([]FieldError, len(e.Fields))
	for i, f := range e.Fields {
		f.Loc = []any{loc}
		fields[i] = f
	}
	return Invalid(fields...)
}

// spanOf returns the text of the input's span of its participant message, or EINVALID.
func spanOf(tx Tx, iv Interview, in AnnotationInput) (string, error) {
	if in.MessageIndex < 0 || in.MessageIndex >= iv.TranscriptLen {
		return "", Invalid(FieldError{Loc: []any{"message_index"}, Type: "message_not_found", Msg: "The interview has no message at this index.",
			Ctx: map[string]any{"messages": iv.TranscriptLen}})
	}
	var m Message
	ok, err := getJSON(tx.Bucket(bucketTranscripts), transcriptKey(iv.ID, in.MessageIndex), &m)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", Invalid(FieldError{Loc: []any{"message_index"}, Type: "message_not_found", Msg: "The interview has no message at this index."})
	}
	if m.Speaker != SpeakerParticipant {
		return "", Invalid(FieldError{Loc: []any{"message_index"}, Type: "not_participant", Msg: "Only what the participant said can be annotated."})
	}
	n := utf8.RuneCountInString(m.Text)
	if in.Start < 0 || in.Start >= n {
		return "", Invalid(FieldError{Loc: []any{"start"}, Type: "span_out_of_range", Msg: "The span must start inside the message.", Ctx: map[string]any{"characters": n}})
	}
	if in.End <= in.Start || in.End > n {
		return "", Invalid(FieldError{Loc: []any{"end"}, Type: "span_out_of_range", Msg: "The span must end after its start and inside the message.", Ctx: map[string]any{"characters": n}})
	}
	text := RuneSlice(m.Text, in.Start, in.End)
	if in.Text != nil && *in.Text != text {
		return "", Invalid(FieldError{Loc: []any{"text"}, Type: "span_mismatch", Msg: "The text is not what the message says at these characters."})
	}
	if strings.TrimSpace(text) == "" {
		return "", Invalid(FieldError{Loc: []any{"start"}, Type: "span_blank", Msg: "The span holds only spaces."})
	}
	return text, nil
}

// RuneSlice returns the characters [start, end) of s, for 0 ≤ start ≤ end ≤ its length
// in characters.
func RuneSlice(s string, start, end int) string {
	from, to, i := len(s), len(s), 0
	for b := range s {
		if i == start {
			from = b
		}
		if i == end {
			to = b
			break
		}
		i++
	}
	return s[from:to]
}

// checkTagIDs returns the ids, each once, when every one is a tag of the study.
func checkTagIDs(tx Tx, p Partition, study ID, ids []ID) ([]ID, error) {
	if len(ids) > AnnotationMaxTags {
		return nil, Invalid(FieldError{Loc: []any{"tag_ids"}, Type: "too_long", Msg: "An annotation has at most 20 tags.", Ctx: map[string]any{"max_length": AnnotationMaxTags}})
	}
	out := make([]ID, 0, len(ids))
	for i, id := range ids {
		if slices.Contains(out, id) {
			continue
		}
		if tx.Bucket(bucketTags).Get(tagKey(p, study, id)) == nil {
			return nil, Invalid(FieldError{Loc: []any{"tag_ids", i}, Type: "tag_not_found", Msg: "No tag of this study has this id."})
		}
		out = append(out, id)
	}
	return out, nil
}

func validateNote(note string) (string, error) {
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > AnnotationMaxNote {
		return "", Invalid(FieldError{Loc: []any{"note"}, Type: "string_too_long", Msg: "A note is at most 2,000 characters.", Ctx: map[string]any{"max_length": AnnotationMaxNote}})
	}
	if strings.IndexByte(note, 0) >= 0 {
		return "", Invalid(FieldError{Loc: []any{"note"}, Type: "null_character", Msg: "A note must not contain NUL."})
	}
	return note, nil
}

// FindAnnotations returns the interview's annotations by message and position.
// ENOTFOUND for an interview outside the partition.
func (db *DB) FindAnnotations(ctx context.Context, p Partition, interview ID) ([]Annotation, error) {
	var out []Annotation
	err := db.view(ctx, func(tx Tx) error {
		iv, err := interviewByID(tx, p, interview)
		if err != nil {
			return err
		}
		out, err = annotationsUnder(tx, append(p.key(iv.StudyID), iv.ID[:]...))
		return err
	})
	sortAnnotations(out)
	return out, err
}

// FindStudyAnnotations returns the study's tags and every annotation of its
// interviews (by interview, message and position). ENOTFOUND for an unknown study.
func (db *DB) FindStudyAnnotations(ctx context.Context, p Partition, study ID) ([]Tag, []Annotation, error) {
	var tags []Tag
	var anns []Annotation
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		var err error
		if tags, err = tagsOf(tx, p, study); err != nil {
			return err
		}
		anns, err = annotationsUnder(tx, p.key(study))
		return err
	})
	sortAnnotations(anns)
	return tags, anns, err
}

func annotationsUnder(tx Tx, prefix []byte) ([]Annotation, error) {
	out := []Annotation{}
	c := tx.Bucket(bucketAnnotations).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var a Annotation
		if err := jsonUnmarshal(v, &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func sortAnnotations(as []Annotation) {
	slices.SortStableFunc(as, func(a, b Annotation) int {
		if c := bytes.Compare(a.InterviewID[:], b.InterviewID[:]); c != 0 {
			return c
		}
		if a.MessageIndex != b.MessageIndex {
			return a.MessageIndex - b.MessageIndex
		}
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
}

// AnnotationChange replaces an annotation's tags, its note, or both (nil leaves one
// as it is). The span is fixed: a different span is a new annotation.
type AnnotationChange struct {
	TagIDs *[]ID
	Note   *string
}

// UpdateAnnotation changes an annotation's tags or note. Errors as CreateAnnotation
// for the tags and note; ENOTFOUND for an unknown annotation.
func (db *DB) UpdateAnnotation(ctx context.Context, p Partition, interview, ann ID, ch AnnotationChange) (Annotation, error) {
	var note string
	if ch.Note != nil {
		var err error
		if note, err = validateNote(*ch.Note); err != nil {
			return Annotation{}, err
		}
	}
	var out Annotation
	err := db.update(ctx, func(tx Tx) error {
		iv, err := interviewByID(tx, p, interview)
		if err != nil {
			return err
		}
		key := annotationKey(p, iv.StudyID, iv.ID, ann)
		ok, err := getJSON(tx.Bucket(bucketAnnotations), key, &out)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("Annotation")
		}
		if ch.TagIDs != nil {
			if out.TagIDs, err = checkTagIDs(tx, p, iv.StudyID, *ch.TagIDs); err != nil {
				return err
			}
		}
		if ch.Note != nil {
			out.Note = note
		}
		if len(out.TagIDs) == 0 && out.Note == "" {
			return Invalid(FieldError{Loc: []any{"tag_ids"}, Type: "too_short", Msg: "Give the highlight a tag or a note; to remove it, delete it."})
		}
		out.UpdatedAt = db.Now()
		return putJSON(tx.Bucket(bucketAnnotations), key, out)
	})
	return out, err
}

// DeleteAnnotation deletes one annotation. ENOTFOUND for an unknown one.
func (db *DB) DeleteAnnotation(ctx context.Context, p Partition, interview, ann ID) error {
	return db.update(ctx, func(tx Tx) error {
		iv, err := interviewByID(tx, p, interview)
		if err != nil {
			return err
		}
		key := annotationKey(p, iv.StudyID, iv.ID, ann)
		if tx.Bucket(bucketAnnotations).Get(key) == nil {
			return notFound("Annotation")
		}
		return tx.Bucket(bucketAnnotations).Delete(key)
	})
}

// eraseAnnotationsOf deletes an erased interview's annotations and returns how many.
func eraseAnnotationsOf(tx Tx, iv Interview) (int, error) {
	return deletePrefix(tx.Bucket(bucketAnnotations), append(iv.Partition().key(iv.StudyID), iv.ID[:]...), nil)
}
