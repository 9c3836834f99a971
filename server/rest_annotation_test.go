package server

import (
	stdjson "encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/server/research"
)

// annotatedInterview is a live study with one interview whose participant said said,
// and the index of that message.
func (e *testEnv) annotatedInterview(t *testing.T, said string) (kv.Study, kv.Interview, int) {
	t.Helper()
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Notes", "How do you plan your week?"))
	p := e.participant(st.LinkToken)
	p.open()
	p.mustSay(said)
	ivs := e.interviewsOf(st)
	if len(ivs) != 1 {
		t.Fatalf("%d interviews", len(ivs))
	}
	msgs, err := e.db.FindTranscript(t.Context(), st.Partition(), ivs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Speaker == kv.SpeakerParticipant && m.Text == said {
			return st, ivs[0], i
		}
	}
	t.Fatalf("the answer is not in %+v", msgs)
	return kv.Study{}, kv.Interview{}, 0
}

// TestRESTAnnotations: tags and annotations over REST, with the refusals naming their
// fields, the span checked against the message, and transcript text redacted.
func TestRESTAnnotations(t *testing.T) {
	e := mustServe(t)
	said := "I plan on Sundays; mail me at zoe@example.com about planning."
	st, iv, at := e.annotatedInterview(t, said)
	tags := "/v1/api/studies/" + st.ID.String() + "/tags"
	anns := "/v1/api/interviews/" + iv.ID.String() + "/annotations"

	r := e.do("POST", tags, "a_live", `{"name":"  Routines "}`)
	var tag research.TagOut
	r.json(t, &tag)
	if r.status != 201 || tag.Name != "Routines" || tag.StudyID != st.ID {
		t.Fatalf("create tag: %d %s", r.status, r.body)
	}
	e.run(t, []scenario{
		{name: "ErrTagTaken", method: "POST", path: tags, key: "a_live", body: `{"name":"routines"}`, wantStatus: 422, wantBody: `"loc":["body","name"]`},
		{name: "ErrTagBlank", method: "POST", path: tags, key: "a_live", body: `{"name":" "}`, wantStatus: 422, wantBody: `"type":"string_too_short"`},
		{name: "ErrTagExtraField", method: "POST", path: tags, key: "a_live", body: `{"name":"x","colour":"red"}`, wantStatus: 422, wantBody: `"type":"extra_forbidden"`},
		{name: "ErrTagOtherOrg", method: "POST", path: tags, key: "b_live", body: `{"name":"x"}`, wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "ErrTagScope", method: "GET", path: tags, key: "a_studies_only", wantStatus: 403, wantBody: `"code":"insufficient_scope"`},
		{name: "OK_TagList", method: "GET", path: tags, key: "a_live", wantStatus: 200, wantBody: `"name":"Routines"`},
	})

	// "Sundays" is characters 10 to 17 of the answer.
	body := fmt.Sprintf(`{"message_index":%d,"start":10,"end":17,"tag_ids":[%q],"note":"weekly ritual"}`, at, tag.ID)
	r = e.do("POST", anns, "a_live", body)
	var ann research.AnnotationOut
	r.json(t, &ann)
	if r.status != 201 || ann.Text != "Sundays" || ann.Note != "weekly ritual" || len(ann.TagIDs) != 1 || ann.MessageIndex != at {
		t.Fatalf("create annotation: %d %s", r.status, r.body)
	}
	email := strings.Index(said, "zoe@")
	emailEnd := strings.Index(said, ".com") + 4
	r = e.do("POST", anns, "a_live", fmt.Sprintf(`{"message_index":%d,"start":%d,"end":%d,"note":"contact: zoe@example.com"}`, at, email, emailEnd))
	if r.status != 201 || strings.Contains(string(r.body), "zoe@") || !strings.Contains(string(r.body), `"text":"[EMAIL]"`) {
		t.Fatalf("an annotated address leaves the API unredacted: %d %s", r.status, r.body)
	}
	loc := func(field string) string { return `"loc":["body","` + field + `"]` }
	e.run(t, []scenario{
		{name: "ErrInterviewerMessage", method: "POST", path: anns, key: "a_live", body: `{"message_index":0,"start":0,"end":2,"tag_ids":["` + tag.ID.String() + `"]}`, wantStatus: 422, wantBody: `"type":"not_participant"`},
		{name: "ErrSpanPastEnd", method: "POST", path: anns, key: "a_live", body: fmt.Sprintf(`{"message_index":%d,"start":1,"end":999,"note":"x"}`, at), wantStatus: 422, wantBody: loc("end")},
		{name: "ErrNoMessage", method: "POST", path: anns, key: "a_live", body: `{"message_index":99,"start":1,"end":2,"note":"x"}`, wantStatus: 422, wantBody: loc("message_index")},
		{name: "ErrNegativeStart", method: "POST", path: anns, key: "a_live", body: fmt.Sprintf(`{"message_index":%d,"start":-1,"end":2,"note":"x"}`, at), wantStatus: 422, wantBody: `"type":"greater_than_equal"`},
		{name: "ErrNothingToSay", method: "POST", path: anns, key: "a_live", body: fmt.Sprintf(`{"message_index":%d,"start":2,"end":6}`, at), wantStatus: 422, wantBody: loc("tag_ids")},
		{name: "ErrUnknownTag", method: "POST", path: anns, key: "a_live", body: fmt.Sprintf(`{"message_index":%d,"start":2,"end":6,"tag_ids":[%q]}`, at, kv.NewV4()), wantStatus: 422, wantBody: `"loc":["body","tag_ids",0]`},
		{name: "ErrTextNotOnTheWire", method: "POST", path: anns, key: "a_live", body: fmt.Sprintf(`{"message_index":%d,"start":10,"end":17,"note":"x","text":"Sundays"}`, at), wantStatus: 422, wantBody: `"type":"extra_forbidden"`},
		{name: "ErrOtherOrg", method: "GET", path: anns, key: "b_live", wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "ErrOtherEnvironment", method: "GET", path: anns, key: "a_test", wantStatus: 404},
	})

	r = e.do("PATCH", anns+"/"+ann.ID.String(), "a_live", `{"tag_ids":[]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"tag_ids":[]`) || !strings.Contains(string(r.body), `"note":"weekly ritual"`) {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if r := e.do("PATCH", anns+"/"+ann.ID.String(), "a_live", `{"note":""}`); r.status != 422 {
		t.Fatalf("an annotation emptied of tags and note: %d %s", r.status, r.body)
	}
	r = e.do("GET", anns, "a_live", "")
	var list []research.AnnotationOut
	r.json(t, &list)
	if r.status != 200 || len(list) != 2 || list[0].Start > list[1].Start || list[0].Text != "Sundays" {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", tags+"/"+tag.ID.String(), "a_live", ""); r.status != 200 || !strings.Contains(string(r.body), `"deleted":true`) {
		t.Fatalf("delete tag: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", anns+"/"+ann.ID.String(), "a_live", ""); r.status != 200 {
		t.Fatalf("delete annotation: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", anns+"/"+ann.ID.String(), "a_live", ""); r.status != 404 {
		t.Fatalf("delete it again: %d %s", r.status, r.body)
	}
}

// TestRESTSearchTranscripts: every term must be in a message; snippets are redacted
// and a hit whose term only the redacted text held is not shown; offsets highlight.
func TestRESTSearchTranscripts(t *testing.T) {
	e := mustServe(t)
	said := "Honestly I Plan my week on Sundays; mail me at zoe@example.com about planning."
	st, iv, at := e.annotatedInterview(t, said)
	search := "/v1/api/studies/" + st.ID.String() + "/transcripts/search?q="

	r := e.do("GET", search+`plan+%22on+sundays%22`, "a_live", "")
	var hits []research.TranscriptHit
	r.json(t, &hits)
	if r.status != 200 || len(hits) != 1 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	h := hits[0]
	if h.InterviewID != iv.ID || h.MessageIndex != at || h.Speaker != "participant" || strings.Contains(h.Snippet, "zoe@") || !strings.Contains(h.Snippet, "[EMAIL]") {
		t.Fatalf("hit %+v", h)
	}
	if got := kv.RuneSlice(said, h.Start, h.End); got != "Plan" {
		t.Fatalf("start/end name %q in the message, want the first match", got)
	}
	var marked []string
	for _, s := range h.Highlights {
		marked = append(marked, kv.RuneSlice(h.Snippet, s.Start, s.End))
	}
	if want := []string{"Plan", "on Sundays", "plan"}; !reflect.DeepEqual(marked, want) {
		t.Fatalf("highlights %q, want %q (snippet %q)", marked, want, h.Snippet)
	}
	for _, q := range []string{"zoe", "plan+wednesday", "%22sundays+plan%22"} {
		if r := e.do("GET", search+q, "a_live", ""); r.status != 200 || string(r.body) != "[]" {
			t.Fatalf("q=%s: %d %s, want no hit", q, r.status, r.body)
		}
	}
	e.run(t, []scenario{
		{name: "ErrEmptyQuery", method: "GET", path: search + "%20%22%22", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","q"]`},
		{name: "ErrNoQuery", method: "GET", path: "/v1/api/studies/" + st.ID.String() + "/transcripts/search", key: "a_live", wantStatus: 422, wantBody: `"type":"missing"`},
		{name: "ErrLimit", method: "GET", path: search + "plan&limit=101", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","limit"]`},
		{name: "ErrCursor", method: "GET", path: search + "plan&cursor=abc", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","cursor"]`},
		{name: "ErrOtherOrg", method: "GET", path: search + "plan", key: "b_live", wantStatus: 404},
		{name: "ErrScope", method: "GET", path: search + "plan", key: "a_studies_only", wantStatus: 403},
	})
}

// TestSearchQueryParse: words and quoted phrases, spaces inside a phrase collapsed, an
// unclosed quote running to the end.
func TestSearchQueryParse(t *testing.T) {
	for q, want := range map[string][]string{
		`plan`:                      {"plan"},
		`  Plan  "ON   Sundays" x `: {"plan", "on sundays", "x"},
		`"unclosed phrase`:          {"unclosed phrase"},
		`a"b"c`:                     {"a", "b", "c"},
		`"" " "`:                    nil,
		`ÉTÉ`:                       {"été"},
	} {
		var got []string
		for _, term := range research.ParseSearchQuery(q) {
			got = append(got, string(term))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
}

// TestMCPAndA2AAnnotations: the tools and skills are the REST operations' twins.
func TestMCPAndA2AAnnotations(t *testing.T) {
	e := mustServe(t)
	st, iv, at := e.annotatedInterview(t, "We plan on Sundays.")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			schemas := outputSchemas(t, cs)
			res, sc := callTool(t, cs, "create_tag", map[string]any{"study_id": st.ID.String(), "name": "Habit " + era})
			if res.IsError {
				t.Fatalf("create_tag: %v", sc)
			}
			mustConform(t, schemas, "create_tag", sc)
			res, sc = callTool(t, cs, "create_annotation", map[string]any{"interview_id": iv.ID.String(), "message_index": at, "start": 3, "end": 7, "tag_ids": []any{sc["id"]}})
			if res.IsError || sc["text"] != "plan" {
				t.Fatalf("create_annotation: %v", sc)
			}
			mustConform(t, schemas, "create_annotation", sc)
			res, sc = callTool(t, cs, "create_annotation", map[string]any{"interview_id": iv.ID.String(), "message_index": at, "start": 3, "end": 70, "note": "x"})
			if !res.IsError || sc["code"] != "validation_error" {
				t.Fatalf("a span past the message: %v", sc)
			}
			res, sc = callTool(t, cs, "search_transcripts", map[string]any{"study_id": st.ID.String(), "q": "sundays"})
			items, _ := sc["items"].([]any)
			found := false
			for _, it := range items {
				hit, _ := it.(map[string]any)
				found = found || (hit["message_index"] == float64(at) && hit["snippet"] == "We plan on Sundays.")
			}
			if res.IsError || !found {
				t.Fatalf("search_transcripts: %v", sc)
			}
			mustConform(t, schemas, "search_transcripts", sc)
		})
	}

	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	task := mustSend(t, c, skillMessage("list_annotations", map[string]any{"interview_id": iv.ID.String()}), false)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s: %+v", task.Status.State, task.Status.Message)
	}
	var page struct {
		Items []research.AnnotationOut `json:"items"`
	}
	artifactJSON(t, task, "result", &page)
	var rest []research.AnnotationOut
	e.do("GET", "/v1/api/interviews/"+iv.ID.String()+"/annotations", "a_live", "").json(t, &rest)
	a, _ := stdjson.Marshal(page.Items)
	b, _ := stdjson.Marshal(rest)
	if len(page.Items) != 2 || string(a) != string(b) {
		t.Fatalf("skill %s, REST %s", a, b)
	}
}
