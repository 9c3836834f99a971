package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"interviewd/moderator/chattest"
)

// TestAppBrowserJobPollSurvivesBlips: a job page's poll that meets a timeout (408) or a
// busy server (503) keeps polling and still opens the study when the draft is ready;
// before, any 4xx but 429 stopped it for good, leaving the page on "Drafting the study".
// The first status polls are answered by the browser itself (the Fetch domain), the
// later ones reach the server. The draft comes from a gated model endpoint, let go only
// once both blips are served, so the page is still polling when they happen.
func TestAppBrowserJobPollSurvivesBlips(t *testing.T) {
	g := chattest.NewGated(t)
	e := mustServeAppEngine(t, gatedEngine(t, g))
	t.Cleanup(g.Stop)
	b := e.signedIn(t, "a@example.com", "Org A", "live")
	blips := []int64{408, 503}
	var answered atomic.Int32
	b.do("intercept the job's status polls", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		paused := cdp.Events(b.ctx, tg, fetch.RequestPaused) // subscribed before Enable: none is missed
		go func() {
			for ev, err := range paused {
				if err != nil {
					return // the browser has gone: the test is over
				}
				if n := int(answered.Add(1)); n <= len(blips) {
					_, _ = cdp.Call(b.ctx, tg, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: blips[n-1]})
					continue
				}
				_, _ = cdp.Call(b.ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			}
		}()
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/app/studies/jobs/*/status*"}}})
		return err
	}))

	b.open("/app/studies/new")
	b.fill("#guidance", "Understand how night-shift nurses plan their week and what breaks their rota.")
	b.submit("form[action='/app/studies'] button[type=submit]", "/app/studies/jobs/")
	select { // the draft is at the model, held until the blips are served
	case <-g.Arrived:
	case <-time.After(browserTimeout):
		t.Fatal("the authoring job never reached the model")
	}
	deadline := time.Now().Add(browserTimeout)
	for answered.Load() < int32(len(blips)) {
		if time.Now().After(deadline) {
			t.Fatalf("%d status polls seen while drafting, want %d", answered.Load(), len(blips))
		}
		time.Sleep(50 * time.Millisecond)
	}
	g.Let(t, chattest.Answer{})
	b.waitFor("the study page", `/^\/app\/studies\/[0-9a-f-]{36}$/.test(location.pathname) && document.readyState === 'complete'`)
	if n := answered.Load(); n <= int32(len(blips)) {
		t.Fatalf("%d status polls seen: the blips were not all served before the study opened", n)
	}
}
