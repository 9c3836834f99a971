package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/participant"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// inlineCode finds what the pages' CSP forbids: a script element without src, an
// inline style element or attribute, or an inline event handler.
var inlineCode = regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<script>|<style|\sstyle=|\son[a-z]+=`)

func TestParticipantPage(t *testing.T) {
	for _, bad := range []string{"<script>x()</script>", `<script type="module">x()</script>`, "<style>", `<p style="x">`, `<a onclick="x">`} {
		if !inlineCode.MatchString(bad) {
			t.Fatalf("the inline-code check misses %q", bad)
		}
	}
	if inlineCode.MatchString(`<script src="/static/interview.js?v=1" defer></script>`) {
		t.Fatal("the inline-code check refuses an external script")
	}
	e := mustServe(t)
	minutes := 20
	title := "How nurses plan <rotas> & shifts"
	brief := kv.Brief{Title: &title, PreInterviewQuestions: []string{"What is your crm?"}, VerbatimQuestions: []string{"Q?", "R?", "S?"}, EstimatedDurationMinutes: &minutes}
	open := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
	person := e.linkFor(open, kv.AudiencePerson, map[string]string{"crm": "CTX-VALUE-9"}, "NOTE-VALUE-9")
	paused := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModePaused, brief)
	closed := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeClosed, brief)
	broke := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, brief)
	rehearsal := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
	credits := e.credits(e.orgA.ID)
	cases := []struct {
		name       string
		path       string
		wantStatus int
		want       []string
		wantResume bool
	}{
		// The length comes from the design (1 screener and 3 verbatim questions: 30 s +
		// 3 × 100 s), not from the study's estimated_duration_minutes (20).
		{"OK_Welcome", "/i/" + open.LinkToken, 200, []string{`id="welcome"`, "How nurses plan &lt;rotas&gt; &amp; shifts", "4 questions, about 6 minutes", `data-api="/i/` + open.LinkToken + `"`, `id="rehearsal" role="note" hidden`}, false},
		// The person link's context answers the screener question: it is not counted.
		{"OK_PersonLinkNotYetClaimed", "/i/" + person, 200, []string{`id="start"`, "3 questions, about 5 minutes"}, false},
		{"OK_Rehearsal", "/i/" + rehearsal.LinkToken, 200, []string{`id="rehearsal" role="note">Rehearsal — answers are not collected`}, false},
		{"OK_Paused", "/i/" + paused.LinkToken, 200, []string{"This study is paused", "come back", `notice-study">How nurses plan &lt;rotas&gt; &amp; shifts<`, "Powered by interviewd"}, false},
		{"OK_Closed", "/i/" + closed.LinkToken, 200, []string{"This study has closed", `notice-study">How nurses plan &lt;rotas&gt; &amp; shifts<`}, false},
		{"OK_NotAcceptingResponses", "/i/" + broke.LinkToken, 200, []string{"Not accepting responses", `notice-study">How nurses plan &lt;rotas&gt; &amp; shifts<`}, false},
		{"ErrUnknownLink", "/i/" + kv.NewLinkToken(), 404, []string{"This link doesn't work"}, false},
		{"ErrMalformedLink", "/i/nope", 404, []string{"This link doesn't work"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", c.path, "", "")
			body := string(r.body)
			if r.status != c.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, c.wantStatus, body)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Fatalf("page lacks %q:\n%s", w, body)
				}
			}
			if strings.Contains(body, "20 minutes") {
				t.Fatal("the page shows the study's own estimate, not the design's")
			}
			checkPageHeaders(t, r)
			if m := inlineCode.FindString(body); m != "" {
				t.Fatalf("page carries inline code %q", m)
			}
		})
	}
	t.Run("OK_LookingCreatesNothing", func(t *testing.T) {
		if n := len(e.interviewsOf(open)); n != 0 || e.credits(e.orgA.ID) != credits {
			t.Fatalf("GET created %d interviews or spent credits", n)
		}
	})
	t.Run("OK_ReturningVisitorResumes", func(t *testing.T) {
		p := e.participant(person)
		p.open()
		for _, cookie := range []string{"", participant.SessionCookieName(person) + "=" + p.session} {
			// The person link is claimed: any browser, with or without the cookie, resumes.
			r := e.do("GET", "/i/"+person, "", "", "Cookie", cookie)
			if r.status != 200 || !strings.Contains(string(r.body), `data-resume="1"`) {
				t.Fatalf("cookie %q: %d %s", cookie, r.status, r.body)
			}
			if strings.Contains(string(r.body), "NOTE-VALUE-9") || strings.Contains(string(r.body), "CTX-VALUE-9") {
				t.Fatal("the page shows the note or the context")
			}
		}
		g := e.participant(open.LinkToken)
		g.open()
		r := e.do("GET", "/i/"+open.LinkToken, "", "", "Cookie", participant.SessionCookieName(open.LinkToken)+"="+g.session)
		if !strings.Contains(string(r.body), `data-resume="1"`) {
			t.Fatal("a group visitor with a session is not resumed")
		}
		if r := e.do("GET", "/i/"+open.LinkToken, "", ""); !strings.Contains(string(r.body), `data-resume=""`) {
			t.Fatal("a new visitor is resumed")
		}
	})
}

func checkPageHeaders(t *testing.T, r response) {
	t.Helper()
	want := map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-store",
	}
	for h, v := range want {
		if got := r.header.Get(h); got != v {
			t.Fatalf("%s: %q, want %q", h, got, v)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Fatalf("CSP %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Fatalf("CSP allows inline code: %q", csp)
	}
}

func TestParticipantStatic(t *testing.T) {
	e := mustServe(t)
	ui, err := webui.New()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := ui.Asset("interview.js")
	cases := []struct {
		name       string
		path       string
		headers    []string
		wantStatus int
		wantType   string
		wantCache  string
	}{
		{"OK_VersionedForGood", ui.AssetURL("interview.js"), nil, 200, "text/javascript", "public, max-age=31536000, immutable"},
		{"OK_StylesVersioned", ui.AssetURL("interview.css"), nil, 200, "text/css", "public, max-age=31536000, immutable"},
		{"OK_Unversioned", "/static/interview.js", nil, 200, "text/javascript", "public, max-age=300"},
		{"OK_OldVersion", "/static/interview.js?v=old", nil, 200, "text/javascript", "public, max-age=300"},
		{"OK_Revalidated", ui.AssetURL("interview.js"), []string{"If-None-Match", `"` + js.Version + `"`}, 304, "", "public, max-age=31536000, immutable"},
		{"ErrUnknownFile", "/static/nope.js", nil, 404, "application/json", ""},
		{"ErrNoTraversal", "/static/..%2Fwebui.go", nil, 404, "application/json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", c.path, "", "", c.headers...)
			if r.status != c.wantStatus {
				t.Fatalf("status %d, want %d", r.status, c.wantStatus)
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), c.wantType) || r.header.Get("Cache-Control") != c.wantCache {
				t.Fatalf("Content-Type %q Cache-Control %q", r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
			}
			if c.wantStatus == 200 && (r.header.Get("ETag") == "" || r.header.Get("X-Content-Type-Options") != "nosniff") {
				t.Fatalf("headers %v", r.header)
			}
			if c.wantStatus == 304 && len(r.body) != 0 {
				t.Fatal("304 with a body")
			}
		})
	}
}

func TestParticipantRateLimit(t *testing.T) {
	e := mustServe(t, withRateLimits(pipeline.RateLimits{IP: 3, Window: time.Minute}))
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Limits", "Q1?", "Q2?"))
	p := e.participant(st.LinkToken)
	p.open()
	p.mustSay("One.")
	if r := e.do("GET", "/i/"+st.LinkToken, "", ""); r.status != 200 || r.header.Get("RateLimit-Policy") != `"ip";q=3;w=60` {
		t.Fatalf("third request: %d %q", r.status, r.header.Get("RateLimit-Policy"))
	}
	r := p.say("Two.", "")
	if r.status != 429 || !strings.Contains(string(r.body), `"code":"rate_limited"`) || r.header.Get("Retry-After") == "" {
		t.Fatalf("fourth request: %d %s", r.status, r.body)
	}
	page := e.do("GET", "/i/"+st.LinkToken, "", "")
	if page.status != 429 || !strings.Contains(string(page.body), "One moment, please") {
		t.Fatalf("page over the limit: %d", page.status)
	}
	checkPageHeaders(t, page)
	tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), e.interviewsOf(st)[0].ID)
	if n := len(tr); n != 4 { // greeting, Q1, "One.", the reply: the refused answer was not taken
		t.Fatalf("%d messages stored", n)
	}
}
