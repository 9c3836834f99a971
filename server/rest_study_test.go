package server

import (
	"fmt"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/research"
)

type scenario struct {
	name       string
	method     string
	path       string
	key        string
	body       string
	wantStatus int
	wantBody   string // substring of the body, "" to skip
	check      func(t *testing.T, r response)
}

func (e *testEnv) run(t *testing.T, cases []scenario) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.key, c.body)
			if r.status != c.wantStatus {
				t.Fatalf("%s %s: status %d, want %d; body %s", c.method, c.path, r.status, c.wantStatus, r.body)
			}
			if c.wantBody != "" && !strings.Contains(string(r.body), c.wantBody) {
				t.Fatalf("body %s does not contain %s", r.body, c.wantBody)
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Fatal("no X-Request-Id")
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("content type %q", ct)
			}
			if r.status == 401 {
				want := `Bearer resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource/v1/api"`
				if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, want) {
					t.Fatalf("WWW-Authenticate %q, want prefix %q", got, want)
				}
			}
			if r.status == 403 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="`) {
				t.Fatalf("403 WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// authCases are the 401s every protected route answers alike.
func authCases(method, path string) []scenario {
	return []scenario{
		{name: "ErrNoCredential", method: method, path: path, wantStatus: 401, wantBody: `Bearer <token>.","code":"missing_token"`, // unescaped: people read it
			check: func(t *testing.T, r response) {
				if strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
					t.Fatal("no token was sent, yet the header says invalid_token")
				}
			}},
		{name: "ErrNotBearer", method: method, path: path, key: "Basic dXNlcjpwYXNz", wantStatus: 401, wantBody: `"code":"invalid_token"`},
		{name: "ErrUnknownKey", method: method, path: path, key: "jsk_live_" + strings.Repeat("A", 49), wantStatus: 401,
			check: func(t *testing.T, r response) {
				if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
					t.Fatalf("header %q lacks error=invalid_token", r.header.Get("WWW-Authenticate"))
				}
			}},
		{name: "ErrOAuthShapedToken", method: method, path: path, key: "svca_nothing", wantStatus: 401},
	}
}

func TestWhoami(t *testing.T) {
	e := mustServe(t)
	cases := append(authCases("GET", "/v1/api/me"),
		scenario{name: "OK_APIKey", method: "GET", path: "/v1/api/me", key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got map[string]any
			r.json(t, &got)
			if len(got) != 9 {
				t.Fatalf("whoami for a live key has exactly 9 fields (DECISIONS §3 and credits), got %v", got)
			}
			if got["org_id"] != e.orgA.ID.String() || got["org_name"] != "Org A" || got["environment"] != "live" || got["credits"] != float64(10) ||
				got["credential_type"] != "api_key" || got["key_name"] != "a_live" || got["expires_at"] != nil {
				t.Fatalf("whoami %v", got)
			}
			scopes := fmt.Sprint(got["scopes"])
			if scopes != "[export:read links:read links:write studies:golive studies:read studies:write]" {
				t.Fatalf("scopes not sorted: %s", scopes)
			}
		}},
		scenario{name: "OK_NoScopeNeeded", method: "GET", path: "/v1/api/me", key: "a_links_only", wantStatus: 200, wantBody: `"scopes":["links:read"]`},
		scenario{name: "OK_TestEnvironment_NoCredits", method: "GET", path: "/v1/api/me", key: "a_test", wantStatus: 200, wantBody: `"environment":"test"`,
			check: func(t *testing.T, r response) {
				var got map[string]any
				r.json(t, &got)
				if _, ok := got["credits"]; ok || len(got) != 8 {
					t.Fatalf("a test key spends no credits and shows none: %v", got)
				}
			}},
	)
	e.run(t, cases)
}

func TestRevokedKeyStopsAtOnce(t *testing.T) {
	e := mustServe(t)
	k, secret, err := e.db.CreateKey(t.Context(), kv.KeyInput{OrgID: e.orgA.ID, Name: "short", Environment: kv.EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/api/me", secret, ""); r.status != 200 {
		t.Fatalf("before revoke: %d", r.status)
	}
	if _, err := e.db.RevokeKey(t.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/api/me", secret, ""); r.status != 401 {
		t.Fatalf("after revoke: %d", r.status)
	}
}

func TestStudyRoutes(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Checkout friction")
	testEnvStudy := e.mustStudy(e.orgA.ID, kv.EnvTest, "Rehearsal")
	otherOrg := e.mustStudy(e.orgB.ID, kv.EnvLive, "Secret")
	missing := kv.NewV4()
	get := "/v1/api/studies/" + st.ID.String()
	link := get + "/interview-link"

	var notFoundBody string
	cases := append(authCases("GET", get), authCases("GET", link)...)
	cases = append(cases, authCases("GET", "/v1/api/studies")...)
	cases = append(cases,
		scenario{name: "OK_Get", method: "GET", path: get, key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got map[string]any
			r.json(t, &got)
			if len(got) != 7 || got["id"] != st.ID.String() || got["name"] != "Checkout friction" || got["mode"] != "test" || got["launched_at"] != nil {
				t.Fatalf("detail %v", got)
			}
			brief := got["brief"].(map[string]any)
			if len(brief) != 5 || brief["estimated_duration_minutes"] != nil || fmt.Sprint(brief["pre_interview_questions"]) != "[]" {
				t.Fatalf("brief %v", brief)
			}
			if created := got["created_at"].(string); len(created) != len("2026-11-21T10:00:00.123Z") || !strings.HasSuffix(created, "Z") {
				t.Fatalf("timestamp %q is not RFC 3339 UTC with milliseconds", created)
			}
		}},
		scenario{name: "ErrScopeMissing_Get", method: "GET", path: get, key: "a_links_only", wantStatus: 403, wantBody: `"code":"insufficient_scope"`},
		scenario{name: "ErrNotFound_Missing", method: "GET", path: "/v1/api/studies/" + missing.String(), key: "a_live", wantStatus: 404,
			check: func(t *testing.T, r response) { notFoundBody = string(r.body) }},
		scenario{name: "ErrNotFound_OtherOrg", method: "GET", path: "/v1/api/studies/" + otherOrg.ID.String(), key: "a_live", wantStatus: 404,
			check: func(t *testing.T, r response) {
				if string(r.body) != notFoundBody {
					t.Fatalf("another org's study answers %s, a missing one %s", r.body, notFoundBody)
				}
			}},
		scenario{name: "ErrNotFound_OtherEnvironment", method: "GET", path: "/v1/api/studies/" + testEnvStudy.ID.String(), key: "a_live", wantStatus: 404,
			check: func(t *testing.T, r response) {
				if string(r.body) != notFoundBody {
					t.Fatalf("another environment's study answers %s, a missing one %s", r.body, notFoundBody)
				}
			}},
		scenario{name: "OK_GetInTestEnvironment", method: "GET", path: "/v1/api/studies/" + testEnvStudy.ID.String(), key: "a_test", wantStatus: 200},
		scenario{name: "ErrBadID", method: "GET", path: "/v1/api/studies/not-a-uuid", key: "a_live", wantStatus: 422,
			wantBody: `{"detail":[{"loc":["path","study_id"],"msg":"Input should be a valid UUID.","type":"uuid_parsing"}]}`},
		scenario{name: "OK_Link", method: "GET", path: link, key: "a_links_only", wantStatus: 200,
			wantBody: `{"url":"` + testBaseURL + `/i/` + st.LinkToken + `","mode":"test"}`},
		scenario{name: "ErrScopeMissing_Link", method: "GET", path: link, key: "a_studies_only", wantStatus: 403},
		scenario{name: "ErrNotFound_LinkOtherOrg", method: "GET", path: "/v1/api/studies/" + otherOrg.ID.String() + "/interview-link", key: "a_live", wantStatus: 404},
		scenario{name: "ErrBadID_Link", method: "GET", path: "/v1/api/studies/123/interview-link", key: "a_live", wantStatus: 422, wantBody: `"uuid_parsing"`},
		scenario{name: "OK_List", method: "GET", path: "/v1/api/studies", key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got []map[string]any
			r.json(t, &got)
			if len(got) != 1 || got[0]["id"] != st.ID.String() || len(got[0]) != 6 {
				t.Fatalf("list %v", got)
			}
			if r.header.Get("X-Next-Cursor") != "" {
				t.Fatal("last page carries X-Next-Cursor")
			}
		}},
		scenario{name: "ErrScopeMissing_List", method: "GET", path: "/v1/api/studies", key: "a_links_only", wantStatus: 403},
		scenario{name: "ErrLimitZero", method: "GET", path: "/v1/api/studies?limit=0", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","limit"]`},
		scenario{name: "ErrLimit201", method: "GET", path: "/v1/api/studies?limit=201", key: "a_live", wantStatus: 422, wantBody: `"type":"less_than_equal"`},
		scenario{name: "ErrLimitNotInt", method: "GET", path: "/v1/api/studies?limit=ten", key: "a_live", wantStatus: 422, wantBody: `"type":"int_parsing"`},
		scenario{name: "OK_Limit200", method: "GET", path: "/v1/api/studies?limit=200", key: "a_live", wantStatus: 200},
		scenario{name: "OK_Limit1", method: "GET", path: "/v1/api/studies?limit=1", key: "a_live", wantStatus: 200},
		scenario{name: "ErrCursor", method: "GET", path: "/v1/api/studies?cursor=garbage", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","cursor"]`},
		scenario{name: "ErrCursorTampered", method: "GET", path: "/v1/api/studies?cursor=" + e.db.EncodeCursor(kv.CursorInterviews, kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, st.ID), key: "a_live", wantStatus: 422},
	)
	e.run(t, cases)
}

func TestListStudiesPagingOverHTTP(t *testing.T) {
	e := mustServe(t)
	var want []string
	for i := 0; i < 120; i++ {
		want = append(want, e.mustStudy(e.orgA.ID, kv.EnvLive, fmt.Sprint("s", i)).ID.String())
	}
	e.mustStudy(e.orgB.ID, kv.EnvLive, "not mine")
	var got []string
	path := "/v1/api/studies"
	for pages := 0; ; pages++ {
		r := e.do("GET", path, "a_live", "")
		if r.status != 200 {
			t.Fatalf("page %d: %d %s", pages, r.status, r.body)
		}
		var items []research.StudySummary
		r.json(t, &items)
		for _, it := range items {
			got = append(got, it.ID.String())
		}
		next := r.header.Get("X-Next-Cursor")
		if next == "" {
			if pages != 2 || len(items) != 20 {
				t.Fatalf("default limit 50 over 120 rows: %d pages, last page %d rows", pages+1, len(items))
			}
			break
		}
		path = "/v1/api/studies?cursor=" + next
	}
	if len(got) != 120 {
		t.Fatalf("%d rows", len(got))
	}
	for i := range got {
		if got[i] != want[len(want)-1-i] {
			t.Fatalf("row %d not newest first", i)
		}
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	e := mustServe(t)
	e.run(t, []scenario{
		{name: "ErrNotFound_Route", method: "GET", path: "/v1/api/nothing-here", key: "a_live", wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "ErrNotFound_TrailingSlash", method: "GET", path: "/v1/api/studies/", key: "a_live", wantStatus: 404},
		{name: "ErrMethod", method: "DELETE", path: "/v1/api/me", key: "a_live", wantStatus: 405, wantBody: `"code":"method_not_allowed"`},
		{name: "ErrMethod_StudyPut", method: "PUT", path: "/v1/api/studies", key: "a_live", wantStatus: 405},
		{name: "OK_Head", method: "HEAD", path: "/v1/api/me", key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			if len(r.body) != 0 {
				t.Fatalf("HEAD answered a body: %s", r.body)
			}
		}},
	})
}
