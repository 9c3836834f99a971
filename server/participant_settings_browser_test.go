package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// TestParticipantBrowserConsentAndBrand: in real Chromium, on a phone (390×844) and a
// desktop (1280×800) window, a participant sees who is asking (name, logo, colour,
// contact) and the researcher's welcome; cannot start without ticking the consent;
// starts with it; and ends on the researcher's thank-you with the completion code and
// the link back to the panel. Every state passes axe (light and dark at the end) and
// the page meets no Content-Security-Policy refusal: the logo and the colour come from
// the link's own path, never inline.
func TestParticipantBrowserConsentAndBrand(t *testing.T) {
	chromium := chromiumPath(t)
	axeSource(t)
	e := mustServe(t)
	env := &appBrowserEnv{testEnv: e, chromium: chromium}
	ctx := context.Background()
	if _, err := e.db.SetLogo(ctx, e.orgA.ID, pngLogo(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetBrand(ctx, e.orgA.ID, kv.Brand{DisplayName: "Acme Research", AccentColor: "#1d4ed8", ContactEmail: "research@acme.example"}); err != nil {
		t.Fatal(err)
	}
	const (
		consent  = "Acme Research runs this study. Your answers are stored for 12 months and used only for this research.\nYou can stop at any time."
		welcome  = "Thanks for helping us understand how teams plan.\nIt takes about five minutes."
		thankYou = "That's everything. Thank you from the Acme research team!"
	)
	cases := []struct {
		window        string
		width, height int64
	}{{"Phone", phoneWidth, phoneHeight}, {"Desktop", 1280, 800}}
	for _, c := range cases {
		t.Run(c.window, func(t *testing.T) {
			st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("How teams plan their week", "How do you plan your week?"))
			e.mustParticipantSettings(st, kv.ParticipantSettings{ConsentText: consent, WelcomeText: welcome, ThankYouText: thankYou,
				CompletionRedirectURL: "https://panel.example/done?cc={completion_code}&pid={interview_id}"})
			b := env.browserAt(t, c.width, c.height)
			b.watchCSP()
			b.open("/i/" + st.LinkToken)
			b.waitFor("the welcome", `!document.getElementById('start').hidden`)
			b.waitFor("the logo", `document.querySelector('.org-logo').complete && document.querySelector('.org-logo').naturalWidth > 0`)
			animationsDone(b)
			if got := b.text(".eyebrow"); !strings.EqualFold(got, "Research by Acme Research") {
				t.Fatalf("eyebrow %q", got)
			}
			if got := eval[string](b.page, "the button's colour", `getComputedStyle(document.getElementById('start')).backgroundColor`); got != "rgb(29, 78, 216)" {
				t.Fatalf("start button %s, want the organisation's #1d4ed8", got)
			}
			if !strings.Contains(b.text("#welcome-text"), "understand how teams plan") || !strings.Contains(b.text("#consent-text"), "stored for 12 months") {
				t.Fatal("the researcher's welcome or consent is not shown")
			}
			checkAxeAll(t, b)
			fitsWidth(t, b, c.width)
			noCSPViolations(t, b)

			// Start without the tick: told why, nothing created.
			b.do("start without consent", chromedp.Click(chromedp.CSS("#start")))
			b.waitFor("the refusal", `!document.getElementById('start-error').hidden`)
			if got := b.text("#start-error"); !strings.Contains(got, "tick the box") {
				t.Fatalf("start error %q", got)
			}
			if n := len(e.interviewsOf(st)); n != 0 {
				t.Fatalf("%d interviews started without consent", n)
			}
			animationsDone(b)
			checkAxeAll(t, b)

			b.do("tick and start", chromedp.Click(chromedp.CSS("#consent-box")), chromedp.Click(chromedp.CSS("#start")))
			if b.phase() != "ready" {
				t.Fatal("the interview did not start")
			}
			ivs := e.interviewsOf(st)
			if len(ivs) != 1 || ivs[0].ConsentedAt == nil || ivs[0].ConsentText != consent {
				t.Fatalf("interviews %+v", ivs)
			}
			b.waitStill() // the first messages fade in: axe reads colours as drawn
			checkAxeAll(t, b)

			phase := "ready"
			for i := 0; phase == "ready"; i++ {
				if i > 6 {
					t.Fatalf("the interview did not end: %q", b.lines())
				}
				phase = b.answer("No, that's everything.")
			}
			if phase != "done" || !b.visible("#end") || !b.visible("#completion") {
				t.Fatalf("phase %s; end %v; completion %v", phase, b.visible("#end"), b.visible("#completion"))
			}
			iv, err := e.db.FindInterviewByID(ctx, st.Partition(), ivs[0].ID)
			if err != nil || iv.CompletionCode == "" {
				t.Fatalf("stored %+v %v", iv, err)
			}
			if got := b.text("#completion-code"); got != iv.CompletionCode {
				t.Fatalf("code shown %q, stored %q", got, iv.CompletionCode)
			}
			want := "https://panel.example/done?cc=" + url.QueryEscape(iv.CompletionCode) + "&pid=" + iv.ID.String()
			if got := eval[string](b.page, "the panel link", `document.getElementById('completion-link').href`); got != want {
				t.Fatalf("panel link %q, want %q", got, want)
			}
			if got := b.text("#thank-you-text"); got != thankYou {
				t.Fatalf("thank-you %q", got)
			}
			if !strings.Contains(b.text("#end .contact"), "research@acme.example") {
				t.Fatal("no contact on the thank-you")
			}
			b.waitStill()
			checkAxeAll(t, b)
			fitsWidth(t, b, c.width)
			setScheme(t, b, "dark")
			b.waitStill()
			checkAxeAll(t, b)
			setScheme(t, b, "light")
			b.screenshot("participant-brand-" + c.window)
			noCSPViolations(t, b)
		})
	}
}

// animationsDone waits until no one-off animation or transition runs (a welcome taller
// than the window is not scrolled to its end, so waitStill's scroll test does not apply).
func animationsDone(b appTab) {
	b.t.Helper()
	poll[bool](b.page, "wait for animations to end", `document.getAnimations().filter(function (a) {
		var t = a.effect && a.effect.getComputedTiming();
		return a.playState === 'running' && t && t.iterations !== Infinity;
	}).length === 0`)
}

// fitsWidth fails when the page is wider than the window (a long consent, a logo or a
// completion code pushing it sideways on a phone).
func fitsWidth(t *testing.T, b appTab, width int64) {
	t.Helper()
	if w := eval[int64](b.page, "width", `document.documentElement.scrollWidth`); w > width {
		t.Fatalf("%s is %d px wide in a %d px window", b.location(), w, width)
	}
}
