package server

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

// annotationParamFixtures adds the app's tag_id and annotation_id: a tag of each
// interview's study and a highlight of its participant's answer.
func (e *testEnv) annotationParamFixtures(f *appFixtures, a, b kv.Interview) {
	e.t.Helper()
	for _, side := range []struct {
		iv  kv.Interview
		out map[string]string
	}{{a, f.own}, {b, f.other}} {
		tag, ann := e.mustHighlight(side.iv, "Fixture")
		side.out["tag_id"], side.out["annotation_id"] = tag.ID.String(), ann.ID.String()
	}
}

// mustHighlight tags the first word of the interview's first participant message.
func (e *testEnv) mustHighlight(iv kv.Interview, tagName string) (kv.Tag, kv.Annotation) {
	e.t.Helper()
	ctx := context.Background()
	p := iv.Partition()
	msgs, err := e.db.FindTranscript(ctx, p, iv.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	at := -1
	for i, m := range msgs {
		if m.Speaker == kv.SpeakerParticipant && at < 0 {
			at = i
		}
	}
	if at < 0 {
		e.t.Fatalf("no participant message in %+v", msgs)
	}
	tag, err := e.db.CreateTag(ctx, p, iv.StudyID, tagName)
	if err != nil {
		e.t.Fatal(err)
	}
	word := strings.Fields(msgs[at].Text)[0]
	ann, err := e.db.CreateAnnotation(ctx, kv.AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: at, Start: 0, End: len([]rune(word)), TagIDs: []kv.ID{tag.ID}})
	if err != nil {
		e.t.Fatal(err)
	}
	return tag, ann
}

// TestAppAnnotations: per role, over the real app: an owner and an admin highlight
// (from a selection's offsets, or by typing the words), tag, rename and delete; a
// researcher (member) works the same way; a viewer reads the transcript and searches
// but is refused every post and shown no control to change anything; the transcript
// shows marks and neighbours.
func TestAppAnnotations(t *testing.T) {
	e := mustServe(t)
	ctx := context.Background()
	e.mustMember(e.orgA.ID, "admin@a.example", kv.RoleAdmin)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	e.mustMember(e.orgA.ID, "viewer@a.example", kv.RoleViewer)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	admin := e.mustAppSession("admin@a.example", e.orgA.ID, kv.EnvLive)
	member := e.mustAppSession("member@a.example", e.orgA.ID, kv.EnvLive)
	viewer := e.mustAppSession("viewer@a.example", e.orgA.ID, kv.EnvLive)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Weeks", "How do you plan your week?"))
	e.completeInterview(st.LinkToken, []string{"We plan on Sundays with Zoë."})
	e.completeInterview(st.LinkToken, []string{"Mondays, mostly."})
	ivs := e.interviewsOf(st)
	first, second := ivs[len(ivs)-1], ivs[0] // interviewsOf lists newest first
	msgs, _ := e.db.FindTranscript(ctx, st.Partition(), first.ID)
	at := -1
	for i, m := range msgs {
		if m.Speaker == kv.SpeakerParticipant && strings.Contains(m.Text, "Sundays") {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("transcript %+v", msgs)
	}
	base := "/app/interviews/" + first.ID.String()
	idx := strconv.Itoa(at)

	r := e.appDo("GET", base, &owner, nil, false)
	if r.status != 200 || !strings.Contains(string(r.body), `href="/app/interviews/`+second.ID.String()+`" rel="next"`) || !strings.Contains(string(r.body), "Interview 1 of 2") {
		t.Fatalf("transcript: %d %.2000s", r.status, r.body)
	}

	// The owner adds a tag, then highlights "Sundays" from a selection (characters 11
	// to 18) with it; the admin highlights "Zoë" by typing it, with a new tag.
	if r := e.appDo("POST", base+"/tags", &owner, url.Values{"name": {"Rituals"}}, true); r.status != 303 || !strings.Contains(r.header.Get("Location"), "done=tag_added") {
		t.Fatalf("add tag: %d %s", r.status, r.body)
	}
	tags, _ := e.db.FindTags(ctx, st.Partition(), st.ID)
	if len(tags) != 1 {
		t.Fatalf("tags %+v", tags)
	}
	r = e.appDo("POST", base+"/annotations", &owner, url.Values{"message": {idx}, "quote": {"Sundays"}, "start": {"11"}, "end": {"18"}, "tags": {tags[0].ID.String()}, "note": {"weekly"}}, true)
	if r.status != 303 || r.header.Get("Location") != base+"?done=highlighted#m"+idx {
		t.Fatalf("highlight a selection: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	r = e.appDo("POST", base+"/annotations", &admin, url.Values{"message": {idx}, "quote": {"zoë"}, "new_tag": {"People"}, "note": {""}}, true)
	if r.status != 303 {
		t.Fatalf("highlight typed words: %d %s", r.status, r.body)
	}
	anns, _ := e.db.FindAnnotations(ctx, st.Partition(), first.ID)
	if len(anns) != 2 || anns[0].Text != "Sundays" || anns[1].Text != "Zoë" || len(anns[1].TagIDs) != 1 {
		t.Fatalf("annotations %+v", anns)
	}
	r = e.appDo("GET", base, &owner, nil, false)
	body := string(r.body)
	for _, w := range []string{`<mark class="anno">Sundays<span class="visually-hidden"> (highlighted: Rituals; note: weekly)</span></mark>`,
		`<mark class="anno">Zoë<span class="visually-hidden"> (highlighted: People)</span></mark>`, `<span class="tag-name">People</span>`} {
		if !strings.Contains(body, w) {
			t.Fatalf("transcript lacks %q:\n%.4000s", w, body)
		}
	}

	// Refusals: a selection that does not say what it selected, words not in the
	// message, a tag name taken.
	r = e.appDo("POST", base+"/annotations", &owner, url.Values{"message": {idx}, "quote": {"Mondays"}, "start": {"10"}, "end": {"17"}, "note": {"x"}}, true)
	if r.status != 422 || !strings.Contains(string(r.body), "The text is not what the message says") || !strings.Contains(string(r.body), "Mondays</textarea>") {
		t.Fatalf("a mismatched selection: %d %.3000s", r.status, r.body)
	}
	r = e.appDo("POST", base+"/annotations", &owner, url.Values{"message": {idx}, "quote": {"Tuesdays"}, "note": {"x"}}, true)
	if r.status != 422 || !strings.Contains(string(r.body), "These words are not in the message") {
		t.Fatalf("words not in the message: %d %.3000s", r.status, r.body)
	}
	r = e.appDo("POST", base+"/tags", &owner, url.Values{"name": {"rituals"}}, true)
	if r.status != 422 || !strings.Contains(string(r.body), "already has a tag of this name") {
		t.Fatalf("a taken tag name: %d %.3000s", r.status, r.body)
	}

	// Search: the study's search page finds the message, highlighted.
	r = e.appDo("GET", "/app/studies/"+st.ID.String()+"/search?q=%22on+sundays%22", &admin, nil, false)
	if r.status != 200 || !strings.Contains(string(r.body), "<mark>on Sundays</mark>") || !strings.Contains(string(r.body), base+"#m"+idx) {
		t.Fatalf("search: %d %.3000s", r.status, r.body)
	}
	if r := e.appDo("GET", "/app/interviews?study="+st.ID.String(), &owner, nil, false); !strings.Contains(string(r.body), `action="/app/studies/`+st.ID.String()+`/search"`) {
		t.Fatalf("the interviews list of one study offers no search: %.2000s", r.body)
	}

	// A viewer reads the transcript and searches, sees no control to change anything,
	// and is refused every change on the server.
	r = e.appDo("GET", base, &viewer, nil, false)
	if r.status != 200 || !strings.Contains(string(r.body), "<mark") || strings.Contains(string(r.body), `action="`+base+`/annotations"`) ||
		strings.Contains(string(r.body), `action="`+base+`/tags"`) || strings.Contains(string(r.body), "/delete\"") {
		t.Fatalf("viewer's transcript: %d %.3000s", r.status, r.body)
	}
	if r := e.appDo("GET", "/app/studies/"+st.ID.String()+"/search?q=plan", &viewer, nil, false); r.status != 200 {
		t.Fatalf("viewer's search: %d", r.status)
	}
	for _, c := range []struct {
		path string
		form url.Values
	}{{base + "/annotations", url.Values{"message": {idx}, "quote": {"We"}, "note": {"x"}}},
		{base + "/tags", url.Values{"name": {"Mine"}}}, {base + "/tags/" + tags[0].ID.String() + "/delete", nil},
		{base + "/annotations/" + anns[0].ID.String() + "/delete", nil}} {
		if r := e.appDo("POST", c.path, &viewer, c.form, true); r.status != 403 {
			t.Fatalf("viewer POST %s: %d", c.path, r.status)
		}
	}
	if got, _ := e.db.FindAnnotations(ctx, st.Partition(), first.ID); len(got) != 2 {
		t.Fatalf("a viewer's refused posts changed the highlights: %+v", got)
	}
	// A researcher adds a tag, and sees the controls.
	if r := e.appDo("POST", base+"/tags", &member, url.Values{"name": {"Mine"}}, true); r.status != 303 {
		t.Fatalf("researcher's tag: %d %s", r.status, r.body)
	}
	if r := e.appDo("GET", base, &member, nil, false); r.status != 200 || !strings.Contains(string(r.body), `action="`+base+`/annotations"`) {
		t.Fatalf("researcher's transcript: %d", r.status)
	}

	// Rename, then delete the tag (its highlight had a note: it stays), then a highlight.
	if r := e.appDo("POST", base+"/tags/"+tags[0].ID.String(), &admin, url.Values{"name": {"Habits"}}, true); r.status != 303 {
		t.Fatalf("rename: %d %s", r.status, r.body)
	}
	if r := e.appDo("POST", base+"/tags/"+tags[0].ID.String()+"/delete", &owner, nil, true); r.status != 303 {
		t.Fatalf("delete tag: %d %s", r.status, r.body)
	}
	if r := e.appDo("POST", base+"/annotations/"+anns[1].ID.String()+"/delete", &owner, nil, true); r.status != 303 {
		t.Fatalf("delete highlight: %d %s", r.status, r.body)
	}
	got, _ := e.db.FindAnnotations(ctx, st.Partition(), first.ID)
	if len(got) != 1 || got[0].Note != "weekly" || len(got[0].TagIDs) != 0 {
		t.Fatalf("after deleting the tag and a highlight: %+v", got)
	}
}
