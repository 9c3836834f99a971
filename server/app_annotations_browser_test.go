package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// selectInMessage selects characters [from, to) of message index's text in the page,
// counted over its stored text (not the labels written for screen readers), as a
// person's drag would, and waits for the page's script to fill the highlight form.
func selectInMessage(b appTab, index, from, to int) {
	b.t.Helper()
	js := fmt.Sprintf(`(function () {
		var p = document.querySelector('#m%d p');
		var nodes = [];
		var w = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
		for (var n = w.nextNode(); n; n = w.nextNode()) { if (!n.parentElement.closest('.visually-hidden')) nodes.push(n); }
		function point(at) {
			for (var i = 0; i < nodes.length; i++) {
				var len = Array.from(nodes[i].data).length;
				if (at <= len) return [nodes[i], Array.from(nodes[i].data).slice(0, at).join('').length];
				at -= len;
			}
			return null;
		}
		var a = point(%d), b = point(%d);
		var r = document.createRange();
		r.setStart(a[0], a[1]); r.setEnd(b[0], b[1]);
		var s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
	})()`, index, from, to)
	b.do("select words", chromedp.Evaluate[chromedp.Void](js))
	b.waitFor("the form to take the selection", fmt.Sprintf(`document.getElementById('annotate-start').value === '%d' && document.getElementById('annotate-end').value === '%d' && !document.getElementById('select-bar').hidden`, from, to))
}

// TestAppBrowserAnnotate works with a transcript in a real browser: at phone width,
// select words of a participant's answer, take the selection bar to the form, tag it
// with a new tag and a note; select across a highlight; highlight by typing words (no
// selection); go to the next interview. At desktop width, search the study's
// transcripts from its interviews list. Every state passes axe, light and dark, with
// no CSP refusal and nothing wider than a phone.
func TestAppBrowserAnnotate(t *testing.T) {
	e := mustServeApp(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Weeks", "How do you plan your week?"))
	e.completeInterview(st.LinkToken, []string{"We plan on Sundays with Zoë."})
	e.completeInterview(st.LinkToken, []string{"Mondays, mostly."})
	ivs := e.interviewsOf(st)
	first, second := ivs[len(ivs)-1], ivs[0]
	msgs, err := e.db.FindTranscript(t.Context(), st.Partition(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for i, m := range msgs {
		if m.Speaker == kv.SpeakerParticipant && strings.Contains(m.Text, "Sundays") {
			at = i
		}
	}
	path := "/app/interviews/" + first.ID.String()

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.watchCSP()
	b.open(path)
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// "Sundays" is characters 11 to 18.
	selectInMessage(b, at, 11, 18)
	if got := eval[string](b.page, "the form's words", `document.getElementById('annotate-quote').value + '|' + document.getElementById('annotate-message').value`); got != "Sundays|"+strconv.Itoa(at) {
		t.Fatalf("the form took %q", got)
	}
	checkAxeAll(t, b)
	b.do("take the bar to the form", chromedp.Click(chromedp.CSS("#select-tag")))
	b.waitFor("the form to have the focus", `document.activeElement && document.activeElement.id === 'annotate-new-tag'`)
	b.do("name a tag", chromedp.KeyEvent("Rituals"))
	b.fill("#annotate-note", "every week")
	b.submit("#annotate button[type=submit]", path)
	b.waitFor("the mark", `!!document.querySelector('#m`+strconv.Itoa(at)+` mark.anno')`)
	if got := strings.Join(strings.Fields(b.text("#m"+strconv.Itoa(at)+" mark.anno")), " "); got != "Sundays (highlighted: Rituals; note: every week)" {
		t.Fatalf("the mark reads %q", got)
	}
	anns, _ := e.db.FindAnnotations(t.Context(), st.Partition(), first.ID)
	if len(anns) != 1 || anns[0].Text != "Sundays" || anns[0].Start != 11 || anns[0].Note != "every week" || len(anns[0].TagIDs) != 1 {
		t.Fatalf("saved %+v", anns)
	}
	fitsPhone(t, b)
	checkAxeAll(t, b)
	checkAxeDark(t, b)

	// Across the highlight: "on Sundays" is 8 to 18 however the mark cuts the text.
	selectInMessage(b, at, 8, 18)
	if got := eval[string](b.page, "the words", `document.getElementById('annotate-quote').value`); got != "on Sundays" {
		t.Fatalf("a selection across a mark took %q", got)
	}

	// By keyboard alone: choose the message, type the words, tick the tag.
	b.do("forget the selection", chromedp.Evaluate[chromedp.Void](`window.getSelection().removeAllRanges()`))
	b.fill("#annotate-quote", "")
	b.do("type the words", chromedp.SendKeys("#annotate-quote", "zoë"))
	b.waitFor("typing to forget the selection", `document.getElementById('annotate-start').value === ''`)
	b.do("tick the tag", chromedp.Click(chromedp.CSS(`#annotate input[name=tags]`)))
	b.submit("#annotate button[type=submit]", path)
	b.waitFor("two marks", `document.querySelectorAll('#m`+strconv.Itoa(at)+` mark.anno').length === 2`)
	if got := b.text(".highlight-list"); !containsAll(got, "Sundays", "Zoë", "Rituals", "every week") {
		t.Fatalf("highlights read %q", got)
	}
	checkAxeAll(t, b)
	noCSPViolations(t, b)

	b.submit(`a[rel=next]`, "/app/interviews/"+second.ID.String())
	if got := b.text(".iv-nav"); !strings.Contains(got, "Interview 2 of 2") {
		t.Fatalf("the next interview's place: %q", got)
	}
	checkAxeAll(t, b)

	// A wide screen: search the study from its interviews.
	w := e.browserAt(t, 1280, 800)
	w.watchCSP()
	w.signIn("a@example.com")
	w.chooseWorkspace("Org A", "live")
	w.open("/app/interviews?study=" + st.ID.String())
	checkAxeAll(t, w)
	w.fill("#search-q", `"on sundays"`)
	w.submit(`form[role=search] button[type=submit]`, "/app/studies/"+st.ID.String()+"/search")
	if got := w.text(".hits mark"); got != "on Sundays" {
		t.Fatalf("the hit marks %q", got)
	}
	checkAxeAll(t, w)
	checkAxeDark(t, w)
	href := eval[string](w.page, "the first hit's link", `document.querySelector('.hits a').getAttribute('href')`)
	if !strings.HasPrefix(href, path+"#m") {
		t.Fatalf("the first hit links to %q", href)
	}
	w.submit(".hits a", path)
	w.waitFor("the message targeted", fmt.Sprintf(`location.pathname + location.hash === %q && !!document.querySelector('.msg:target')`, href))
	checkAxeAll(t, w)
	checkAxeDark(t, w)
	noCSPViolations(t, w)
}
