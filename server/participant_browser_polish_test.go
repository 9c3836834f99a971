package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"interviewd/kv"
	"interviewd/moderator"
)

// The participant page's finish, checked in a real browser on a phone (390×844) and a
// desktop (1280×800) window: what the header says, the progress, the hint beside the
// answer box, the skip control, the focus ring, the footer, the rehearsal marker, the
// notices, and the interviewer's manners as the participant sees them.

var browserWindows = []struct {
	name          string
	width, height int64
}{{"Phone", 390, 844}, {"Desktop", 1280, 800}}

// box is an element's bounding box in CSS pixels.
type box struct {
	Left, Top, Right, Bottom float64
}

func (b box) overlaps(o box) bool {
	return b.Left < o.Right && o.Left < b.Right && b.Top < o.Bottom && o.Top < b.Bottom
}

func (b box) empty() bool { return b.Right-b.Left < 1 || b.Bottom-b.Top < 1 }

func (p page) box(sel string) box {
	p.t.Helper()
	return eval[box](p, "measure "+sel, fmt.Sprintf(`(function(){var r=document.querySelector(%q).getBoundingClientRect();return {Left:r.left,Top:r.top,Right:r.right,Bottom:r.bottom}})()`, sel))
}

func (p page) text(sel string) string {
	p.t.Helper()
	return eval[string](p, "read "+sel, fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.textContent.trim():''})()`, sel))
}

// ring is the focus indicator of the focused element, read from computed styles.
type ring struct {
	ID       string  // the focused element
	Style    string  // outline-style
	Width    float64 // outline-width, px
	Color    string  // outline-color as computed
	Backdrop string  // the first opaque background behind it
	Ratio    float64 // contrast of the ring against that background (WCAG formula)
}

// ringJS measures the focus ring of document.activeElement: its outline against the
// first opaque background among its ancestors (the ring is drawn outside the element).
const ringJS = `(function(){
	function rgba(c) {
		var m = c.match(/^rgba?\(([^)]*)\)$/);
		if (m) { var p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; }
		m = c.match(/^color\(srgb ([^)]*)\)$/);
		if (m) { var q = m[1].split(/[\s\/]+/).filter(Boolean).map(Number); return [q[0]*255, q[1]*255, q[2]*255, q.length > 3 ? q[3] : 1]; }
		return null;
	}
	function lum(c) {
		var a = c.slice(0, 3).map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
		return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2];
	}
	var el = document.activeElement, cs = getComputedStyle(el);
	var bg = null, bgText = '';
	for (var e = el.parentElement; e; e = e.parentElement) {
		var c = rgba(getComputedStyle(e).backgroundColor);
		if (c && c[3] >= 1) { bg = c; bgText = getComputedStyle(e).backgroundColor; break; }
	}
	if (!bg) { bg = [255, 255, 255, 1]; bgText = 'canvas'; }
	var rc = rgba(cs.outlineColor), ratio = 0;
	if (rc && rc[3] >= 1) {
		var a = lum(rc), b = lum(bg);
		ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
	}
	return {ID: el.id, Style: cs.outlineStyle, Width: parseFloat(cs.outlineWidth) || 0, Color: cs.outlineColor, Backdrop: bgText, Ratio: ratio};
})()`

// checkRing asserts the focused element is id and shows a solid ring of at least 2 px
// with a contrast of at least 3:1 (WCAG 2.2, 1.4.11 and 2.4.13).
func (p page) checkRing(id string) {
	p.t.Helper()
	r := eval[ring](p, "measure the focus ring", ringJS)
	if r.ID != id {
		p.t.Fatalf("focus is on #%s, want #%s", r.ID, id)
	}
	if r.Style == "none" || r.Width < 2 || r.Ratio < 3 {
		p.t.Fatalf("#%s focus ring %s %.1fpx %s on %s: contrast %.2f:1, want a visible ring ≥ 3:1", id, r.Style, r.Width, r.Color, r.Backdrop, r.Ratio)
	}
}

// tabTo presses Tab (shift-Tab when back) until id has the focus.
func (p page) tabTo(id string, back bool) {
	p.t.Helper()
	var opts []chromedp.KeyOption
	if back {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	for i := 0; i < 12; i++ {
		if eval[string](p, "read the focus", `document.activeElement ? document.activeElement.id : ''`) == id {
			return
		}
		p.do("press Tab", chromedp.KeyEvent(kb.Tab, opts...))
	}
	p.t.Fatalf("Tab never reached #%s", id)
}

// lastInterviewer returns the newest interviewer message shown.
func (p page) lastInterviewer() string {
	p.t.Helper()
	return eval[string](p, "read the last question", `(function(){var m=document.querySelectorAll('#log .msg.interviewer');return m.length?m[m.length-1].textContent:''})()`)
}

// checkFooter asserts the page's footer reads "Powered by interviewd", is visible, and
// that nothing on the page links anywhere.
func (p page) checkFooter(sel string) {
	p.t.Helper()
	if !p.visible(sel) || p.text(sel) != "Powered by interviewd" {
		p.t.Fatalf("footer %s: visible %v, text %q", sel, p.visible(sel), p.text(sel))
	}
	if n := eval[int](p, "count links", `document.querySelectorAll('a[href], area[href]').length`); n != 0 {
		p.t.Fatalf("the page has %d links", n)
	}
}

func TestParticipantBrowserPolish(t *testing.T) {
	chromium := chromiumPath(t)
	e := mustServe(t)
	title := "How ward nurses plan their rotas"
	researcherMinutes := 45
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions:    []string{"What is your role?"},
		VerbatimQuestions:        []string{"How do you plan a rota?", "What gets in the way?", "Is there anything else you would like to share about rotas?"},
		EstimatedDurationMinutes: &researcherMinutes,
	}
	questions, minutes := moderator.PlannedLength(brief, nil)

	for _, w := range browserWindows {
		t.Run(w.name, func(t *testing.T) {
			t.Run("OK_Interview", func(t *testing.T) {
				st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
				ctx, _ := newBrowserAt(t, chromium, w.width, w.height)
				p := page{t: t, ctx: ctx}
				p.do("open the link", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")))

				// The welcome: the length from the design, not the study's 45 minutes.
				want := fmt.Sprintf("%d questions, about %d minutes", questions, minutes)
				if got := p.text("#length"); got != want {
					t.Fatalf("welcome length %q, want %q", got, want)
				}
				if got := p.text("#status"); got != "Ready when you are" {
					t.Fatalf("header before starting: %q", got)
				}
				if p.visible("#rehearsal") || p.visible("#progress-text") {
					t.Fatal("a live study shows the rehearsal marker or a progress before starting")
				}
				p.checkFooter("#main > .brand-foot")
				p.tabTo("start", false)
				p.checkRing("start")
				p.screenshot(w.name + "-welcome")

				// The header never says "Connecting…" once a message is on screen.
				eval[bool](p, "watch the header", `(function(){
					window.__stale = [];
					var status = document.getElementById('status');
					new MutationObserver(function () {
						var n = document.querySelectorAll('#log .msg').length;
						if (n > 0 && /Connecting/.test(status.textContent)) { window.__stale.push(status.textContent + ' with ' + n + ' messages'); }
					}).observe(document.getElementById('app'), {subtree: true, childList: true, characterData: true});
					return true;
				})()`)
				p.do("start", chromedp.Click(chromedp.CSS("#start")))
				if p.phase() != "ready" {
					t.Fatal("the interview did not start")
				}
				if stale := eval[[]string](p, "read the header log", `window.__stale`); len(stale) != 0 {
					t.Fatalf("the header said %q while the conversation was shown", stale)
				}
				if got := p.text("#status"); got != "Your turn" {
					t.Fatalf("header when ready: %q", got)
				}
				progress := func(n int) {
					t.Helper()
					want := fmt.Sprintf("Question %d of %d", n, questions)
					if !p.visible("#progress-text") || p.text("#progress-text") != want {
						t.Fatalf("progress %q (visible %v), want %q", p.text("#progress-text"), p.visible("#progress-text"), want)
					}
				}
				progress(1)

				// An empty send: the hint shows beside the box, never over it.
				if p.text("#hint") != "" {
					t.Fatalf("a hint before any send: %q", p.text("#hint"))
				}
				before := p.box("#answer")
				p.do("send nothing", chromedp.Click(chromedp.CSS("#send")))
				poll[bool](p, "wait for the hint", `document.getElementById('hint').textContent !== ''`)
				if got := p.text("#hint"); !strings.HasPrefix(got, "Please write an answer first") {
					t.Fatalf("hint %q", got)
				}
				hint, box := p.box("#hint"), p.box("#answer")
				if hint.empty() || hint.overlaps(box) {
					t.Fatalf("hint %+v overlaps the answer box %+v", hint, box)
				}
				if hint.Top < 0 || hint.Bottom > float64(w.height) || box.Bottom > float64(w.height) {
					t.Fatalf("hint %+v or box %+v off screen", hint, box)
				}
				if box.Right-box.Left < (before.Right-before.Left)-1 {
					t.Fatalf("the hint narrowed the answer box: %+v → %+v", before, box)
				}
				for _, sel := range []string{"#skip", "#send"} {
					if b := p.box(sel); b.overlaps(box) || b.overlaps(hint) {
						t.Fatalf("%s %+v overlaps the box or the hint", sel, b)
					}
				}
				p.screenshot(w.name + "-hint")
				// Typing clears it; a real answer never raises it.
				p.do("type", chromedp.SendKeys(chromedp.CSS("#answer"), "W"))
				poll[bool](p, "wait for the hint to clear", `document.getElementById('hint').textContent === ''`)
				eval[bool](p, "clear the box", `(function(){var a=document.getElementById('answer');a.value='';a.dispatchEvent(new Event('input'));return true})()`)

				// The focus ring of every control of the composer.
				p.do("focus the answer box", chromedp.Click(chromedp.CSS("#answer")))
				p.checkRing("answer")
				p.tabTo("skip", true)
				p.checkRing("skip")
				p.tabTo("send", false)
				p.checkRing("send")

				if p.answer("Ward nurse.") != "ready" || p.lastInterviewer() != brief.VerbatimQuestions[0] || p.text("#hint") != "" {
					t.Fatalf("after the screener: %q, hint %q", p.lastInterviewer(), p.text("#hint"))
				}
				progress(2)
				p.answer("On paper.") // short: the interviewer follows up
				if q := p.lastInterviewer(); q == brief.VerbatimQuestions[1] {
					t.Fatal("no follow-up after a short answer")
				}
				progress(2) // a follow-up is not a question of its own
				p.screenshot(w.name + "-chat")

				// Skip: visible, and it moves on to the next question without a follow-up.
				if !p.visible("#skip") || p.text("#skip") != "Skip this question" {
					t.Fatalf("skip control: visible %v, %q", p.visible("#skip"), p.text("#skip"))
				}
				p.do("skip", chromedp.Click(chromedp.CSS("#skip")))
				poll[bool](p, "wait for the skip", `document.querySelectorAll('#log .msg.participant.skipped:not(.pending)').length === 1`)
				if p.phase() != "ready" || p.lastInterviewer() != brief.VerbatimQuestions[1] {
					t.Fatalf("after skipping: %q", p.lines())
				}
				progress(3)
				p.answer("Staff calling in sick at the last minute, with nobody to cover the shift.")
				for i := 0; p.lastInterviewer() != brief.VerbatimQuestions[2]; i++ {
					if i > 3 {
						t.Fatalf("never reached the wrap-up: %q", p.lines())
					}
					p.answer("Every week, and it means doing the rota again from scratch.")
				}
				progress(4)

				// "No, that's everything" ends the interview: no follow-up.
				if p.answer("No, that's everything.") != "done" || p.lastInterviewer() != moderator.ScriptClosing {
					t.Fatalf("after a closing answer: %q", p.lines())
				}
				if got := p.text("#status"); got != "Interview complete" || p.visible("#progress-text") {
					t.Fatalf("header at the end: %q, progress visible %v", got, p.visible("#progress-text"))
				}
				p.checkFooter("#end .brand-foot")
				p.screenshot(w.name + "-end")
				tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), e.interviewsOf(st)[0].ID)
				skipped := 0
				for _, m := range tr {
					if m.Speaker == kv.SpeakerParticipant && m.Text == moderator.SkippedAnswer {
						skipped++
					}
				}
				if skipped != 1 {
					t.Fatalf("%d skips stored", skipped)
				}
			})

			t.Run("OK_DarkSchemeFocusRing", func(t *testing.T) {
				st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
				ctx, _ := newBrowserAt(t, chromium, w.width, w.height)
				p := page{t: t, ctx: ctx}
				p.do("prefer dark", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
						Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
					return err
				}))
				p.do("open the link", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")))
				if !eval[bool](p, "check the scheme", `matchMedia('(prefers-color-scheme: dark)').matches`) {
					t.Fatal("the dark scheme is not in effect")
				}
				p.tabTo("start", false)
				p.checkRing("start")
				p.do("start", chromedp.Click(chromedp.CSS("#start")))
				if p.phase() != "ready" {
					t.Fatal("the interview did not start")
				}
				p.do("focus the answer box", chromedp.Click(chromedp.CSS("#answer")))
				p.checkRing("answer")
				p.tabTo("skip", true)
				p.checkRing("skip")
				p.tabTo("send", false)
				p.checkRing("send")
				p.screenshot(w.name + "-dark")
			})

			t.Run("OK_Rehearsal", func(t *testing.T) {
				st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
				ctx, _ := newBrowserAt(t, chromium, w.width, w.height)
				p := page{t: t, ctx: ctx}
				p.do("open the link", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")))
				check := func() {
					t.Helper()
					b := p.box("#rehearsal")
					if !p.visible("#rehearsal") || p.text("#rehearsal") != "Rehearsal — answers are not collected" || b.empty() || b.Top < 0 || b.Bottom > float64(w.height)/3 {
						t.Fatalf("rehearsal marker: visible %v, %q at %+v", p.visible("#rehearsal"), p.text("#rehearsal"), b)
					}
				}
				check()
				p.do("start", chromedp.Click(chromedp.CSS("#start")))
				if p.phase() != "ready" {
					t.Fatal("the rehearsal did not start")
				}
				check()
				p.screenshot(w.name + "-rehearsal")
				if ivs := e.interviewsOf(st); len(ivs) != 1 || !ivs[0].IsTest {
					t.Fatalf("interviews %+v", ivs)
				}
			})

			t.Run("OK_PausedWhileWelcomeOpen", func(t *testing.T) {
				st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
				ctx, _ := newBrowserAt(t, chromium, w.width, w.height)
				p := page{t: t, ctx: ctx}
				p.do("open the link", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")))
				e.mustMode(st.Partition(), st.ID, kv.ModePaused)
				p.do("start", chromedp.Click(chromedp.CSS("#start")))
				if phase := p.phase(); phase != "notice" {
					t.Fatalf("phase %s after the study was paused", phase)
				}
				sel := `[data-notice="paused"]`
				if !p.visible(sel) || p.text(sel+" h1") != "This study is paused" || p.text(sel+" .notice-study") != title {
					t.Fatalf("notice: visible %v, %q about %q", p.visible(sel), p.text(sel+" h1"), p.text(sel+" .notice-study"))
				}
				if got := p.text("#status"); got != "Paused" || p.visible("#composer") || p.visible("#welcome") {
					t.Fatalf("header %q, composer %v, welcome %v", got, p.visible("#composer"), p.visible("#welcome"))
				}
				p.checkFooter("#main > .brand-foot")
				if n := len(e.interviewsOf(st)); n != 0 {
					t.Fatalf("%d interviews started on a paused study", n)
				}
			})

			t.Run("OK_Notices", func(t *testing.T) {
				cases := []struct {
					name, token, heading, study string
				}{
					{"Paused", e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModePaused, brief).LinkToken, "This study is paused", title},
					{"Closed", e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeClosed, brief).LinkToken, "This study has closed", title},
					{"NotAccepting", e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, brief).LinkToken, "Not accepting responses right now", title},
					{"Unknown", kv.NewLinkToken(), "This link doesn't work", ""},
				}
				ctx, _ := newBrowserAt(t, chromium, w.width, w.height)
				p := page{t: t, ctx: ctx}
				for _, c := range cases {
					p.do("open "+c.name, chromedp.Navigate(e.url+"/i/"+c.token), chromedp.WaitVisible(chromedp.CSS(".notice h1")))
					if got := p.text(".notice h1"); got != c.heading {
						t.Fatalf("%s: heading %q, want %q", c.name, got, c.heading)
					}
					if got := p.text(".notice-study"); got != c.study {
						t.Fatalf("%s: the notice names %q, want %q", c.name, got, c.study)
					}
					if c.study != "" && !p.visible(".notice-study") {
						t.Fatalf("%s: the study's name is not visible", c.name)
					}
					p.checkFooter(".brand-foot")
					p.screenshot(w.name + "-notice-" + c.name)
				}
			})
		})
	}
}
