package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// TestAppBrowserResearch walks a researcher's day in a real browser at phone width:
// create a study from guidance and watch the status turn into the study page; go live
// through the confirmation; copy the invite link; open it in a second browser and
// finish an interview; read its transcript at the permalink; a researcher sees no
// Go-live, mode or export controls and reads the transcript too. Every page passes axe.
func TestAppBrowserResearch(t *testing.T) {
	e := mustServeApp(t)
	e.mustMember(e.orgA.ID, "m@example.com", kv.RoleMember)
	b := e.signedIn(t, "a@example.com", "Org A", "live")

	b.open("/app/studies")
	checkAxe(t, b)
	b.submit(`a[href="/app/studies/new"]`, "/app/studies/new")
	checkAxe(t, b)
	b.fill("#guidance", "Understand how night-shift nurses plan their week and what breaks their rota.")
	// The authoring page polls and turns into the study page by itself when ready.
	b.submit("form[action='/app/studies'] button[type=submit]", "/app/studies/")
	b.waitFor("the study page", `/^\/app\/studies\/[0-9a-f-]{36}$/.test(location.pathname) && document.readyState === 'complete'`)
	studyPath := eval[string](b.page, "path", `location.pathname`)
	if got := b.text(".brief"); !strings.Contains(got, "Verbatim questions") {
		t.Fatalf("study page brief: %q", got)
	}
	checkAxe(t, b)
	checkAxeDark(t, b)
	fitsPhone(t, b)

	// Go live: the study page offers a link to the confirmation, which asks once more.
	b = e.signedIn(t, "a@example.com", "Org A", "live")
	b.open(studyPath)
	b.submit(`a[href="`+studyPath+`/golive"]`, studyPath+"/golive")
	checkAxe(t, b)
	b.submit(`form[action="`+studyPath+`/mode"] button[type=submit]`, studyPath)
	b.waitFor("the live badge", `document.querySelector('.page-head .mode').textContent === 'live'`)
	checkAxe(t, b)

	// The invite link: a copy button (the clipboard may be refused headless; either way
	// the page says what happened) and a QR code image.
	invite := eval[string](b.page, "invite URL", `document.getElementById('invite-url').value`)
	b.do("copy", chromedp.Click(chromedp.CSS(`button[data-copy="#invite-url"]`)))
	b.waitFor("the copy status", `document.getElementById('invite-copy-status').textContent !== ''`)
	if !eval[bool](b.page, "QR", `(function(){var i=document.querySelector('img.invite-qr');return !!i && i.complete && i.naturalWidth > 100})()`) {
		t.Fatal("no QR code image of the invite link")
	}
	path := strings.TrimPrefix(invite, testBaseURL)
	if !strings.HasPrefix(path, "/i/") {
		t.Fatalf("invite URL %q", invite)
	}

	// A participant finishes an interview in a second browser.
	p := page{t: t, ctx: e.browser(t).ctx}
	p.do("open the invite", chromedp.Navigate(e.url+path), chromedp.WaitVisible(chromedp.CSS("#start")))
	p.do("start", chromedp.Click(chromedp.CSS("#start")))
	phase := p.phase()
	for i := 0; phase == "ready"; i++ {
		if i > 40 {
			t.Fatalf("interview did not end: %q", p.lines())
		}
		phase = p.answer(answerFor(i))
	}
	if phase != "done" {
		t.Fatalf("participant page ended %s", phase)
	}

	// The interviews list leads to the transcript at the permalink. (A fresh browser for
	// each part: a browser session has browserTimeout in all, and axe runs take a while
	// on a busy machine.)
	b = e.signedIn(t, "a@example.com", "Org A", "live")
	b.open("/app/interviews")
	checkAxe(t, b)
	b.submit(`table.interviews a[href^="/app/interviews/"]`, "/app/interviews/")
	permalink := eval[string](b.page, "path", `location.pathname`)
	st := e.interviewsOf(studyOf(t, e.testEnv, studyPath))
	if len(st) != 1 || permalink != "/app/interviews/"+st[0].ID.String() {
		t.Fatalf("transcript at %s; interviews %+v", permalink, st)
	}
	shown := eval[int](b.page, "messages", `document.querySelectorAll('.transcript .msg').length`)
	tr, err := e.db.FindTranscript(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, st[0].ID)
	if err != nil || shown != len(tr) || shown < 4 {
		t.Fatalf("transcript page shows %d messages, stored %d (%v)", shown, len(tr), err)
	}
	if !strings.Contains(b.text(".transcript"), answerFor(0)) {
		t.Fatalf("transcript lacks the first answer")
	}
	fitsPhone(t, b)
	checkAxe(t, b)
	checkAxeDark(t, b)

	// Exports and Settings → Redaction and plugins pass axe too.
	b = e.signedIn(t, "a@example.com", "Org A", "live")
	b.open("/app/exports")
	checkAxe(t, b)
	b.submit("form[action='/app/exports'] button[type=submit]", "/app/exports/")
	b.waitFor("the export to be ready", `!document.getElementById('export-download').hidden`)
	checkAxe(t, b)
	b.open("/app/settings/redaction")
	checkAxe(t, b)

	// A researcher (member): the study without Go live, mode or export controls, and
	// the transcript readable.
	m := e.signedIn(t, "m@example.com", "Org A", "live")
	m.open(studyPath)
	html := eval[string](m.page, "html", `document.querySelector('main').innerHTML`)
	for _, never := range []string{"/golive", "Go live", "/app/exports?study", `action="` + studyPath + `/mode"`} {
		if strings.Contains(html, never) {
			t.Fatalf("researcher's study page offers %q", never)
		}
	}
	if !strings.Contains(html, "/app/interviews?study") {
		t.Fatal("researcher's study page does not lead to its interviews")
	}
	checkAxe(t, m)
	m.open(permalink)
	if !strings.Contains(m.text("main"), answerFor(0)) {
		t.Fatalf("researcher on a transcript: %q", m.text("main"))
	}
	checkAxe(t, m)
}

// TestAppBrowserSimulation: a simulation's transcript grows on the page while it runs,
// with no reload, and the page passes axe.
func TestAppBrowserSimulation(t *testing.T) {
	e := mustServeApp(t)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Rehearse", "How do you plan the week?", "What breaks the plan?", "Who helps?"))
	b := e.signedIn(t, "a@example.com", "Org A", "test")
	b.open("/app/studies/" + st.ID.String())
	b.fill("#persona", "A nurse on night shifts")
	b.submit(fmt.Sprintf(`form[action="/app/studies/%s/simulate"] button[type=submit]`, st.ID), "/app/simulations/")
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__same = true`))
	b.waitFor("the simulation to finish", `document.getElementById('sim-status').textContent.indexOf('Finished') >= 0`)
	if !eval[bool](b.page, "same page", `window.__same === true`) {
		t.Fatal("the page reloaded instead of growing the transcript")
	}
	if n := eval[int](b.page, "turns", `document.querySelectorAll('#sim-transcript .msg').length`); n < 2 {
		t.Fatalf("%d messages shown", n)
	}
	checkAxe(t, b)
}

// TestAppBrowserRefineFailure: a refine the engine cannot apply turns the waiting page
// into one that says why, with the words the researcher typed back in the form; the
// page passes axe.
func TestAppBrowserRefineFailure(t *testing.T) {
	e := mustServeApp(t)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Rotas", "How do you plan the week?", "What breaks the plan?"))
	b := e.signedIn(t, "a@example.com", "Org A", "test")
	b.open("/app/studies/" + st.ID.String())
	typed := "Add a question about flour prices, then change objective 1."
	b.fill("#refine-guidance", typed)
	b.submit(fmt.Sprintf(`form[action="/app/studies/%s/refine"] button[type=submit]`, st.ID), "/app/studies/jobs/")
	b.waitFor("the reason and the form", `!!document.getElementById('retry-guidance') && document.readyState === 'complete'`)
	if got := eval[string](b.page, "typed text", `document.getElementById('retry-guidance').value`); got != typed {
		t.Fatalf("the form holds %q, want what was typed: %q", got, typed)
	}
	if got := b.text("#authoring-status"); !strings.HasPrefix(got, `Nothing was changed: the built-in engine could not apply "change objective 1"`) {
		t.Fatalf("the page says %q", got)
	}
	checkAxe(t, b)
}

// studyOf returns the study whose page is at path.
func studyOf(t *testing.T, e *testEnv, path string) kv.Study {
	t.Helper()
	st, err := e.db.FindStudyByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, mustID(t, strings.TrimPrefix(path, "/app/studies/")))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fitsPhone fails when the page is wider than the 390-pixel phone it is shown on (a
// horizontal scroll bar on a phone).
func fitsPhone(t *testing.T, b appTab) {
	t.Helper()
	if w := eval[int](b.page, "width", `document.documentElement.scrollWidth`); w > phoneWidth {
		t.Fatalf("%s is %d px wide on a %d px phone", b.location(), w, phoneWidth)
	}
}
