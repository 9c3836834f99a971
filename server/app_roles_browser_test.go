package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

// TestAppBrowserRolesAndCredits, at phone (390×844) and desktop (1280×800) sizes: an
// owner sets the low-credit warning on the credits page; the interview that takes the
// balance under it puts the banner on every page and its row in the history; a viewer
// reads the transcript with neither exports nor changes offered; a researcher reads it
// too but cannot change the live study's mode; the members page lists the role
// change. Every page passes axe, light and dark.
func TestAppBrowserRolesAndCredits(t *testing.T) {
	e := mustServeApp(t)
	ctx := t.Context()
	e.mustMember(e.orgA.ID, "researcher@a.example", kv.RoleMember)
	e.mustMember(e.orgA.ID, "viewer@a.example", kv.RoleAdmin)
	owner, err := e.db.FindUserByEmail(ctx, "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	viewerUser, err := e.db.FindUserByEmail(ctx, "viewer@a.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.UpdateMemberRole(ctx, kv.MemberRoleInput{OrgID: e.orgA.ID, Actor: owner.ID, UserID: viewerUser.ID, Role: kv.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Rota habits", "Why?"))
	studyPath := "/app/studies/" + st.ID.String()

	for i, size := range []struct{ w, h int64 }{{390, 844}, {1280, 800}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			signedIn := func(email string) appTab {
				b := e.browserAt(t, size.w, size.h)
				b.signIn(email)
				b.chooseWorkspace("Org A", "live")
				return b
			}
			ob := signedIn("a@example.com")
			ob.open("/app/settings/credits")
			balance := e.credits(e.orgA.ID)
			if got := ob.text("#credit-balance"); got != strconv.Itoa(balance) {
				t.Fatalf("balance shows %q, want %d", got, balance)
			}
			ob.fill("#credit-alert-below", strconv.Itoa(balance))
			ob.submit("#credit-alert-form button[type=submit]", "/app/settings/credits")
			if got := ob.text(".flash"); got != "Low-credit warning saved." {
				t.Fatalf("flash %q", got)
			}
			if ob.visible("#credits-banner") {
				t.Fatal("banner before the balance fell")
			}
			e.completeInterview(st.LinkToken, []string{fmt.Sprintf("Because of shift %d.", i)})
			iv := e.interviewsOf(st)[0] // newest first
			ob.open("/app/settings/credits")
			if !ob.visible("#credits-banner") || !strings.Contains(ob.text("#credits-banner"), "Credits are running low") {
				t.Fatalf("no banner: %q", ob.text("main"))
			}
			if !ob.visible(fmt.Sprintf(`.credit-history a[href="/app/interviews/%s"]`, iv.ID)) ||
				!strings.Contains(ob.text(".credit-history tbody tr"), "Rota habits") {
				t.Fatalf("history: %q", ob.text(".credit-history"))
			}
			checkAxe(t, ob)
			checkAxeDark(t, ob)

			vb := signedIn("viewer@a.example")
			vb.open("/app/interviews/" + iv.ID.String())
			if got := vb.text("main"); !strings.Contains(got, fmt.Sprintf("Because of shift %d.", i)) {
				t.Fatalf("viewer's transcript: %q", got)
			}
			if vb.visible(`nav.side a[href="/app/exports"]`) || !vb.visible(`nav.side a[href="/app/interviews"]`) || !vb.visible("#credits-banner") {
				t.Fatalf("viewer's navigation: %q", vb.text("nav.side"))
			}
			checkAxe(t, vb)
			vb.open(studyPath)
			if vb.visible(`form[action$="/mode"]`) || vb.visible(`a[href$="/brief"]`) || vb.visible(`form[action$="/links"]`) {
				t.Fatalf("viewer is offered a change: %q", vb.text("main"))
			}
			if !vb.visible(`a[href$="/findings"]`) {
				t.Fatal("viewer has no way to the findings")
			}
			checkAxe(t, vb)
			vb.open("/app/settings/members")
			if got := vb.text(".role-changes"); !strings.Contains(got, "Admin → Viewer") || !strings.Contains(got, "a@example.com") {
				t.Fatalf("role changes: %q", got)
			}
			if vb.visible(`form[action$="/role"]`) {
				t.Fatal("viewer is offered role changes")
			}
			checkAxe(t, vb)
			checkAxeDark(t, vb)

			rb := signedIn("researcher@a.example")
			rb.open(studyPath)
			if rb.visible(`form[action$="/mode"]`) || rb.visible(`a[href$="/golive"]`) || !rb.visible(`a[href$="/brief"]`) {
				t.Fatalf("researcher's study page: %q", rb.text("main"))
			}
			rb.open("/app/interviews/" + iv.ID.String())
			if got := rb.text("main"); !strings.Contains(got, fmt.Sprintf("Because of shift %d.", i)) {
				t.Fatalf("researcher's transcript: %q", got)
			}
			checkAxe(t, rb)

			// Put the balance back over the warning for the next size.
			if _, err := e.db.AddCredits(ctx, e.orgA.ID, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}
