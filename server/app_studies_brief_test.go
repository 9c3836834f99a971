package server

import (
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"interviewd/kv"
)

// briefFormValues is the brief form as a browser posts it: the fields in page order,
// the version it was opened at, and the button pressed.
func briefFormValues(version string, title, minutes string, objectives, screener, verbatim []string, op string) url.Values {
	v := url.Values{"version": {version}, "title": {title}, "estimated_duration_minutes": {minutes}, "op": {op}}
	v["objectives"], v["pre_interview_questions"], v["verbatim_questions"] = objectives, screener, verbatim
	return v
}

// textareas returns the text of the form's textareas named name, in page order.
func textareas(page, name string) []string {
	re := regexp.MustCompile(`<textarea id="[a-z_]+-\d+" name="` + name + `"[^>]*>([^<]*)</textarea>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestAppStudyBriefForm: the brief form edits every part of the brief; its buttons add,
// move and remove items with nothing saved until Save; Save makes the next design
// version, shown on the study page with what changed; refusals come back beside their
// fields with what was typed; a version made meanwhile is not overwritten unseen; a
// closed study offers no form.
func TestAppStudyBriefForm(t *testing.T) {
	e := mustServe(t)
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Rotas", "How do you plan your week?", "What breaks the plan?"))
	base := "/app/studies/" + st.ID.String()
	version := func() int {
		t.Helper()
		got, err := e.db.FindStudyByID(t.Context(), p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Version
	}

	wantPage(t, owner.get(t, base), 200, `href="`+base+`/brief">Edit brief</a>`)
	page := wantPage(t, owner.get(t, base+"/brief"), 200, `action="`+base+`/brief"`, `name="version" value="1"`, `value="Rotas"`,
		`<button type="submit" name="op" value="save" hidden>`, `value="up:verbatim_questions:1"`, `value="add:pre_interview_questions"`)
	if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, []string{"How do you plan your week?", "What breaks the plan?"}) {
		t.Fatalf("verbatim questions on the form: %q", got)
	}
	if !strings.Contains(page, `id="verbatim_questions-0-up" class="secondary small-button" disabled`) || !strings.Contains(page, `id="verbatim_questions-1-down" class="secondary small-button" disabled`) {
		t.Fatal("the first item's Move up and the last's Move down are not disabled")
	}

	objectives := []string{"Learn"}
	verbatim := []string{"How do you plan your week?", "What breaks the plan?"}
	t.Run("OK_LayoutButtonsSaveNothing", func(t *testing.T) {
		page := wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas, typed", "", objectives, nil, verbatim, "add:verbatim_questions")), 200,
			`value="Rotas, typed"`, "Verbatim question 3 added", `id="verbatim_questions-2" name="verbatim_questions" rows="2" maxlength="1000" autofocus>`)
		if got := textareas(page, "verbatim_questions"); len(got) != 3 || got[2] != "" {
			t.Fatalf("after add: %q", got)
		}
		page = wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas", "", objectives, nil, verbatim, "down:verbatim_questions:0")), 200,
			"Verbatim question 1 is now verbatim question 2.", `id="verbatim_questions-1" name="verbatim_questions" rows="2" maxlength="1000" autofocus>`)
		if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, []string{verbatim[1], verbatim[0]}) {
			t.Fatalf("after move down: %q", got)
		}
		three := []string{"A?", "B?", "C?"}
		page = wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas", "", objectives, nil, three, "up:verbatim_questions:2")), 200,
			`id="verbatim_questions-1-up" class="secondary small-button" autofocus>`)
		if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, []string{"A?", "C?", "B?"}) {
			t.Fatalf("after move up: %q", got)
		}
		page = wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas", "", objectives, nil, three, "remove:verbatim_questions:1")), 200,
			"Verbatim question 2 removed")
		if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, []string{"A?", "C?"}) {
			t.Fatalf("after remove: %q", got)
		}
		page = wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas", "", objectives, nil, three, "remove:verbatim_questions:9")), 200)
		if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, three) {
			t.Fatalf("a button naming no item changed the form: %q", got)
		}
		if v := version(); v != 1 {
			t.Fatalf("layout buttons saved version %d", v)
		}
	})

	t.Run("ErrRefusalsBesideTheirFields", func(t *testing.T) {
		long := strings.Repeat("q", kv.BriefMaxItem+1)
		r := owner.post(t, base+"/brief", briefFormValues("1", "  ", "ten", objectives, []string{"Do you plan?"}, []string{"Fine?", long}, "save"))
		page := wantPage(t, r, 422, "Nothing was saved",
			`aria-describedby="brief-title-hint brief-title-err" aria-invalid="true"`, `id="brief-title-err">The title must not be empty.`,
			`id="brief-minutes-err">The estimated length is a whole number of minutes`, `value="ten"`,
			`aria-invalid="true" aria-describedby="verbatim_questions-1-err"`, `id="verbatim_questions-1-err">Verbatim question 2 must be at most 1000 characters.`,
			`href="#verbatim_questions-1"`, `href="#brief-title"`, `id="brief-errors" tabindex="-1" autofocus`, "Do you plan?")
		if got := textareas(page, "verbatim_questions"); !reflect.DeepEqual(got, []string{"Fine?", long}) {
			t.Fatal("the typed questions were not kept")
		}
		page = wantPage(t, owner.post(t, base+"/brief", briefFormValues("1", "Rotas", "0", nil, nil, verbatim, "save")), 422,
			`id="objectives-err">At least 1 objective is needed.`, `href="#objectives-list"`, `id="brief-minutes-err">The estimated duration must be from 1 to 480 minutes.`)
		if v := version(); v != 1 {
			t.Fatalf("a refused form saved version %d", v)
		}
	})

	t.Run("OK_SaveMakesTheNextVersion", func(t *testing.T) {
		// Line breaks come as a browser sends them, CR LF.
		r := owner.post(t, base+"/brief", briefFormValues("1", " Night rotas ", "25", []string{"Learn how rotas are planned", "Learn what breaks them"},
			[]string{"Do you work nights?"}, []string{"What breaks the plan?", "How do you plan your week?\r\nWho helps?"}, "save"))
		wantRedirect(t, r, base+"?done=brief#brief-h")
		saved, err := e.db.FindStudyByID(t.Context(), p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		minutes := 25
		title := "Night rotas"
		want := kv.Brief{Title: &title, Objectives: []string{"Learn how rotas are planned", "Learn what breaks them"}, PreInterviewQuestions: []string{"Do you work nights?"},
			VerbatimQuestions: []string{"What breaks the plan?", "How do you plan your week?\nWho helps?"}, EstimatedDurationMinutes: &minutes}
		if saved.Version != 2 || saved.Name != "Night rotas" || !saved.Brief.Equal(want) {
			t.Fatalf("saved %d %q %+v", saved.Version, saved.Name, saved.Brief)
		}
		wantPage(t, owner.get(t, base+"?done=brief"), 200, "Brief saved", "Version 2", "Edited directly.", "Night rotas", "Do you work nights?",
			`<span class="visually-hidden">Added: </span><span aria-hidden="true">+</span> Do you work nights?`, "About 25 minutes")
		// Saving what is already there makes no version.
		wantRedirect(t, owner.post(t, base+"/brief", briefFormValues("2", "Night rotas", "25", want.Objectives, want.PreInterviewQuestions,
			[]string{"What breaks the plan?", "How do you plan your week?\r\nWho helps?"}, "save")), base+"?done=same")
		if v := version(); v != 2 {
			t.Fatalf("an unchanged save made version %d", v)
		}
	})

	t.Run("ErrVersionChangedMeanwhile", func(t *testing.T) {
		// Someone else saves version 3 while this form is open at version 2.
		if _, _, err := e.db.EditBrief(t.Context(), kv.BriefEdit{Partition: p, StudyID: st.ID, Brief: plainBrief("Colleague's title", "Why?")}); err != nil {
			t.Fatal(err)
		}
		form := briefFormValues("2", "My title", "", objectives, nil, verbatim, "save")
		page := wantPage(t, owner.post(t, base+"/brief", form), 409, "The brief has changed since this edit began", `value="My title"`, `name="version" value="3"`)
		if got, _ := e.db.FindStudyByID(t.Context(), p, st.ID); got.Version != 3 || got.Name != "Colleague's title" {
			t.Fatalf("the colleague's version was overwritten: %d %q", got.Version, got.Name)
		}
		_ = page
		// Saving again, knowingly, replaces it.
		form.Set("version", "3")
		wantRedirect(t, owner.post(t, base+"/brief", form), base+"?done=brief")
		if got, _ := e.db.FindStudyByID(t.Context(), p, st.ID); got.Version != 4 || got.Name != "My title" {
			t.Fatalf("after saving again: %d %q", got.Version, got.Name)
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		closed := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeClosed, plainBrief("Closed", "Why?"))
		cbase := "/app/studies/" + closed.ID.String()
		page := wantPage(t, owner.get(t, cbase+"/brief"), 200, "cannot be edited")
		if strings.Contains(page, `action="`+cbase+`/brief"`) {
			t.Fatal("a closed study's brief page offers the form")
		}
		if strings.Contains(string(owner.get(t, cbase).body), `href="`+cbase+`/brief"`) {
			t.Fatal("a closed study's page offers Edit brief")
		}
		wantPage(t, owner.post(t, cbase+"/brief", briefFormValues("1", "Reopened?", "", objectives, nil, verbatim, "save")), 409, "cannot be edited")
		if got, _ := e.db.FindStudyByID(t.Context(), p, closed.ID); got.Version != 1 {
			t.Fatalf("a closed study got version %d", got.Version)
		}
	})

	t.Run("ErrOtherOrganisation", func(t *testing.T) {
		b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
		wantPage(t, b.get(t, base+"/brief"), 404)
		wantPage(t, b.post(t, base+"/brief", briefFormValues("4", "Mine now", "", objectives, nil, verbatim, "save")), 404)
		if got, _ := e.db.FindStudyByID(t.Context(), p, st.ID); got.Name != "My title" {
			t.Fatalf("another organisation renamed the study to %q", got.Name)
		}
	})
}
