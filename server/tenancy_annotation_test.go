package server

import (
	"context"
	"strconv"
	"testing"

	"interviewd/kv"
)

// annotationFixtures are the tenancy matrix's arguments of the transcript operations:
// a tag and an annotation of the participant's answer in organisation A's study, and
// for the deletes a new tag or annotation on every call.
func (w *tenancyWorld) annotationFixtures(t *testing.T, study kv.Study, iv kv.Interview) map[string]tenancyFixture {
	t.Helper()
	ctx := context.Background()
	p := study.Partition()
	msgs, err := w.e.db.FindTranscript(ctx, p, iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	answer := -1
	for i, m := range msgs {
		if m.Speaker == kv.SpeakerParticipant {
			answer = i
		}
	}
	if answer < 0 {
		t.Fatalf("no participant message in %+v", msgs)
	}
	tag, err := w.e.db.CreateTag(ctx, p, study.ID, "Planning")
	if err != nil {
		t.Fatal(err)
	}
	newAnnotation := func(t *testing.T) kv.Annotation {
		a, err := w.e.db.CreateAnnotation(ctx, kv.AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: answer, Start: 3, End: 7, TagIDs: []kv.ID{tag.ID}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ann := newAnnotation(t)
	w.ownIDs = append(w.ownIDs, tag.ID.String(), ann.ID.String())
	n := 0
	return map[string]tenancyFixture{
		"list_tags": {args: map[string]any{"study_id": study.ID.String()}},
		"create_tag": {args: map[string]any{"study_id": study.ID.String(), "name": "Tools"}, fresh: func(t *testing.T) map[string]any {
			n++
			return map[string]any{"study_id": study.ID.String(), "name": "Tools " + strconv.Itoa(n)}
		}},
		"rename_tag": {args: map[string]any{"study_id": study.ID.String(), "tag_id": tag.ID.String(), "name": "Planning"}},
		"delete_tag": {args: map[string]any{"study_id": study.ID.String(), "tag_id": tag.ID.String()}, fresh: func(t *testing.T) map[string]any {
			n++
			fresh, err := w.e.db.CreateTag(ctx, p, study.ID, "Gone "+strconv.Itoa(n))
			if err != nil {
				t.Fatal(err)
			}
			return map[string]any{"study_id": study.ID.String(), "tag_id": fresh.ID.String()}
		}},
		"list_annotations":  {args: map[string]any{"interview_id": iv.ID.String()}},
		"create_annotation": {args: map[string]any{"interview_id": iv.ID.String(), "message_index": answer, "start": 3, "end": 7, "tag_ids": []any{tag.ID.String()}, "note": "When"}},
		"update_annotation": {args: map[string]any{"interview_id": iv.ID.String(), "annotation_id": ann.ID.String(), "note": "Weekly"}},
		"delete_annotation": {args: map[string]any{"interview_id": iv.ID.String(), "annotation_id": ann.ID.String()}, fresh: func(t *testing.T) map[string]any {
			return map[string]any{"interview_id": iv.ID.String(), "annotation_id": newAnnotation(t).ID.String()}
		}},
		"search_transcripts": {args: map[string]any{"study_id": study.ID.String(), "q": `sundays "plan on"`, "limit": 5}},
	}
}
