package kv

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func annotationWorld(t *testing.T) (*DB, Partition, Study, Interview) {
	t.Helper()
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, OrgInput{Name: "Notes", Email: "n@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "Notes")
	return db, p, st, mustInterview(t, db, st, "Zoë café", true)
}

func wantField(t *testing.T, err error, field, typ string) {
	t.Helper()
	var ke *Error
	if !errors.As(err, &ke) || ke.Code != EINVALID || len(ke.Fields) == 0 || ke.Fields[0].Loc[0] != field || ke.Fields[0].Type != typ {
		t.Fatalf("got %v, want EINVALID at %s (%s)", err, field, typ)
	}
}

// TestTags: names are trimmed, unique per study ignoring case, limited; renames keep
// that rule; another partition sees no tag and cannot touch one.
func TestTags(t *testing.T) {
	db, p, st, _ := annotationWorld(t)
	ctx := context.Background()
	a, err := db.CreateTag(ctx, p, st.ID, "  Pricing  ")
	if err != nil || a.Name != "Pricing" || a.StudyID != st.ID {
		t.Fatalf("create: %+v %v", a, err)
	}
	_, err = db.CreateTag(ctx, p, st.ID, "pricing")
	wantField(t, err, "name", "tag_exists")
	_, err = db.CreateTag(ctx, p, st.ID, " ")
	wantField(t, err, "name", "string_too_short")
	_, err = db.CreateTag(ctx, p, st.ID, strings.Repeat("é", TagMaxName+1))
	wantField(t, err, "name", "string_too_long")
	_, err = db.CreateTag(ctx, p, st.ID, "two\nlines")
	wantField(t, err, "name", "control_character")
	b, err := db.CreateTag(ctx, p, st.ID, "Onboarding")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.RenameTag(ctx, p, st.ID, b.ID, "PRICING")
	wantField(t, err, "name", "tag_exists")
	if r, err := db.RenameTag(ctx, p, st.ID, a.ID, "pricing"); err != nil || r.Name != "pricing" {
		t.Fatalf("renaming a tag to its own name in another case: %+v %v", r, err)
	}
	tags, err := db.FindTags(ctx, p, st.ID)
	if err != nil || len(tags) != 2 || tags[0].ID != a.ID || tags[1].Name != "Onboarding" {
		t.Fatalf("tags %+v %v", tags, err)
	}
	other := Partition{Org: p.Org, Env: EnvTest}
	if _, err := db.FindTags(ctx, other, st.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another environment read tags: %v", err)
	}
	if _, err := db.RenameTag(ctx, other, st.ID, a.ID, "x"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another environment renamed a tag: %v", err)
	}
	if _, err := db.DeleteTag(ctx, other, st.ID, a.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another environment deleted a tag: %v", err)
	}
	for i := len(tags); i < TagMaxPerStudy; i++ {
		if _, err := db.CreateTag(ctx, p, st.ID, "t"+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.CreateTag(ctx, p, st.ID, "one too many"); ErrorCode(err) != ECONFLICT {
		t.Fatalf("tag past the limit: %v", err)
	}
}

// TestAnnotations: a span is checked against the participant message in characters;
// tags must be the study's; deleting a tag takes it off annotations; erasing the
// interview deletes its annotations.
func TestAnnotations(t *testing.T) {
	db, p, st, iv := annotationWorld(t)
	ctx := context.Background()
	tag, _ := db.CreateTag(ctx, p, st.ID, "Names")
	tag2, _ := db.CreateTag(ctx, p, st.ID, "Accents")
	// Message 1 is "My name is Zoë café": "Zoë" is characters 11 to 14 (ë is two bytes).
	want := "Zoë"
	a, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 11, End: 14, Text: &want,
		TagIDs: []ID{tag.ID, tag.ID}, Note: "  first name  "})
	if err != nil || a.Text != want || len(a.TagIDs) != 1 || a.Note != "first name" || a.StudyID != st.ID {
		t.Fatalf("create: %+v %v", a, err)
	}
	bad := func(in AnnotationInput, field, typ string) {
		t.Helper()
		in.Partition, in.InterviewID = p, iv.ID
		_, err := db.CreateAnnotation(ctx, in)
		wantField(t, err, field, typ)
	}
	wrong := "Zoe"
	bad(AnnotationInput{MessageIndex: 1, Start: 11, End: 14, Text: &wrong, TagIDs: []ID{tag.ID}}, "text", "span_mismatch")
	bad(AnnotationInput{MessageIndex: 0, Start: 0, End: 2, TagIDs: []ID{tag.ID}}, "message_index", "not_participant")
	bad(AnnotationInput{MessageIndex: 2, Start: 0, End: 2, TagIDs: []ID{tag.ID}}, "message_index", "message_not_found")
	bad(AnnotationInput{MessageIndex: -1, Start: 0, End: 2, TagIDs: []ID{tag.ID}}, "message_index", "message_not_found")
	bad(AnnotationInput{MessageIndex: 1, Start: 5, End: 5, TagIDs: []ID{tag.ID}}, "end", "span_out_of_range")
	bad(AnnotationInput{MessageIndex: 1, Start: 11, End: 20, TagIDs: []ID{tag.ID}}, "end", "span_out_of_range")
	bad(AnnotationInput{MessageIndex: 1, Start: -1, End: 2, TagIDs: []ID{tag.ID}}, "start", "span_out_of_range")
	bad(AnnotationInput{MessageIndex: 1, Start: 2, End: 3, TagIDs: []ID{tag.ID}}, "start", "span_blank")
	bad(AnnotationInput{MessageIndex: 1, Start: 0, End: 2}, "tag_ids", "too_short")
	bad(AnnotationInput{MessageIndex: 1, Start: 0, End: 2, TagIDs: []ID{NewV4()}}, "tag_ids", "tag_not_found")
	bad(AnnotationInput{MessageIndex: 1, Start: 0, End: 2, Note: strings.Repeat("n", AnnotationMaxNote+1)}, "note", "string_too_long")

	// A tag of another study is not this study's.
	st2 := liveStudy(t, db, p, "Other")
	foreign, _ := db.CreateTag(ctx, p, st2.ID, "Names")
	bad(AnnotationInput{MessageIndex: 1, Start: 0, End: 2, TagIDs: []ID{foreign.ID}}, "tag_ids", "tag_not_found")

	b, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 15, End: 19, TagIDs: []ID{tag2.ID}})
	if err != nil || b.Text != "café" {
		t.Fatalf("second: %+v %v", b, err)
	}
	tags := []ID{tag.ID, tag2.ID}
	if u, err := db.UpdateAnnotation(ctx, p, iv.ID, b.ID, AnnotationChange{TagIDs: &tags}); err != nil || len(u.TagIDs) != 2 {
		t.Fatalf("update: %+v %v", u, err)
	}
	none := []ID{}
	if _, err := db.UpdateAnnotation(ctx, p, iv.ID, a.ID, AnnotationChange{TagIDs: &none}); err != nil {
		t.Fatalf("a note keeps an annotation without tags: %v", err)
	}
	empty := ""
	_, err = db.UpdateAnnotation(ctx, p, iv.ID, a.ID, AnnotationChange{Note: &empty})
	wantField(t, err, "tag_ids", "too_short")

	// Deleting tag2 leaves b with tag; deleting tag then leaves b with nothing: it goes.
	if n, err := db.DeleteTag(ctx, p, st.ID, tag2.ID); err != nil || n != 1 {
		t.Fatalf("delete tag2: %d %v", n, err)
	}
	if n, err := db.DeleteTag(ctx, p, st.ID, tag.ID); err != nil || n != 1 {
		t.Fatalf("delete tag: %d %v", n, err)
	}
	anns, err := db.FindAnnotations(ctx, p, iv.ID)
	if err != nil || len(anns) != 1 || anns[0].ID != a.ID {
		t.Fatalf("after deleting both tags: %+v %v", anns, err)
	}
	if err := db.DeleteAnnotation(ctx, Partition{Org: p.Org, Env: EnvTest}, iv.ID, a.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("delete from another environment: %v", err)
	}

	rc, err := db.EraseInterview(ctx, iv.ID)
	if err != nil || rc.Annotations != 1 {
		t.Fatalf("erase: %+v %v", rc, err)
	}
	_, all, err := db.FindStudyAnnotations(ctx, p, st.ID)
	if err != nil || len(all) != 0 {
		t.Fatalf("annotations after erasure: %+v %v", all, err)
	}
}

// TestSearchTranscripts: every hit is found once across pages whatever the page's
// limit and budget; a cursor is bound to its study.
func TestSearchTranscripts(t *testing.T) {
	db, p, st, _ := annotationWorld(t)
	ctx := context.Background()
	for _, s := range []string{"anna", "ben", "carl", "dora"} {
		mustInterview(t, db, st, s, true)
	}
	other := liveStudy(t, db, p, "Other")
	mustInterview(t, db, other, "eve", true)
	match := func(_, text string) bool { return strings.Contains(text, "name") }
	want := 5 // one participant message per interview of st
	for _, c := range []struct{ limit, budget int }{{100, 1000}, {1, 1000}, {2, 3}, {100, 1}, {3, 2}} {
		var got []SearchHit
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatalf("limit %d budget %d: paging does not end", c.limit, c.budget)
			}
			hits, next, err := db.SearchTranscripts(ctx, TranscriptSearch{Partition: p, StudyID: st.ID, Match: match, Limit: c.limit, Budget: c.budget, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) > c.limit {
				t.Fatalf("%d hits over limit %d", len(hits), c.limit)
			}
			got = append(got, hits...)
			if next == "" {
				break
			}
			cursor = next
		}
		seen := map[ID]bool{}
		for _, h := range got {
			if seen[h.InterviewID] || h.MessageIndex != 1 || h.Speaker != SpeakerParticipant || !strings.Contains(h.Text, "name") {
				t.Fatalf("limit %d budget %d: hit %+v", c.limit, c.budget, h)
			}
			seen[h.InterviewID] = true
		}
		if len(got) != want {
			t.Fatalf("limit %d budget %d: %d hits, want %d", c.limit, c.budget, len(got), want)
		}
	}
	_, next, err := db.SearchTranscripts(ctx, TranscriptSearch{Partition: p, StudyID: st.ID, Match: match, Limit: 1, Budget: 100})
	if err != nil || next == "" {
		t.Fatalf("first page: %q %v", next, err)
	}
	_, _, err = db.SearchTranscripts(ctx, TranscriptSearch{Partition: p, StudyID: other.ID, Match: match, Limit: 1, Budget: 100, Cursor: next})
	wantField(t, err, "cursor", "cursor_invalid")
	if _, _, err := db.SearchTranscripts(ctx, TranscriptSearch{Partition: Partition{Org: p.Org, Env: EnvTest}, StudyID: st.ID, Match: match, Limit: 1, Budget: 100}); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another environment searched: %v", err)
	}
}

// TestInterviewNeighbours: previous and next follow the start order within the study.
func TestInterviewNeighbours(t *testing.T) {
	db, p, st, first := annotationWorld(t)
	ctx := context.Background()
	other := liveStudy(t, db, p, "Other")
	mustInterview(t, db, other, "x", true)
	second := mustInterview(t, db, st, "b", true)
	third := mustInterview(t, db, st, "c", false)
	prev, next, at, of, err := db.InterviewNeighbours(ctx, p, second.ID)
	if err != nil || prev == nil || *prev != first.ID || next == nil || *next != third.ID || at != 2 || of != 3 {
		t.Fatalf("neighbours of the second: %v %v %d/%d %v", prev, next, at, of, err)
	}
	prev, next, at, _, _ = db.InterviewNeighbours(ctx, p, first.ID)
	if prev != nil || next == nil || *next != second.ID || at != 1 {
		t.Fatalf("neighbours of the first: %v %v %d", prev, next, at)
	}
	if _, next, _, _, _ := db.InterviewNeighbours(ctx, p, third.ID); next != nil {
		t.Fatalf("the last has a next: %v", next)
	}
}

// TestRetentionDeletesAnnotations: a retention sweep deletes the highlights of the
// interviews it deletes, and counts them; a newer interview keeps its own.
func TestRetentionDeletesAnnotations(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Trims", Email: "t@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "T")
	if _, err := db.SetRetention(ctx, org.ID, 30); err != nil {
		t.Fatal(err)
	}
	tag, _ := db.CreateTag(ctx, p, st.ID, "Old")
	annotate := func(iv Interview) {
		t.Helper()
		if _, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 0, End: 2, TagIDs: []ID{tag.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	old := mustInterview(t, db, st, "old", true)
	annotate(old)
	annotate(old)
	c.add(20 * 24 * time.Hour)
	fresh := mustInterview(t, db, st, "new", true)
	annotate(fresh)
	c.add(11 * 24 * time.Hour)
	sw, err := db.SweepRetention(ctx)
	if err != nil || sw.Interviews != 1 || sw.Annotations != 2 {
		t.Fatalf("sweep %+v %v", sw, err)
	}
	tags, anns, err := db.FindStudyAnnotations(ctx, p, st.ID)
	if err != nil || len(tags) != 1 || len(anns) != 1 || anns[0].InterviewID != fresh.ID {
		t.Fatalf("after the sweep: %+v %+v %v", tags, anns, err)
	}
}

// TestAnnotationNewTag: a tag named with the annotation is the study's tag of that name
// (ignoring case) or is made in the annotation's transaction, so a refused annotation
// leaves no tag behind; a bad name is refused at new_tag.
func TestAnnotationNewTag(t *testing.T) {
	db, p, st, iv := annotationWorld(t)
	ctx := context.Background()
	names, _ := db.CreateTag(ctx, p, st.ID, "Names")
	count := func() int {
		tags, err := db.FindTags(ctx, p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(tags)
	}
	// Refused (the span is blank): no tag is made.
	if _, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 2, End: 3, NewTag: "Fresh"}); err == nil {
		t.Fatal("a blank span was accepted")
	}
	if n := count(); n != 1 {
		t.Fatalf("a refused annotation left %d tags, want 1", n)
	}
	// An existing name, in another case, is that tag; a new name is made with it.
	a, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 11, End: 14, NewTag: "  nAmEs "})
	if err != nil || len(a.TagIDs) != 1 || a.TagIDs[0] != names.ID || count() != 1 {
		t.Fatalf("existing name: %+v %v (%d tags)", a, err, count())
	}
	b, err := db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 15, End: 19, TagIDs: []ID{names.ID}, NewTag: "Places"})
	if err != nil || len(b.TagIDs) != 2 || count() != 2 {
		t.Fatalf("new name: %+v %v (%d tags)", b, err, count())
	}
	_, err = db.CreateAnnotation(ctx, AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: 11, End: 14, NewTag: strings.Repeat("x", TagMaxName+1)})
	wantField(t, err, "new_tag", "string_too_long")
}
