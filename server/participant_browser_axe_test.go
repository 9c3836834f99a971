package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// TestParticipantBrowserAxe runs axe-core (every rule of WCAG 2.1 A and AA and the best
// practices, whatever its impact) over the participant page at each state a
// participant meets, on a phone (390×844) and a desktop (1280×800) window: the welcome,
// the first question, a conversation long enough that it scrolls, and the end. Along
// the way the scrolling conversation takes the keyboard's focus with a visible ring,
// and the page meets no Content-Security-Policy refusal.
func TestParticipantBrowserAxe(t *testing.T) {
	chromium := chromiumPath(t)
	axeSource(t)
	e := mustServe(t)
	env := &appBrowserEnv{testEnv: e, chromium: chromium}
	title := "How ward nurses plan their rotas"
	minutes := 20
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions: []string{"What is your role?"},
		VerbatimQuestions: []string{
			"How do you plan a rota?", "What gets in the way?", "Who else has a say in it?",
			"How do you hear about a change?", "What happens when someone is ill?",
			"How do nights get shared out?", "What would you keep as it is?",
			"Is there anything else you would like to share about rotas?",
		},
		EstimatedDurationMinutes: &minutes,
	}
	// An answer long enough that it is never followed up and a few fill the window.
	long := func(i int) string {
		return fmt.Sprintf("Answer %d: %s", i, strings.Repeat("The rota lives on paper in the office, and every change means phoning round the whole ward. ", 3))
	}
	cases := []struct {
		window string
		width  int64
		height int64
		mode   kv.Mode // test mode shows the rehearsal marker
	}{
		{"Phone", phoneWidth, phoneHeight, kv.ModeTest},
		{"Desktop", 1280, 800, kv.ModeLive},
	}
	// axe reads colours as drawn: a bubble still fading in, or a button mid-way
	// through its transition to the dark scheme, is not what a participant reads.
	check := func(t *testing.T, b appTab) {
		t.Helper()
		b.waitStill()
		checkAxeAll(t, b)
	}
	for _, c := range cases {
		t.Run(c.window, func(t *testing.T) {
			st := e.studyWith(e.orgA.ID, kv.EnvLive, c.mode, brief)
			b := env.browserAt(t, c.width, c.height)
			b.watchCSP()
			b.open("/i/" + st.LinkToken)
			b.waitFor("the welcome", `!document.getElementById('start').hidden`)
			check(t, b)

			b.do("start", chromedp.Click(chromedp.CSS("#start")))
			if b.phase() != "ready" {
				t.Fatal("the interview did not start")
			}
			if c.mode == kv.ModeTest && !b.visible("#rehearsal") {
				t.Fatal("no rehearsal marker in a test-mode interview")
			}
			check(t, b)

			// Answer until the conversation scrolls: axe's scrollable-region-focusable
			// applies only to a region that does.
			const scrolls = `(function(){var m=document.getElementById('main');return m.scrollHeight>m.clientHeight+40})()`
			for i := 0; !eval[bool](b.page, "check the scroll", scrolls); i++ {
				if i >= len(brief.VerbatimQuestions) {
					t.Fatalf("the conversation never scrolled: %d messages", len(b.lines()))
				}
				if b.answer(long(i)) != "ready" {
					t.Fatalf("the interview ended before the conversation scrolled: %q", b.lines())
				}
			}
			b.answer(long(99)) // one more, so the region is well past its height
			check(t, b)
			setScheme(t, b, "dark")
			check(t, b)
			setScheme(t, b, "light")

			// The keyboard reaches the conversation (to scroll it with the arrow keys),
			// and shows where it is.
			b.do("focus the answer box", chromedp.Click(chromedp.CSS("#answer")))
			b.tabTo("main", true)
			b.checkRing("main")
			b.screenshot(c.window + "-conversation-focused")

			phase := "ready"
			for i := 100; phase == "ready"; i++ {
				if i > 130 {
					t.Fatalf("the interview did not end: %q", b.lines())
				}
				phase = b.answer(long(i))
			}
			if phase != "done" || !b.visible("#end") {
				t.Fatalf("phase %s; end shown %v", phase, b.visible("#end"))
			}
			check(t, b)
			noCSPViolations(t, b)
		})
	}
}
