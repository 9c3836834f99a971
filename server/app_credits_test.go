package server

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

// TestAppCredits: every role reads the balance and history; only an owner sets the
// warning (a bad value is a 422 naming the rule); the interview that takes the balance
// under it shows a banner on every page and mails each owner once.
func TestAppCredits(t *testing.T) {
	e := mustServe(t, withOutboxMail())
	ctx := t.Context()
	e.mustMember(e.orgA.ID, "admin@a.example", kv.RoleAdmin)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)
	e.mustMember(e.orgA.ID, "viewer@a.example", kv.RoleViewer)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, kv.EnvLive)
	admin := e.mustAppSession("admin@a.example", e.orgA.ID, kv.EnvLive)
	member := e.mustAppSession("member@a.example", e.orgA.ID, kv.EnvLive)
	viewer := e.mustAppSession("viewer@a.example", e.orgA.ID, kv.EnvLive)
	start := e.credits(e.orgA.ID)

	t.Run("ErrNotOwner", func(t *testing.T) {
		for _, as := range []*appUser{&admin, &member, &viewer} {
			if r := e.appDo("POST", "/app/settings/credits/alert", as, url.Values{"below": {"3"}}, true); r.status != 403 {
				t.Errorf("%s sets the warning: %d, want 403", as.email, r.status)
			}
		}
	})
	t.Run("ErrBadValue", func(t *testing.T) {
		for _, v := range []string{"abc", "-1", "1000001", ""} {
			r := e.appDo("POST", "/app/settings/credits/alert", &owner, url.Values{"below": {v}}, true)
			if r.status != 422 || !strings.Contains(string(r.body), "Warn below must be a whole number from 0 (never) to 1000000.") {
				t.Errorf("below %q: %d %.300s", v, r.status, r.body)
			}
		}
	})
	if r := e.appDo("POST", "/app/settings/credits/alert", &owner, url.Values{"below": {strconv.Itoa(start)}}, true); r.status != 303 {
		t.Fatalf("owner sets the warning: %d %.300s", r.status, r.body)
	}
	if page := e.appDo("GET", "/app/studies", &member, nil, false); strings.Contains(string(page.body), "credits-banner") {
		t.Fatal("banner before the balance fell")
	}

	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Pricing talk", "Why?"))
	e.completeInterview(st.LinkToken, []string{"Because."})
	iv := e.interviewsOf(st)[0]

	t.Run("OK_BannerForEveryRole", func(t *testing.T) {
		for _, as := range []*appUser{&owner, &admin, &member, &viewer} {
			page := e.appDo("GET", "/app/studies", as, nil, false)
			if page.status != 200 || !strings.Contains(string(page.body), "Credits are running low:") {
				t.Errorf("%s: no banner (%d)", as.email, page.status)
			}
		}
	})
	t.Run("OK_HistoryForEveryRole", func(t *testing.T) {
		for _, as := range []*appUser{&owner, &admin, &member, &viewer} {
			page := e.appDo("GET", "/app/settings/credits", as, nil, false)
			body := string(page.body)
			if page.status != 200 || !strings.Contains(body, `href="/app/interviews/`+iv.ID.String()+`"`) ||
				!strings.Contains(body, "Pricing talk") || !strings.Contains(body, "Credits added") ||
				!strings.Contains(body, `id="credit-balance">`+strconv.Itoa(start-1)+"<") {
				t.Errorf("%s: credits page %d %.3000s", as.email, page.status, body)
			}
			if strings.Contains(body, `id="credit-alert-form"`) != (as == &owner) {
				t.Errorf("%s: warning form shown = %v", as.email, as != &owner)
			}
		}
	})
	t.Run("OK_OneMailToOwners", func(t *testing.T) {
		e.srv.app.SendCreditAlerts(ctx)
		m := outboxMail(t, e, "a@example.com")
		if !strings.Contains(m.Subject, "Org A: "+strconv.Itoa(start-1)+" credits are left") || !strings.Contains(m.Text, "/app/settings/credits") {
			t.Fatalf("mail %q %q", m.Subject, m.Text)
		}
		e.srv.app.SendCreditAlerts(ctx) // nothing pending: nothing more
		box, err := e.db.FindOutboxMail(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range box {
			if strings.Contains(m.Subject, "left on interviewd") {
				n++
				if m.To != "a@example.com" {
					t.Errorf("warning mailed to %s, who is no owner", m.To)
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d warnings mailed, want 1", n)
		}
	})
	t.Run("ErrCursorOfAnotherPage", func(t *testing.T) {
		if r := e.appDo("GET", "/app/settings/credits?after=forged", &owner, nil, false); r.status != 422 {
			t.Fatalf("forged cursor: %d", r.status)
		}
	})
}
