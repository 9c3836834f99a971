package server

import (
	"context"
	"fmt"
	"testing"

	"interviewd/kv"
)

// TestAppBrowserParticipantPages: in real Chromium, at 390×844 and 1280×800, an owner
// sets a study's consent and panel redirect on its Participant pages form (a refused
// redirect first: the summary takes the focus, the field says why, the text typed
// stays) and the organisation's name and colour in Settings → Participant pages (a
// colour too light is refused first). Every state passes axe, light and dark, fits a
// phone, and meets no CSP refusal.
func TestAppBrowserParticipantPages(t *testing.T) {
	e := mustServeApp(t)
	if _, err := e.db.SetLogo(context.Background(), e.orgA.ID, pngLogo(t)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		window        string
		width, height int64
	}{{"Phone", phoneWidth, phoneHeight}, {"Desktop", 1280, 800}} {
		t.Run(c.window, func(t *testing.T) {
			st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Panels "+c.window, "How do you plan your week?"))
			studyPath := "/app/studies/" + st.ID.String()
			formPath := studyPath + "/participants"
			b := e.browserAt(t, c.width, c.height)
			b.watchCSP()
			b.signIn("a@example.com")
			b.chooseWorkspace("Org A", "live")
			b.open(studyPath)
			b.submit(`a[href="`+formPath+`"]`, formPath)
			check := func() {
				t.Helper()
				if c.width == phoneWidth {
					fitsPhone(t, b)
				}
				checkAxeAll(t, b)
				checkAxeDark(t, b)
			}
			check()

			b.fill("#consent-text", "I agree to take part in this study.")
			b.fill("#redirect-url", "https://panel.example/done?cc={code}")
			b.submit(".button-row button.primary", formPath)
			b.waitFor("the error summary to have the focus", `document.activeElement && document.activeElement.id === 'settings-errors'`)
			if got := b.text("#redirect-err"); got == "" {
				t.Fatal("the redirect field says nothing")
			}
			if got := eval[string](b.page, "the consent kept", `document.getElementById('consent-text').value`); got != "I agree to take part in this study." {
				t.Fatalf("consent after the refusal %q", got)
			}
			check()

			b.fill("#redirect-url", "https://panel.example/done?cc={completion_code}")
			b.submit(".button-row button.primary", formPath)
			b.waitFor("the saved notice", fmt.Sprintf(`location.pathname === %q && location.search === '?done=saved' && document.readyState === 'complete'`, formPath))
			got, err := e.db.FindStudyByID(t.Context(), st.Partition(), st.ID)
			if ps := got.ParticipantSettings(); err != nil || ps.ConsentText != "I agree to take part in this study." || !ps.IssuesCompletionCode() {
				t.Fatalf("saved %+v %v", got.Participant, err)
			}
			check()

			// A participant consents and completes: the transcript page shows both.
			p := e.participant(st.LinkToken)
			p.openWith(`{"consent":true}`)
			p.session = e.interviewSession(t, p)
			done := p.finish()
			ivs := e.interviewsOf(st)
			b.open("/app/interviews/" + ivs[0].ID.String())
			if got := b.text("dd.mono"); got != done.Completion.Code {
				t.Fatalf("transcript shows code %q, want %q", got, done.Completion.Code)
			}
			check()

			b.open("/app/settings/brand")
			b.waitFor("the logo preview", `document.querySelector('.brand-logo-preview').complete && document.querySelector('.brand-logo-preview').naturalWidth > 0`)
			check()
			b.fill("#brand-name", "Acme Research")
			b.fill("#brand-accent", "#ffd700")
			b.submit(`form[action="/app/settings/brand"] button.primary`, "/app/settings/brand")
			b.waitFor("the error summary to have the focus", `document.activeElement && document.activeElement.id === 'brand-errors'`)
			check()
			b.fill("#brand-accent", "#1d4ed8")
			b.submit(`form[action="/app/settings/brand"] button.primary`, "/app/settings/brand")
			b.waitFor("the saved notice", `location.search === '?done=saved' && document.readyState === 'complete'`)
			org, _ := e.db.FindOrgByID(t.Context(), e.orgA.ID)
			if org.ShownName() != "Acme Research" || org.BrandOrZero().AccentColor != "#1d4ed8" {
				t.Fatalf("brand %+v", org.Brand)
			}
			check()
			noCSPViolations(t, b)
		})
	}
}
