package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
	"interviewd/server/app"
)

// TestAppBrowserRecruitment runs a study's recruitment in a real browser at phone
// width: a pasted CSV of two people becomes two labelled person links, each mailed
// through the SMTP server; a CSV without a label is refused with its row and column;
// a link is disabled (its page then says the study is closed) and enabled again; a
// quota of one completed interview pauses the study, which the recruitment page and
// the participant page both say; the interviews list shows each interview's link
// label, context and modality and filters by link. Every page passes axe (light and
// dark) with no CSP refusal, at 390×844 and at 1280×800.
func TestAppBrowserRecruitment(t *testing.T) {
	e := mustServeApp(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Onboarding", "How did your first week go?"))
	linksPath := "/app/studies/" + st.ID.String() + "/links"
	setCSV := func(b appTab, csv string) {
		b.do("paste the CSV", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('csv-text').value = %q`, csv)))
	}

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.watchCSP()
	b.open(linksPath)
	if got := b.text(".empty"); !strings.Contains(got, "No participant links yet") {
		t.Fatalf("an empty recruitment page reads %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// A CSV without a label on its second person: nothing is created, the problem is
	// named by row and column, and the pasted text stays.
	bad := "label,company,plan\nDana,Acme,enterprise\n,Beta,free\n"
	setCSV(b, bad)
	// The form posts from the page's script (its CSRF token rides in a header); a
	// refusal replaces the page's main part in place.
	b.do("create the links", chromedp.Click(chromedp.CSS(`form[action$="/links/batch"] button[type=submit]`)))
	b.waitFor("the problems", `document.getElementById('csv-problems') !== null`)
	if got := b.text("#csv-problems"); !strings.Contains(got, `Row 3, column "label": each person needs a label`) {
		t.Fatalf("problems read %q", got)
	}
	if got := eval[string](b.page, "the kept CSV", `document.getElementById('csv-text').value`); got != bad {
		t.Fatalf("the pasted CSV came back as %q", got)
	}
	if ls, _ := e.db.FindLinkStatuses(t.Context(), st.Partition(), st.ID); len(ls) != 0 {
		t.Fatalf("a refused CSV created %d links", len(ls))
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)

	// The good CSV, mailed: two person links, two invitations with their URLs.
	setCSV(b, "label,company,plan,email\nDana,Acme,enterprise,dana@example.com\nLee,Beta,free,lee@example.com\n")
	b.do("tick email", chromedp.Click(chromedp.CSS(`input[name=send_email]`)))
	b.fill("#sender-name", "Acme research")
	b.submit(`form[action$="/links/batch"] button[type=submit]`, linksPath)
	b.waitFor("the created notice", `(document.querySelector('.flash')||{}).innerText && document.querySelector('.flash').innerText.indexOf('2 links created') === 0`)
	ls, err := e.db.FindLinkStatuses(t.Context(), st.Partition(), st.ID)
	if err != nil || len(ls) != 2 {
		t.Fatalf("%d links, %v", len(ls), err)
	}
	tokens := map[string]string{}
	for _, l := range ls {
		tokens[l.Label] = l.Token
		if l.Audience != kv.AudiencePerson || l.Context["email"] != "" {
			t.Fatalf("link %+v", l.Link)
		}
	}
	for label, to := range map[string]string{"Dana": "dana@example.com", "Lee": "lee@example.com"} {
		m := e.smtp.Next(t, to)
		if got := m.Link(testBaseURL + "/i/"); got != testBaseURL+"/i/"+tokens[label] {
			t.Fatalf("%s's mail links %q", label, got)
		}
	}
	if got := b.text(".link-status-list"); !containsAll(got, "Dana", "Lee", "company=Acme", "Not opened") {
		t.Fatalf("the links read %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// The download carries every link with its URL.
	csv := e.appDoAs(t, b, "GET", linksPath+"/csv")
	if csv.status != 200 || !strings.Contains(string(csv.body), "Dana,"+testBaseURL+"/i/"+tokens["Dana"]) {
		t.Fatalf("download: %d %s", csv.status, csv.body)
	}

	// Disable Lee's link: the participant sees the closed page; enable it again.
	lee := kv.LinkIDOf(tokens["Lee"]).String()
	b.submit(`form[action$="/links/`+lee+`"] button[value=disable]`, linksPath)
	if got := b.text(".flash"); !strings.HasPrefix(got, "Link disabled") {
		t.Fatalf("notice %q", got)
	}
	if got := b.text(".link-status.is-disabled"); !strings.Contains(got, "Disabled") {
		t.Fatalf("the disabled link reads %q", got)
	}
	checkAxeAll(t, b)
	p := e.browser(t)
	p.open("/i/" + tokens["Lee"])
	if got := p.text("h1"); got != "This study has closed" {
		t.Fatalf("a disabled link's page says %q", got)
	}
	checkAxeAll(t, p)
	b.submit(`form[action$="/links/`+lee+`"] button[value=enable]`, linksPath)
	if got := b.text(".flash"); !strings.HasPrefix(got, "Link enabled") {
		t.Fatalf("notice %q", got)
	}

	// A quota of one: Dana's completed interview pauses the study.
	b.fill("#quota", "1")
	b.submit(`form[action$="/quota"] button[type=submit]`, linksPath)
	e.completeInterview(tokens["Dana"], []string{"It went well."})
	b.open(linksPath)
	if got := b.text("#quota-h + p"); !containsAll(got, "1 of 1 completed", "Reached") {
		t.Fatalf("the quota reads %q", got)
	}
	if got := b.text(".link-status-list"); !strings.Contains(got, "Completed") {
		t.Fatalf("Dana's link reads %q", got)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	p.open("/i/" + tokens["Lee"])
	if got := p.text("h1"); got != "This study has all the interviews it needs" {
		t.Fatalf("after the quota the page says %q", got)
	}
	checkAxeAll(t, p)

	// The interviews list: the link's label, its context and the modality; filtered by
	// Dana's link.
	list := "/app/interviews?study=" + st.ID.String() + "&link=" + kv.LinkIDOf(tokens["Dana"]).String()
	b.open(list)
	if got := b.text("table.interviews tbody"); !containsAll(got, "Dana", "company=Acme", "plan=enterprise", "Completed", "Text") {
		t.Fatalf("the interviews list reads %q", got)
	}
	if n := eval[int](b.page, "rows", `document.querySelectorAll('table.interviews tbody tr').length`); n != 1 {
		t.Fatalf("%d rows for Dana's link", n)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)
	noCSPViolations(t, b)

	// A wide screen: the same pages.
	w := e.browserAt(t, 1280, 800)
	w.watchCSP()
	w.signIn("a@example.com")
	w.chooseWorkspace("Org A", "live")
	for _, path := range []string{linksPath, "/app/interviews?study=" + st.ID.String() + "&context=acme"} {
		w.open(path)
		checkAxeAll(t, w)
		checkAxeDark(t, w)
		noCSPViolations(t, w)
	}
	if got := w.text("table.interviews tbody"); !strings.Contains(got, "Dana") {
		t.Fatalf("the context filter found %q", got)
	}
}

// appDoAs sends a request with the browser's session cookie.
func (e *appBrowserEnv) appDoAs(t *testing.T, b appTab, method, path string) response {
	t.Helper()
	return e.appDo(method, path, &appUser{token: b.cookie(app.SessionCookie)}, nil, false)
}
