package server

import (
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/research"
)

// TestAppTranscriptPermalink: the permalink an interview carries opens its transcript
// with the link's context and timing; rehearsals read the same; the list filters by
// study, status and rehearsal.
func TestAppTranscriptPermalink(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Rota planning", "How do you plan the rota today?", "What goes wrong with it?"))
	e.completeInterview(e.linkFor(st, kv.AudiencePerson, map[string]string{"segment": "night <shift>"}, "private note"), []string{"I use a spreadsheet & a wall chart."})
	other := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Rehearsed", "Why?"))
	e.completeInterview(other.LinkToken, []string{"Because."})

	ivs := e.interviewsOf(st)
	if len(ivs) != 1 {
		t.Fatalf("interviews %+v", ivs)
	}
	iv := ivs[0]
	r := e.do("GET", "/v1/api/interviews/"+iv.ID.String(), "a_live", "")
	var wire research.Interview
	r.json(t, &wire)
	permalink := strings.TrimPrefix(wire.Permalink, testBaseURL)
	if permalink != "/app/interviews/"+iv.ID.String() {
		t.Fatalf("permalink %q", wire.Permalink)
	}
	page := wantPage(t, owner.get(t, permalink), 200, "Interview of Rota planning", "How do you plan the rota today?",
		"I use a spreadsheet &amp; a wall chart.", "Context from the link", "segment", "night &lt;shift&gt;", "One person", "Completed", "Design version")
	if strings.Contains(page, "private note") {
		t.Fatal("the interviewer's note is on the transcript page")
	}
	msgs, err := e.db.FindTranscript(t.Context(), st.Partition(), iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(page, `<li class="msg msg-`); got != len(msgs) {
		t.Fatalf("page shows %d messages, the transcript has %d", got, len(msgs))
	}

	rehearsal := e.interviewsOf(other)[0]
	wantPage(t, owner.get(t, "/app/interviews/"+rehearsal.ID.String()), 200, "Rehearsal of Rehearsed", "Because.")

	all := wantPage(t, owner.get(t, "/app/interviews"), 200, "/app/interviews/"+iv.ID.String(), "/app/interviews/"+rehearsal.ID.String())
	_ = all
	only := wantPage(t, owner.get(t, "/app/interviews?rehearsal=yes"), 200, "/app/interviews/"+rehearsal.ID.String(), `<option value="yes" selected>`)
	if strings.Contains(only, "/app/interviews/"+iv.ID.String()) {
		t.Fatal("rehearsals-only list shows a real interview")
	}
	real := wantPage(t, owner.get(t, "/app/interviews?"+url.Values{"study": {st.ID.String()}, "status": {"completed"}, "rehearsal": {"no"}}.Encode()), 200, "/app/interviews/"+iv.ID.String())
	if strings.Contains(real, "/app/interviews/"+rehearsal.ID.String()) {
		t.Fatal("filtered list shows the other study's rehearsal")
	}
	wantPage(t, owner.get(t, "/app/interviews?status=failed"), 200, "No interviews match these filters.")
	wantPage(t, owner.get(t, "/app/interviews?status=bogus"), 422)
	// Length: the interview took seconds, so it is under 5 minutes and not 30 or more.
	if d := iv.DurationSeconds; d == nil || *d >= 300 {
		t.Fatalf("the interview's duration %v is not under 5 minutes", d)
	}
	wantPage(t, owner.get(t, "/app/interviews?length=lt5"), 200, "/app/interviews/"+iv.ID.String(), `<option value="lt5" selected>`)
	if long := wantPage(t, owner.get(t, "/app/interviews?length=gt30"), 200, "No interviews match these filters."); strings.Contains(long, "/app/interviews/"+iv.ID.String()) {
		t.Fatal("a few seconds' interview is listed as 30 minutes or more")
	}
	wantPage(t, owner.get(t, "/app/interviews?length=forever"), 422)

	// Another organisation's interview is not found; a researcher and a viewer read it.
	b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
	wantPage(t, b.get(t, permalink), 404, "Not found")
	wantPage(t, b.get(t, "/app/interviews/not-an-id"), 404)
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	wantPage(t, member.get(t, permalink), 200)
	wantPage(t, member.get(t, "/app/interviews"), 200, "/app/interviews/"+iv.ID.String())
	viewer := e.mustAppClient(t, "v@example.com", e.orgA.ID, kv.EnvLive, kv.RoleViewer)
	wantPage(t, viewer.get(t, permalink), 200)
	// The test environment holds other data: the live interview is not there.
	test := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvTest, "")
	wantPage(t, test.get(t, permalink), 404)
}

// TestAppMemberSeesNoGoLiveOrExport: a member (researcher) reads a study and its
// interviews but is offered neither Go live, a change of mode, nor exports, and is
// refused when trying them anyway.
func TestAppMemberSeesNoGoLiveOrExport(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Member view", "Why?"))
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	page := wantPage(t, member.get(t, "/app/studies/"+st.ID.String()), 200, "Member view", "Refine", "/app/interviews?study")
	for _, never := range []string{"/golive", "Go live", "/app/exports?study", `value="closed"`} {
		if strings.Contains(page, never) {
			t.Fatalf("member's study page offers %q", never)
		}
	}
	wantPage(t, member.get(t, "/app/studies/"+st.ID.String()+"/golive"), 403)
	wantPage(t, member.post(t, "/app/studies/"+st.ID.String()+"/mode", url.Values{"mode": {"live"}, "confirm": {"yes"}}), 403)
	wantPage(t, member.get(t, "/app/exports"), 403)
	wantPage(t, member.post(t, "/app/exports", url.Values{"study_id": {st.ID.String()}}), 403)
	if got, _ := e.db.FindStudyByID(t.Context(), st.Partition(), st.ID); got.Mode != kv.ModeTest {
		t.Fatalf("member moved the study to %s", got.Mode)
	}
	// Closing is an owner's or admin's call too.
	wantPage(t, member.post(t, "/app/studies/"+st.ID.String()+"/mode", url.Values{"mode": {"closed"}}), 403, "Only owners and admins")
	if got, _ := e.db.FindStudyByID(t.Context(), st.Partition(), st.ID); got.Mode != kv.ModeTest {
		t.Fatalf("member moved the study to %s", got.Mode)
	}
}

// TestAppTranscriptShowsGrowth: a transcript read while the interview runs shows each
// new turn on the next read (a kept render is never served for a longer transcript).
func TestAppTranscriptShowsGrowth(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Growing", "First question?", "Second question?", "Third question?"))
	p := e.participant(st.LinkToken)
	p.open()
	p.mustSay("first answer, in full")
	iv := e.interviewsOf(st)[0]
	path := "/app/interviews/" + iv.ID.String()
	first := wantPage(t, owner.get(t, path), 200, "first answer, in full", "In progress")
	again := wantPage(t, owner.get(t, path), 200)
	if strings.Count(first, `<li class="msg`) != strings.Count(again, `<li class="msg`) || !strings.Contains(again, "first answer, in full") {
		t.Fatal("a second read of an unchanged transcript differs")
	}
	p.mustSay("second answer arrives")
	grown := wantPage(t, owner.get(t, path), 200, "first answer, in full", "second answer arrives")
	if strings.Count(grown, `<li class="msg`) <= strings.Count(first, `<li class="msg`) {
		t.Fatalf("transcript did not grow on the page: %d then %d messages", strings.Count(first, `<li class="msg`), strings.Count(grown, `<li class="msg`))
	}
}
