package main

import (
	"context"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestAppPages_RenderWhatTheyClaim: the app scenarios read a signed-in studies list
// and the transcript page of a 60-message interview, not a redirect or an error page.
func TestAppPages_RenderWhatTheyClaim(t *testing.T) {
	tg := mustOpenLocal(t, 30)
	ctx := context.Background()
	for _, c := range []struct {
		setup func(context.Context, *target) (workload, error)
		want  string
		count int
	}{
		{setupAppStudies, `<tr><th scope="row"><a href="/app/studies/`, 25},
		{setupAppTranscript, `<li class="msg msg-`, transcriptMessages},
	} {
		w, err := c.setup(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		w.newWorker(0)(req, nil)
		w.newWorker(0)(req, nil) // a reused request still carries one cookie
		if n := strings.Count(string(req.Header.Peek("Cookie")), appSessionCookie); n != 1 {
			t.Fatalf("request carries %d session cookies", n)
		}
		hc := newClient(tg.addr, false)
		if err := hc.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		body := string(resp.Body())
		if resp.StatusCode() != 200 || strings.Count(body, c.want) != c.count {
			t.Fatalf("%s: %d, %d × %q:\n%.2000s", req.URI(), resp.StatusCode(), strings.Count(body, c.want), c.want, body)
		}
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
}
