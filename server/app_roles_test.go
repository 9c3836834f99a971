package server

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/pipeline"
)

// roleReaches reports whether a session of role passes a route's access step.
func roleReaches(access app.Access, role kv.Role) bool {
	return app.RoleRefusal(access, role, "") == nil
}

// TestAppRolesReachPages: for every page of the app that needs a workspace, each of the
// four roles either opens it (no 403) or is refused with 403, exactly as the route's
// access says; a post a role may not make is refused before anything happens.
func TestAppRolesReachPages(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	roles := []struct {
		role kv.Role
		as   *appUser
	}{{kv.RoleOwner, &f.owner}, {kv.RoleAdmin, &f.admin}, {kv.RoleMember, &f.member}, {kv.RoleViewer, &f.viewer}}
	checked := 0
	for _, rt := range e.srv.app.Routes {
		if !workspaceAccess(rt.Access) {
			continue
		}
		own, _, ok := fill("/app"+rt.Path, f.own)
		if !ok {
			t.Fatalf("no fixture for %s", rt.Path)
		}
		for _, ro := range roles {
			reaches := roleReaches(rt.Access, ro.role)
			if rt.Method != "GET" && reaches {
				continue // allowed posts change the fixtures; TestAppRolesActions makes them
			}
			t.Run(rt.Method+" "+rt.Path+"/"+string(ro.role), func(t *testing.T) {
				r := e.appDo(rt.Method, own, ro.as, nil, true)
				switch {
				case reaches && (r.status == 403 || r.status >= 500):
					t.Fatalf("%s refused a page its role reaches: %d %.300s", ro.role, r.status, r.body)
				case !reaches && r.status != 403:
					t.Fatalf("%s reached a %s route: %d, want 403", ro.role, rt.Access, r.status)
				}
			})
			checked++
		}
	}
	if checked < 60 {
		t.Fatalf("only %d route × role checks", checked)
	}
}

// TestAppRolesTranscripts: a researcher and a viewer read the organisation's
// transcripts and findings; only owners and admins see and open exports.
func TestAppRolesTranscripts(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	iv := "/app/interviews/" + f.own["interview_id"]
	for name, as := range map[string]*appUser{"owner": &f.owner, "admin": &f.admin, "researcher": &f.member, "viewer": &f.viewer} {
		t.Run("OK_"+name, func(t *testing.T) {
			r := e.appDo("GET", iv, as, nil, false)
			if r.status != 200 || !strings.Contains(string(r.body), "Because.") {
				t.Fatalf("%s reads a transcript: %d %.300s", name, r.status, r.body)
			}
			list := e.appDo("GET", "/app/interviews", as, nil, false)
			if list.status != 200 || !strings.Contains(string(list.body), f.own["interview_id"]) {
				t.Fatalf("%s lists interviews: %d", name, list.status)
			}
			nav := string(list.body)
			manager := name == "owner" || name == "admin"
			if strings.Contains(nav, `href="/app/exports"`) != manager {
				t.Fatalf("%s: exports in the navigation = %v", name, !manager)
			}
			if !strings.Contains(nav, `href="/app/interviews"`) {
				t.Fatalf("%s: no interviews in the navigation", name)
			}
			study := e.appDo("GET", "/app/studies/"+f.own["study_id"], as, nil, false)
			body := string(study.body)
			if study.status != 200 || !strings.Contains(body, "/findings") {
				t.Fatalf("%s: study page %d without findings", name, study.status)
			}
			if strings.Contains(body, `action="/app/studies/`+f.own["study_id"]+`/mode"`) != manager {
				t.Fatalf("%s: mode buttons shown = %v", name, !manager)
			}
			if strings.Contains(body, "/exports?study=") != manager {
				t.Fatalf("%s: export link shown = %v", name, !manager)
			}
			if strings.Contains(body, "Edit brief") != (name != "viewer") {
				t.Fatalf("%s: edit brief shown = %v", name, name == "viewer")
			}
		})
	}
}

// TestAppRolesActions: a researcher makes links and runs analyses but cannot pause or
// close a live study; a viewer changes nothing; an admin closes it.
func TestAppRolesActions(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	study := "/app/studies/" + f.own["study_id"]
	link := url.Values{"audience": {"group"}}
	if r := e.appDo("POST", study+"/links", &f.member, link, true); r.status >= 400 {
		t.Fatalf("researcher makes a link: %d %.300s", r.status, r.body)
	}
	if r := e.appDo("POST", study+"/links", &f.viewer, link, true); r.status != 403 {
		t.Fatalf("viewer makes a link: %d, want 403", r.status)
	}
	if r := e.appDo("POST", study+"/findings", &f.member, nil, true); r.status >= 400 {
		t.Fatalf("researcher starts an analysis: %d %.300s", r.status, r.body)
	}
	for _, mode := range []string{"closed", "paused", "test"} {
		if r := e.appDo("POST", study+"/mode", &f.member, url.Values{"mode": {mode}}, true); r.status != 403 {
			t.Fatalf("researcher sets %s: %d, want 403", mode, r.status)
		}
	}
	id, _ := kv.ParseID(f.own["study_id"])
	st, err := e.db.FindStudyByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, id)
	if err != nil || st.Mode != kv.ModeLive {
		t.Fatalf("after the researcher's attempts: %s %v, want live", st.Mode, err)
	}
	if r := e.appDo("POST", study+"/mode", &f.admin, url.Values{"mode": {"closed"}}, true); r.status >= 400 {
		t.Fatalf("admin closes: %d %.300s", r.status, r.body)
	}
	if st, err := e.db.FindStudyByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, id); err != nil || st.Mode != kv.ModeClosed {
		t.Fatalf("after the admin: %s %v, want closed", st.Mode, err)
	}
}

// TestAppRolesOperationGuard: a viewer's principal is refused every change and a
// researcher's every export by the operation itself, whatever route called it.
func TestAppRolesOperationGuard(t *testing.T) {
	e := mustServe(t)
	viewer := pipeline.AppPrincipal(kv.SessionAuth{Org: e.orgA, Role: kv.RoleViewer, Session: kv.Session{Environment: kv.EnvLive}})
	researcher := pipeline.AppPrincipal(kv.SessionAuth{Org: e.orgA, Role: kv.RoleMember, Session: kv.Session{Environment: kv.EnvLive}})
	admin := pipeline.AppPrincipal(kv.SessionAuth{Org: e.orgA, Role: kv.RoleAdmin, Session: kv.Session{Environment: kv.EnvLive}})
	for _, o := range e.srv.Ops {
		for _, tc := range []struct {
			name string
			p    *pipeline.Principal
			want bool // refused
		}{{"viewer", viewer, o.Write || pipeline.ExportOps[o.Name]}, {"researcher", researcher, pipeline.ExportOps[o.Name]}, {"admin", admin, false}} {
			err := tc.p.RoleAllows(o)
			if (err != nil) != tc.want {
				t.Errorf("%s on %s: %v, want refused=%v", tc.name, o.Name, err, tc.want)
			}
		}
	}
	if viewer.Has(kv.ScopeStudiesWrite) || viewer.Has(kv.ScopeLinksWrite) || !viewer.Has(kv.ScopeExportRead) {
		t.Fatalf("viewer scopes %v", viewer.Scopes)
	}
	if researcher.Has(kv.ScopeStudiesGoLive) || !researcher.Has(kv.ScopeExportRead) {
		t.Fatalf("researcher scopes %v", researcher.Scopes)
	}
	key := pipeline.PrincipalFromKey(kv.Credential{Key: kv.Key{Scopes: []string{kv.ScopeStudiesWrite}}, Org: e.orgA})
	if err := key.RoleAllows(e.srv.app.Op("create_study")); err != nil {
		t.Fatalf("a key is held to its scopes alone: %v", err)
	}
}

// TestAppRolesKeysAndChanges: a viewer's key carries read scopes only and reads; a
// researcher made a viewer loses the key that could write at once; the change is listed
// under Settings → Members with who made it.
func TestAppRolesKeysAndChanges(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	mk := func(as *appUser, name string, scopes ...string) response {
		return e.appDo("POST", "/app/settings/developer/keys", as, url.Values{"name": {name}, "environment": {"live"},
			"expires_in_days": {"30"}, "scopes": scopes}, true)
	}
	if r := mk(&f.viewer, "writes", kv.ScopeStudiesRead, kv.ScopeStudiesWrite); r.status != 403 || !strings.Contains(string(r.body), "viewer cannot hold studies:write") {
		t.Fatalf("viewer key with studies:write: %d %.400s", r.status, r.body)
	}
	r := mk(&f.viewer, "reads", kv.ScopeStudiesRead, kv.ScopeLinksRead)
	if r.status != 201 {
		t.Fatalf("viewer read key: %d %.300s", r.status, r.body)
	}
	readSecret := secretIn(t, r.body)
	if got := e.do("GET", "/v1/api/studies", readSecret, ""); got.status != 200 {
		t.Fatalf("viewer key reads: %d", got.status)
	}
	if got := e.do("POST", "/v1/api/studies", readSecret, `{"guidance":"Why do people churn?"}`); got.status != 403 {
		t.Fatalf("viewer key writes: %d, want 403", got.status)
	}

	r = mk(&f.member, "writes", kv.ScopeStudiesRead, kv.ScopeStudiesWrite)
	if r.status != 201 {
		t.Fatalf("researcher key: %d %.300s", r.status, r.body)
	}
	writeSecret := secretIn(t, r.body)
	if got := e.do("GET", "/v1/api/studies", writeSecret, ""); got.status != 200 {
		t.Fatalf("researcher key before: %d", got.status)
	}
	if got := e.appDo("POST", "/app/settings/members/"+f.member.user.String()+"/role", &f.admin, url.Values{"role": {"viewer"}}, true); got.status != 303 {
		t.Fatalf("admin makes the researcher a viewer: %d %.300s", got.status, got.body)
	}
	if got := e.do("GET", "/v1/api/studies", writeSecret, ""); got.status != 401 {
		t.Fatalf("write key of a new viewer: %d, want 401", got.status)
	}
	page := e.appDo("GET", "/app/settings/members", &f.viewer, nil, false)
	body := string(page.body)
	if page.status != 200 || !strings.Contains(body, "Researcher → Viewer") || !strings.Contains(body, "admin@a.example") {
		t.Fatalf("members page lists no change: %d %.2000s", page.status, body)
	}
	if r := e.appDo("GET", "/app/studies/new", &f.member, nil, false); r.status != 403 {
		t.Fatalf("the new viewer's own session: %d, want 403 at once", r.status)
	}
}

var keySecret = regexp.MustCompile(`jsk_live_[0-9A-Za-z_]+`)

// secretIn returns the key secret a developer page shows once.
func secretIn(t *testing.T, body []byte) string {
	t.Helper()
	s := keySecret.Find(body)
	if s == nil {
		t.Fatalf("no key secret on the page: %.500s", body)
	}
	return string(s)
}
