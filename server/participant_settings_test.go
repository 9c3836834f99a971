package server

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/participant"
)

func (e *testEnv) mustParticipantSettings(st kv.Study, ps kv.ParticipantSettings) {
	e.t.Helper()
	if _, _, err := e.db.SetParticipantSettings(context.Background(), kv.ParticipantSettingsEdit{Partition: st.Partition(), StudyID: st.ID, Settings: ps}); err != nil {
		e.t.Fatal(err)
	}
}

// openWith posts /session with body and returns the raw answer.
func (p *participantClient) openWith(body string) response {
	p.e.t.Helper()
	r := p.e.do("POST", "/i/"+p.token+"/session", "", body, p.headers()...)
	p.bodies = append(p.bodies, string(r.body))
	return r
}

// finish answers until the interview completes and returns the completing turn.
func (p *participantClient) finish() participant.ParticipantTurn {
	p.e.t.Helper()
	for range 8 {
		out := p.mustSay("No, that's everything.")
		if out.Status != kv.InterviewInProgress {
			return out
		}
	}
	p.e.t.Fatal("the interview did not complete in 8 answers")
	return participant.ParticipantTurn{}
}

// TestParticipantConsent: a study that asks for consent starts no interview, spends no
// credit and sets no cookie until the participant gives it; with it the interview
// records when and to what; an interview under way continues without asking again.
func TestParticipantConsent(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Consent", "How do you plan your week?"))
	const text = "I agree that my answers are used for this research.\nI can stop at any time."
	e.mustParticipantSettings(st, kv.ParticipantSettings{ConsentText: text})
	token := e.linkFor(st, kv.AudienceGroup, nil, "")
	before := e.credits(e.orgA.ID)

	for _, body := range []string{"", "{}", `{"consent":false}`, `{"consent":null}`} {
		p := e.participant(token)
		r := p.openWith(body)
		var got participant.ParticipantSession
		r.json(t, &got)
		if r.status != 200 || got.State != kv.LinkConsentRequired || got.Consent == nil || got.Consent.Text != text || got.Session != nil ||
			got.Status != nil || r.header.Get("Set-Cookie") != "" || got.Organisation == nil || got.Organisation.Name != "Org A" {
			t.Fatalf("body %q: %d %s", body, r.status, r.body)
		}
	}
	for _, tc := range []struct{ name, body, loc string }{
		{"ErrConsentNotBoolean", `{"consent":"yes"}`, `"loc":["body","consent"]`},
		{"ErrUnknownField", `{"agree":true}`, `"loc":["body","agree"]`},
		{"ErrNotJSON", `consent`, `"loc":["body"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.participant(token).openWith(tc.body)
			if r.status != 422 || !strings.Contains(string(r.body), tc.loc) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	if n := len(e.interviewsOf(st)); n != 0 || e.credits(e.orgA.ID) != before {
		t.Fatalf("without consent: %d interviews, %d credits spent", n, before-e.credits(e.orgA.ID))
	}

	p := e.participant(token)
	r := p.openWith(`{"consent":true}`)
	var got participant.ParticipantSession
	r.json(t, &got)
	if r.status != 200 || got.State != kv.LinkOpen || got.Session == nil || got.Consent != nil {
		t.Fatalf("with consent: %d %s", r.status, r.body)
	}
	p.session = *got.Session
	ivs := e.interviewsOf(st)
	if len(ivs) != 1 || ivs[0].ConsentedAt == nil || ivs[0].ConsentText != text || ivs[0].ConsentedAt.After(ivs[0].StartedAt) ||
		before-e.credits(e.orgA.ID) != 1 {
		t.Fatalf("interview %+v", ivs)
	}
	resumed, _ := p.open() // no consent in the body: the interview is under way
	if resumed.State != kv.LinkOpen || *resumed.Session != p.session || len(resumed.Messages) != 2 {
		t.Fatalf("resume: %+v", resumed)
	}
	if n := len(e.interviewsOf(st)); n != 1 {
		t.Fatalf("%d interviews after resuming", n)
	}
}

// TestParticipantCompletionCode: a study with a panel redirect issues each completed
// interview a code, stored with it and given back on the completing turn and on every
// later open, with the redirect filled in; a study without one gives no completion.
func TestParticipantCompletionCode(t *testing.T) {
	e := mustServe(t)
	brief := plainBrief("Codes", "How do you plan your week?")
	panel := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
	e.mustParticipantSettings(panel, kv.ParticipantSettings{CompletionRedirectURL: "https://panel.example/done?cc={completion_code}&pid={interview_id}"})
	plain := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)

	p := e.participant(panel.LinkToken)
	p.open()
	done := p.finish()
	if done.Status != kv.InterviewCompleted || done.Completion == nil || len(done.Completion.Code) != kv.CompletionCodeLength {
		t.Fatalf("completing turn: %+v", done)
	}
	ivs := e.interviewsOf(panel)
	if len(ivs) != 1 || ivs[0].CompletionCode != done.Completion.Code {
		t.Fatalf("stored %+v, answered %+v", ivs, done.Completion)
	}
	want := "https://panel.example/done?cc=" + url.QueryEscape(done.Completion.Code) + "&pid=" + ivs[0].ID.String()
	if done.Completion.RedirectURL == nil || *done.Completion.RedirectURL != want {
		t.Fatalf("redirect %v, want %s", done.Completion.RedirectURL, want)
	}
	again, _ := p.open()
	if again.Completion == nil || again.Completion.Code != done.Completion.Code || again.Completion.RedirectURL == nil || *again.Completion.RedirectURL != want {
		t.Fatalf("reopened: %+v", again.Completion)
	}

	q := e.participant(plain.LinkToken)
	q.open()
	q.finish()
	for _, b := range q.bodies {
		if strings.Contains(b, "completion") {
			t.Fatalf("a study without codes answered %s", b)
		}
	}
	if ivs := e.interviewsOf(plain); len(ivs) != 1 || ivs[0].CompletionCode != "" || ivs[0].Status != kv.InterviewCompleted {
		t.Fatalf("plain study's interview %+v", ivs)
	}
}

func pngLogo(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 80, 24))
	img.Set(1, 1, color.RGBA{B: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParticipantBrand: who is asking shows on the page and in the API; the logo and
// the colour are served from the link's own path under the same strict CSP, never
// inline; another link's organisation is not reachable through them.
func TestParticipantBrand(t *testing.T) {
	e := mustServe(t)
	ctx := context.Background()
	logo := pngLogo(t)
	info, err := e.db.SetLogo(ctx, e.orgA.ID, logo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetBrand(ctx, e.orgA.ID, kv.Brand{DisplayName: "Acme Research", AccentColor: "#1d4ed8", ContactEmail: "research@acme.example"}); err != nil {
		t.Fatal(err)
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Brand", "How do you plan your week?"))
	e.mustParticipantSettings(st, kv.ParticipantSettings{ConsentText: "I agree <b>fully</b>.", WelcomeText: "Hello from Acme.\nIt takes ten minutes.",
		ThankYouText: "Thanks from Acme.", CompletionCode: true})
	token := st.LinkToken

	page := e.do("GET", "/i/"+token, "", "")
	html := string(page.body)
	if page.status != 200 || page.header.Get("Content-Security-Policy") != participant.PageCSP {
		t.Fatalf("page %d, CSP %q", page.status, page.header.Get("Content-Security-Policy"))
	}
	for _, want := range []string{
		`Research by Acme Research`, `<img class="org-logo" src="/i/` + token + `/logo?v=` + info.Version + `" alt="Acme Research">`,
		`<link rel="stylesheet" href="/i/` + token + `/brand.css?v=1d4ed8">`, `Hello from Acme.`, `I agree &lt;b&gt;fully&lt;/b&gt;.`,
		`id="consent-box"`, `Thanks from Acme.`, `id="completion"`, `href="mailto:research@acme.example"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(html, "style=") || strings.Contains(html, "<style") || strings.Contains(html, "You'll chat with an interviewer") {
		t.Error("inline style, or the built-in welcome beside the custom one")
	}

	r := e.participant(token).openWith("")
	var s participant.ParticipantSession
	r.json(t, &s)
	o := s.Organisation
	if o == nil || o.Name != "Acme Research" || o.AccentColor == nil || *o.AccentColor != "#1d4ed8" || o.ContactEmail == nil ||
		o.LogoURL == nil || *o.LogoURL != "/i/"+token+"/logo?v="+info.Version {
		t.Fatalf("organisation %s", r.body)
	}

	img := e.do("GET", *o.LogoURL, "", "")
	if img.status != 200 || !bytes.Equal(img.body, logo) || img.header.Get("Content-Type") != "image/png" ||
		img.header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(img.header.Get("Cache-Control"), "private") ||
		img.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("logo %d %v", img.status, img.header)
	}
	css := e.do("GET", "/i/"+token+"/brand.css?v=1d4ed8", "", "")
	if css.status != 200 || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") ||
		!strings.Contains(string(css.body), "--accent: #1d4ed8;") || !strings.Contains(string(css.body), "prefers-color-scheme: dark") {
		t.Fatalf("brand.css %d %s", css.status, css.body)
	}
	if again := e.do("GET", *o.LogoURL, "", "", "If-None-Match", `"`+info.Version+`"`); again.status != 304 {
		t.Fatalf("revalidate: %d", again.status)
	}

	t.Run("ErrNoBrandNoFiles", func(t *testing.T) {
		other := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeTest, plainBrief("Other", "Why?"))
		for _, path := range []string{"/i/" + other.LinkToken + "/logo", "/i/" + other.LinkToken + "/brand.css", "/i/AAAAAAAAAAAAAAAAAAAAAA/logo", "/i/short/brand.css"} {
			if r := e.do("GET", path, "", ""); r.status != 404 {
				t.Fatalf("%s: %d", path, r.status)
			}
		}
		page := string(e.do("GET", "/i/"+other.LinkToken, "", "").body)
		if strings.Contains(page, "org-logo") || strings.Contains(page, "brand.css") || strings.Contains(page, "mailto:") || !strings.Contains(page, "Research by Org B") {
			t.Fatal("an organisation without a brand shows one")
		}
	})
}
