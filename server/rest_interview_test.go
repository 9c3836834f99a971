package server

import (
	"fmt"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/research"
)

func (e *testEnv) mustOpen(token, session string) kv.Interview {
	e.t.Helper()
	got, err := e.db.OpenLink(e.t.Context(), token, session)
	if err != nil || got.Interview == nil {
		e.t.Fatalf("open %s: %+v %v", token, got, err)
	}
	return *got.Interview
}

func TestInterviewRoutes(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Interviews")
	other := e.mustStudy(e.orgA.ID, kv.EnvLive, "Other study")
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	req, _ := kv.ValidateLinkRequest(kv.LinkRequest{Audience: "person", Context: map[string]string{"crm_id": "42"}, Note: "secret note"})
	l, _, err := e.db.CreateParticipantLink(t.Context(), p, st.ID, req, kv.NewLinkToken(), nil)
	if err != nil {
		t.Fatal(err)
	}
	withCtx := e.mustOpen(l.Token, "s")
	plain := e.mustOpen(st.LinkToken, "s2")
	e.mustOpen(other.LinkToken, "s3")
	bStudy := e.mustStudy(e.orgB.ID, kv.EnvLive, "B")
	bInterview := e.mustOpen(bStudy.LinkToken, "b")
	testEnvStudy := e.mustStudy(e.orgA.ID, kv.EnvTest, "T")
	testInterview := e.mustOpen(testEnvStudy.LinkToken, "t")

	get := "/v1/api/interviews/" + withCtx.ID.String()
	cases := append(authCases("GET", "/v1/api/interviews"), authCases("GET", get)...)
	cases = append(cases,
		scenario{name: "OK_Get", method: "GET", path: get, key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got map[string]any
			r.json(t, &got)
			if len(got) != 12 || got["status"] != "in_progress" || got["is_complete"] != false || got["is_test"] != true ||
				got["invite_audience"] != "person" || fmt.Sprint(got["entry_attributes"]) != "map[crm_id:42]" ||
				got["permalink"] != testBaseURL+"/app/interviews/"+withCtx.ID.String() || got["completed_at"] != nil || got["duration_seconds"] != nil {
				t.Fatalf("interview %v", got)
			}
			if strings.Contains(string(r.body), "secret note") || strings.Contains(string(r.body), "transcript") {
				t.Fatalf("interview leaks note or transcript: %s", r.body)
			}
		}},
		scenario{name: "OK_PlainLinkHasNoAudience", method: "GET", path: "/v1/api/interviews/" + plain.ID.String(), key: "a_live", wantStatus: 200, wantBody: `"invite_audience":null`},
		scenario{name: "ErrScopeMissing", method: "GET", path: get, key: "a_studies_only", wantStatus: 403},
		scenario{name: "ErrNotFound_OtherOrg", method: "GET", path: "/v1/api/interviews/" + bInterview.ID.String(), key: "a_live", wantStatus: 404},
		scenario{name: "ErrNotFound_OtherEnv", method: "GET", path: "/v1/api/interviews/" + testInterview.ID.String(), key: "a_live", wantStatus: 404},
		scenario{name: "ErrBadID", method: "GET", path: "/v1/api/interviews/x", key: "a_live", wantStatus: 422, wantBody: `"loc":["path","interview_id"]`},
		scenario{name: "OK_List", method: "GET", path: "/v1/api/interviews", key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got []research.Interview
			r.json(t, &got)
			if len(got) != 3 {
				t.Fatalf("%d interviews: %s", len(got), r.body)
			}
		}},
		scenario{name: "OK_FilterStudy", method: "GET", path: "/v1/api/interviews?study_id=" + st.ID.String(), key: "a_live", wantStatus: 200, check: func(t *testing.T, r response) {
			var got []research.Interview
			r.json(t, &got)
			if len(got) != 2 || got[0].ID != plain.ID || got[1].ID != withCtx.ID {
				t.Fatalf("filtered %s", r.body)
			}
		}},
		scenario{name: "OK_FilterStatus", method: "GET", path: "/v1/api/interviews?status=completed", key: "a_live", wantStatus: 200, wantBody: `[]`},
		scenario{name: "ErrFilterStatus", method: "GET", path: "/v1/api/interviews?status=done", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","status"]`},
		scenario{name: "ErrFilterStudyID", method: "GET", path: "/v1/api/interviews?study_id=abc", key: "a_live", wantStatus: 422, wantBody: `"loc":["query","study_id"]`},
		scenario{name: "ErrLimit", method: "GET", path: "/v1/api/interviews?limit=201", key: "a_live", wantStatus: 422},
		scenario{name: "ErrStudyCursorOnInterviews", method: "GET", path: "/v1/api/interviews?cursor=" + e.db.EncodeCursor(kv.CursorStudies, kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, st.ID), key: "a_live", wantStatus: 422},
		scenario{name: "ErrListScope", method: "GET", path: "/v1/api/interviews", key: "a_links_only", wantStatus: 403},
	)
	e.run(t, cases)

	t.Run("OK_Paging", func(t *testing.T) {
		for i := 0; i < 11; i++ {
			e.mustOpen(other.LinkToken, fmt.Sprint("page", i))
		}
		seen := map[string]bool{}
		path := "/v1/api/interviews?limit=4&study_id=" + other.ID.String()
		for pages := 1; ; pages++ {
			r := e.do("GET", path, "a_live", "")
			var got []research.Interview
			r.json(t, &got)
			for _, iv := range got {
				if seen[iv.ID.String()] {
					t.Fatal("duplicate across pages")
				}
				seen[iv.ID.String()] = true
			}
			next := r.header.Get("X-Next-Cursor")
			if next == "" {
				if pages != 3 || len(seen) != 12 {
					t.Fatalf("%d pages, %d interviews", pages, len(seen))
				}
				break
			}
			path = "/v1/api/interviews?limit=4&study_id=" + other.ID.String() + "&cursor=" + next
		}
	})
}
