package server

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"interviewd/kv"
)

// TestAppBrowserBriefEdit edits a live study's brief in a real browser at phone width,
// with no script of the page's doing the work: add a verbatim question and write it,
// move it up, be refused for an empty title (the summary takes the focus, the field
// says what is wrong), then press Enter in the title to save. The study page shows the
// new version as edited; the interview started before keeps its version. Every state
// of the form passes axe, light and dark, at 390×844 and at 1280×800, with no CSP
// refusal.
func TestAppBrowserBriefEdit(t *testing.T) {
	e := mustServeApp(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Rotas", "How do you plan your week?", "What breaks the plan?"))
	e.participant(st.LinkToken).open() // an interview under way on version 1
	studyPath := "/app/studies/" + st.ID.String()
	briefPath := studyPath + "/brief"
	focused := func(b appTab) string {
		return eval[string](b.page, "the focus", `(document.activeElement || {}).id || ''`)
	}
	verbatim := func(b appTab) []string {
		return eval[[]string](b.page, "verbatim questions", `Array.from(document.querySelectorAll('textarea[name=verbatim_questions]')).map(function (t) { return t.value; })`)
	}

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.watchCSP()
	b.open(studyPath)
	b.submit(`a[href="`+briefPath+`"]`, briefPath)
	if got := verbatim(b); !reflect.DeepEqual(got, []string{"How do you plan your week?", "What breaks the plan?"}) {
		t.Fatalf("the form shows %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// Add: the new, empty question has the focus; write it.
	b.submit("#verbatim_questions-add", briefPath)
	b.waitFor("the new question to have the focus", `document.activeElement && document.activeElement.id === 'verbatim_questions-2'`)
	b.do("write the new question", chromedp.KeyEvent("Who helps you plan?"))
	checkAxeAll(t, b)
	// Move it up: its Move up button, at its new place, keeps the focus.
	b.submit("#verbatim_questions-2-up", briefPath)
	b.waitFor("the moved question's button to have the focus", `document.activeElement && document.activeElement.id === 'verbatim_questions-1-up'`)
	want := []string{"How do you plan your week?", "Who helps you plan?", "What breaks the plan?"}
	if got := verbatim(b); !reflect.DeepEqual(got, want) {
		t.Fatalf("after moving up: %q", got)
	}
	if got, _ := e.db.FindStudyByID(t.Context(), st.Partition(), st.ID); got.Version != 1 {
		t.Fatalf("the layout buttons saved version %d", got.Version)
	}

	// An empty title is refused: the summary has the focus and links to the field, which
	// is marked and described by its message; what was typed stays.
	b.fill("#brief-title", " ")
	b.submit(".brief-form .button-row button.primary", briefPath)
	b.waitFor("the error summary to have the focus", `document.activeElement && document.activeElement.id === 'brief-errors'`)
	if got := eval[string](b.page, "title field", `(function(el){return el.getAttribute('aria-invalid') + ' ' + el.getAttribute('aria-describedby')})(document.getElementById('brief-title'))`); got != "true brief-title-hint brief-title-err" {
		t.Fatalf("title field: %q", got)
	}
	if got := b.text("#brief-title-err"); got != "The title must not be empty." {
		t.Fatalf("title error %q", got)
	}
	if got := verbatim(b); !reflect.DeepEqual(got, want) {
		t.Fatalf("a refusal lost what was typed: %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// Enter in the title saves (the form's default button), not the first Move up.
	b.fill("#brief-title", "Night rotas")
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the study page", fmt.Sprintf(`!window.__stale && location.pathname === %q && location.search === '?done=brief' && document.readyState === 'complete'`, studyPath))
	saved, err := e.db.FindStudyByID(t.Context(), st.Partition(), st.ID)
	if err != nil || saved.Version != 2 || saved.Name != "Night rotas" || !reflect.DeepEqual(saved.Brief.VerbatimQuestions, want) {
		t.Fatalf("saved %+v %v", saved, err)
	}
	if got := b.text(".versions li"); !containsAll(got, "Version 2", "Edited directly.", "Night rotas", "Who helps you plan?") {
		t.Fatalf("newest design version reads %q", got)
	}
	if ivs := e.interviewsOf(st); len(ivs) != 1 || ivs[0].DesignVersion != 1 {
		t.Fatalf("the interview under way: %+v, want it on version 1", ivs)
	}
	checkAxeAll(t, b)
	noCSPViolations(t, b)

	// A wide screen: the same form, refusals and all.
	w := e.browserAt(t, 1280, 800)
	w.watchCSP()
	w.signIn("a@example.com")
	w.chooseWorkspace("Org A", "live")
	w.open(briefPath)
	if focused(w) == "brief-errors" {
		t.Fatal("a fresh form opens on an error summary")
	}
	checkAxeAll(t, w)
	checkAxeDark(t, w)
	w.fill("#verbatim_questions-0", "")
	w.fill("#brief-minutes", "ten")
	w.submit(".brief-form .button-row button.primary", briefPath)
	w.waitFor("the error summary", `document.activeElement && document.activeElement.id === 'brief-errors'`)
	if n := eval[int](w.page, "marked fields", `document.querySelectorAll('[aria-invalid=true]').length`); n != 2 {
		t.Fatalf("%d fields marked invalid, want the question and the length", n)
	}
	checkAxeAll(t, w)
	checkAxeDark(t, w)
	noCSPViolations(t, w)
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
