package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// The participant page in a real browser (headless Chromium through chromedp). Without
// Chromium these tests skip, unless INTERVIEWD_REQUIRE_BROWSER=1 (CI) makes that a
// failure. INTERVIEWD_CHROMIUM names the binary; INTERVIEWD_SCREENSHOT_DIR, when set,
// receives phone-sized screenshots of the chat and the end screen to look at.

// fakeRecognizer stands in for the browser's speech recognition: start() hears one
// sentence and ends.
const fakeRecognizer = `(function () {
	function Recognizer() {
		var self = this;
		this.start = function () {
			setTimeout(function () {
				if (self.onresult) { self.onresult({ results: [[{ transcript: 'I keep the rota on paper' }]] }); }
				if (self.onend) { self.onend(); }
			}, 30);
		};
		this.stop = function () { if (self.onend) { self.onend(); } };
	}
	window.SpeechRecognition = Recognizer;
	window.webkitSpeechRecognition = Recognizer;
})();`

// browserTimeout bounds each browser session: generous, since a busy CI machine can
// take its time over every step.
const browserTimeout = 4 * time.Minute

// phone is the viewport the pages are checked at (an ordinary modern phone).
const phoneWidth, phoneHeight = 390, 844

func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("INTERVIEWD_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		msg := "no Chromium found (install chromium or set INTERVIEWD_CHROMIUM); browser tests skipped"
		if os.Getenv("INTERVIEWD_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg)
		}
		skipMissing(t, msg)
	}
	return path
}

// page drives one participant page.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](p page, what, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return v
}

func poll[T any](p page, what, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Poll[T](js,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(browserTimeout)))
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// phase waits until the page settles (ready for an answer, done, failed or showing a
// notice) and returns that phase.
func (p page) phase() string {
	p.t.Helper()
	return poll[string](p, "wait for the page to settle",
		`(function(){var p=document.getElementById('app').dataset.phase;return ['ready','done','failed','notice'].indexOf(p)>=0?p:false})()`)
}

// answer types text, sends it and waits for the interviewer's reply to be shown.
func (p page) answer(text string) string {
	p.t.Helper()
	before := eval[int](p, "count answers", `document.querySelectorAll('#log .msg.participant').length`)
	p.do("type and send",
		chromedp.SendKeys(chromedp.CSS("#answer"), text),
		chromedp.Click(chromedp.CSS("#send")),
	)
	poll[bool](p, "wait for the reply", fmt.Sprintf(
		`document.querySelectorAll('#log .msg.participant:not(.pending)').length > %d`, before))
	return p.phase()
}

// lines returns the conversation shown, as "speaker: text".
func (p page) lines() []string {
	p.t.Helper()
	return eval[[]string](p, "read the conversation",
		`Array.from(document.querySelectorAll('#log .msg')).map(function(li){return (li.classList.contains('participant')?'participant':'interviewer')+': '+li.textContent})`)
}

func (p page) screenshot(name string) {
	p.t.Helper()
	dir := os.Getenv("INTERVIEWD_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	p.waitStill()
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// waitStill lets one-off animations and transitions end and smooth scrolling arrive,
// so what is looked at is what a participant sees once the page is still.
func (p page) waitStill() {
	p.t.Helper()
	poll[bool](p, "wait for the page to be still", `(function(){
		var m = document.getElementById('main');
		var moving = document.getAnimations().filter(function (a) {
			var t = a.effect && a.effect.getComputedTiming();
			return a.playState === 'running' && t && t.iterations !== Infinity;
		});
		return moving.length === 0 && (!m || Math.abs(m.scrollHeight - m.clientHeight - m.scrollTop) < 2);
	})()`)
}

func (p page) visible(sel string) bool {
	p.t.Helper()
	return eval[bool](p, "check "+sel, fmt.Sprintf(`(function(){var e=document.querySelector(%q);return !!e && !e.hidden && e.offsetParent!==null})()`, sel))
}

func TestParticipantBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	e := mustServe(t)
	title := "How ward nurses plan their rotas"
	minutes := 10
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions:    []string{"What is your role?"},
		VerbatimQuestions:        trickyVerbatim,
		EstimatedDurationMinutes: &minutes,
	}

	t.Run("OK_AnswersEveryQuestionAndSeesTheEnd", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
		ctx, _ := newBrowser(t, chromium)
		p := page{t: t, ctx: ctx}
		p.do("open the link", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")))
		if len(e.interviewsOf(st)) != 0 {
			t.Fatal("loading the page started an interview")
		}
		p.screenshot("welcome")
		p.do("start", chromedp.Click(chromedp.CSS("#start")))
		phase := p.phase()
		for i := 0; phase == "ready"; i++ {
			if i > 30 {
				t.Fatalf("interview did not end: %q", p.lines())
			}
			phase = p.answer(answerFor(i))
			if i == 2 {
				p.screenshot("chat")
			}
		}
		if phase != "done" || !p.visible("#end") || p.visible("#composer") {
			t.Fatalf("phase %s; end shown %v", phase, p.visible("#end"))
		}
		p.screenshot("end")
		shown := p.lines()
		var asked []string
		for _, l := range shown {
			q := strings.TrimPrefix(l, "interviewer: ")
			if slices.Contains(brief.PreInterviewQuestions, q) || slices.Contains(trickyVerbatim, q) {
				asked = append(asked, q)
			}
		}
		if want := append([]string{"What is your role?"}, trickyVerbatim...); !slices.Equal(asked, want) {
			t.Fatalf("the page showed questions %q, want %q", asked, want)
		}
		ivs := e.interviewsOf(st)
		if len(ivs) != 1 || ivs[0].Status != kv.InterviewCompleted || ivs[0].IsTest {
			t.Fatalf("interviews %+v", ivs)
		}
		tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), ivs[0].ID)
		if len(tr) != len(shown) {
			t.Fatalf("stored %d messages, the page showed %d", len(tr), len(shown))
		}
		for i, m := range tr {
			if shown[i] != m.Speaker+": "+m.Text {
				t.Fatalf("message %d: page %q, stored %q", i, shown[i], m.Text)
			}
		}
	})

	t.Run("OK_PersonLinkContinuesInAnotherBrowser", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
		token := e.linkFor(st, kv.AudiencePerson, map[string]string{"role": "ward nurse"}, secretNote)
		url := e.url + "/i/" + token

		ctx, closeFirst := newBrowser(t, chromium)
		first := page{t: t, ctx: ctx}
		first.do("open on the first device", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#start")), chromedp.Click(chromedp.CSS("#start")))
		if first.phase() != "ready" {
			t.Fatal("the interview did not start")
		}
		first.answer("I have been on the ward for six years.")
		first.answer(answerFor(0))
		before := first.lines()
		closeFirst()

		ctx2, _ := newBrowser(t, chromium)
		second := page{t: t, ctx: ctx2}
		second.do("open on the second device", chromedp.Navigate(url))
		if phase := second.phase(); phase != "ready" || second.visible("#welcome") {
			t.Fatalf("second device: phase %s, welcome shown %v", phase, second.visible("#welcome"))
		}
		if got := second.lines(); !slices.Equal(got, before) {
			t.Fatalf("second device shows %q\nfirst showed %q", got, before)
		}
		phase := "ready"
		for i := 1; phase == "ready"; i++ {
			if i > 30 {
				t.Fatal("interview did not end")
			}
			phase = second.answer(answerFor(i))
		}
		if phase != "done" || !second.visible("#end") {
			t.Fatalf("phase %s", phase)
		}
		// The study's own title ("How ward nurses …") names the page; the context is
		// what must not show.
		text := strings.ReplaceAll(eval[string](second, "read the page", `document.body.innerText`), title, "")
		if strings.Contains(text, "NOTE-SECRET") || strings.Contains(text, "ward nurse") {
			t.Fatal("the page shows the note or the context")
		}
		for _, l := range second.lines() {
			if l == "interviewer: What is your role?" {
				t.Fatal("asked the screener question the context answers")
			}
		}
		ivs := e.interviewsOf(st)
		if len(ivs) != 1 || ivs[0].Status != kv.InterviewCompleted || ivs[0].EntryAttributes["role"] != "ward nurse" || !ivs[0].IsTest {
			t.Fatalf("interviews %+v", ivs)
		}
	})

	t.Run("OK_VoiceAnswer", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
		ctx, _ := newBrowser(t, chromium)
		p := page{t: t, ctx: ctx}
		// A stand-in recogniser (a headless browser has no microphone) that hears one
		// sentence, so the page's own voice path runs: mic, transcript, send.
		p.do("install the recogniser", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: fakeRecognizer})
			return err
		}))
		p.do("open and start", chromedp.Navigate(e.url+"/i/"+st.LinkToken), chromedp.WaitVisible(chromedp.CSS("#start")), chromedp.Click(chromedp.CSS("#start")))
		if p.phase() != "ready" || !p.visible("#mic") {
			t.Fatal("no microphone button where speech recognition exists")
		}
		p.do("speak", chromedp.Click(chromedp.CSS("#mic")))
		poll[bool](p, "wait for the transcript", `document.getElementById('answer').value === 'I keep the rota on paper'`)
		p.do("send", chromedp.Click(chromedp.CSS("#send")))
		poll[bool](p, "wait for the reply", `document.querySelectorAll('#log .msg.participant.spoken:not(.pending)').length === 1`)
		if iv := e.interviewsOf(st)[0]; iv.Modality != kv.ModalityVoice {
			t.Fatalf("modality %s after a spoken answer", iv.Modality)
		}
	})

	t.Run("OK_PausedNotice", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModePaused, brief)
		ctx, _ := newBrowser(t, chromium)
		p := page{t: t, ctx: ctx}
		p.do("open", chromedp.Navigate(e.url+"/i/"+st.LinkToken))
		heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
		if err != nil {
			t.Fatal(err)
		}
		if heading != "This study is paused" {
			t.Fatalf("heading %q", heading)
		}
		p.screenshot("paused")
	})
}
