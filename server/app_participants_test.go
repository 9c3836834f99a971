package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/participant"
)

// TestAppStudyParticipants: the study's Participant pages form saves through the
// operation (the same trimming and rules as the API), shows each refusal beside its
// field with what was typed kept, and a member reads and saves it as studies:write
// allows.
func TestAppStudyParticipants(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	member := e.mustAppSession("member@a.example", e.orgA.ID, kv.EnvLive)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Panels")
	path := "/app/studies/" + st.ID.String() + "/participants"

	r := e.appDo("GET", path, &owner, nil, false)
	if r.status != 200 || !strings.Contains(string(r.body), `id="consent-text"`) || !strings.Contains(string(r.body), "/i/"+st.LinkToken) {
		t.Fatalf("form: %d %.400s", r.status, r.body)
	}
	form := url.Values{"consent_text": {"I agree.\r\nReally."}, "thank_you_text": {"Thanks!"}, "completion_code": {"on"},
		"completion_redirect_url": {"https://panel.example/done?cc={completion_code}"}}
	r = e.appDo("POST", path, &owner, form, true)
	if r.status != 303 || r.header.Get("Location") != path+"?done=saved" {
		t.Fatalf("save: %d %s %.300s", r.status, r.header.Get("Location"), r.body)
	}
	got, err := e.db.FindStudyByID(context.Background(), st.Partition(), st.ID)
	if ps := got.ParticipantSettings(); err != nil || ps.ConsentText != "I agree.\nReally." || ps.ThankYouText != "Thanks!" || !ps.CompletionCode ||
		ps.CompletionRedirectURL != "https://panel.example/done?cc={completion_code}" {
		t.Fatalf("stored %+v %v", got.Participant, err)
	}
	if r := e.appDo("GET", path+"?done=saved", &member, nil, false); r.status != 200 || !strings.Contains(string(r.body), "Saved.") ||
		!strings.Contains(string(r.body), "I agree.\nReally.") {
		t.Fatalf("member reads: %d %.300s", r.status, r.body)
	}

	// A participant consents and completes: the transcript shows when they agreed, to
	// what, and the code they were given.
	p := e.participant(st.LinkToken)
	if r := p.openWith(`{"consent":true}`); r.status != 200 {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	p.session = e.interviewSession(t, p)
	done := p.finish()
	ivs := e.interviewsOf(st)
	if done.Completion == nil || len(ivs) != 1 {
		t.Fatalf("completion %+v, %d interviews", done.Completion, len(ivs))
	}
	tr := e.appDo("GET", "/app/interviews/"+ivs[0].ID.String(), &owner, nil, false)
	if tr.status != 200 || !containsAll(string(tr.body), "<dt>Consent</dt>", "I agree.\nReally.", "<dt>Completion code</dt>", done.Completion.Code) {
		t.Fatalf("transcript page: %d %.2000s", tr.status, tr.body)
	}

	bad := url.Values{"consent_text": {"Still typed"}, "completion_redirect_url": {"http://panel.example/{code}"}}
	r = e.appDo("POST", path, &member, bad, true)
	body := string(r.body)
	if r.status != 422 || !strings.Contains(body, `href="#redirect-url"`) || !strings.Contains(body, `id="redirect-err"`) || !strings.Contains(body, "Still typed") {
		t.Fatalf("refusal: %d %.600s", r.status, body)
	}
	if again, _ := e.db.FindStudyByID(context.Background(), st.Partition(), st.ID); again.ParticipantSettings().ConsentText != "I agree.\nReally." {
		t.Fatal("a refused save changed the settings")
	}
}

// TestAppBrand: owners and admins set the name, colour and contact and upload a logo;
// a colour too light to read is refused with its contrast; members read but cannot
// change (403 on the server, whatever the page shows).
func TestAppBrand(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	member := e.mustAppSession("member@a.example", e.orgA.ID, kv.EnvLive)

	r := e.appDo("POST", "/app/settings/brand", &owner, url.Values{"display_name": {"Acme Research"}, "accent_color": {"#FFCC00"}, "contact_email": {"nope"}}, true)
	body := string(r.body)
	if r.status != 422 || !strings.Contains(body, "too light to read") || !strings.Contains(body, `href="#brand-contact"`) || !strings.Contains(body, `value="Acme Research"`) {
		t.Fatalf("refusal: %d %.600s", r.status, body)
	}
	r = e.appDo("POST", "/app/settings/brand", &owner, url.Values{"display_name": {"Acme Research"}, "accent_color": {"#1D4ED8"}, "contact_email": {"research@acme.example"}}, true)
	if r.status != 303 {
		t.Fatalf("save: %d %.300s", r.status, r.body)
	}
	org, _ := e.db.FindOrgByID(context.Background(), e.orgA.ID)
	if b := org.BrandOrZero(); b.DisplayName != "Acme Research" || b.AccentColor != "#1d4ed8" || b.ContactEmail != "research@acme.example" {
		t.Fatalf("stored %+v", b)
	}

	// The logo is a multipart upload whose CSRF token travels in the header.
	upload := func(as appUser, data []byte) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("logo", "logo.png")
		_, _ = fw.Write(data)
		_ = mw.Close()
		req, _ := http.NewRequest("POST", e.url+"/app/settings/brand/logo", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("X-CSRF-Token", as.csrf)
		req.AddCookie(&http.Cookie{Name: app.SessionCookie, Value: as.token})
		return sendNoRedirect(t, req)
	}
	logo := pngLogo(t)
	if r := upload(owner, logo); r.status != 303 {
		t.Fatalf("upload: %d %.300s", r.status, r.body)
	}
	if r := upload(owner, []byte("<svg onload=alert(1)>")); r.status != 422 || !strings.Contains(string(r.body), "PNG or JPEG") {
		t.Fatalf("an SVG: %d %.300s", r.status, r.body)
	}
	if r := upload(member, logo); r.status != 403 {
		t.Fatalf("member upload: %d", r.status)
	}
	page := e.appDo("GET", "/app/settings/brand", &member, nil, false)
	if page.status != 200 || !strings.Contains(string(page.body), "Only owners and admins") || !strings.Contains(string(page.body), "brand-logo-preview") {
		t.Fatalf("member page: %d %.300s", page.status, page.body)
	}
	img := e.appDo("GET", "/app/settings/brand/logo", &member, nil, false)
	if img.status != 200 || !bytes.Equal(img.body, logo) || img.header.Get("Content-Type") != "image/png" {
		t.Fatalf("logo: %d %s", img.status, img.header.Get("Content-Type"))
	}
	if r := e.appDo("POST", "/app/settings/brand", &member, url.Values{"display_name": {"Mine"}}, true); r.status != 403 {
		t.Fatalf("member save: %d", r.status)
	}
	if r := e.appDo("POST", "/app/settings/brand/logo/remove", &owner, nil, true); r.status != 303 {
		t.Fatalf("remove: %d", r.status)
	}
	if r := e.appDo("GET", "/app/settings/brand/logo", &owner, nil, false); r.status != 404 {
		t.Fatalf("removed logo: %d", r.status)
	}
}

// sendNoRedirect sends req and returns the answer itself, not where it redirects.
func sendNoRedirect(t *testing.T, req *http.Request) response {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// interviewSession returns the session p's last open was given.
func (e *testEnv) interviewSession(t *testing.T, p *participantClient) string {
	t.Helper()
	var out participant.ParticipantSession
	if err := json.Unmarshal([]byte(p.bodies[len(p.bodies)-1]), &out); err != nil || out.Session == nil {
		t.Fatalf("no session in %s (%v)", p.bodies[len(p.bodies)-1], err)
	}
	return *out.Session
}
