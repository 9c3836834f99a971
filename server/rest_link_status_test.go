package server

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/research"
)

// linksOf lists a study's participant links through REST.
func (e *testEnv) linksOf(key string, study kv.ID) []research.ParticipantLinkStatus {
	e.t.Helper()
	r := e.do("GET", "/v1/api/studies/"+study.String()+"/participant-links", key, "")
	if r.status != 200 {
		e.t.Fatalf("list links: %d %s", r.status, r.body)
	}
	var out []research.ParticipantLinkStatus
	r.json(e.t, &out)
	return out
}

func linkNamed(t *testing.T, ls []research.ParticipantLinkStatus, label string) research.ParticipantLinkStatus {
	t.Helper()
	for _, l := range ls {
		if l.Label == label {
			return l
		}
	}
	t.Fatalf("no link labelled %q in %+v", label, ls)
	return research.ParticipantLinkStatus{}
}

func TestParticipantLinkStatus(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Recruiting", "What did you plan this week?"))
	base := "/v1/api/studies/" + st.ID.String() + "/participant-links"
	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")

	// The contract's create answers exactly its three fields, with or without a label.
	r := e.do("POST", base, "a_live", `{"audience":"person","label":"  Dana, Acme (enterprise) ","context":{"tier":"enterprise"}}`)
	var created map[string]any
	r.json(t, &created)
	if r.status != 200 || len(created) != 3 {
		t.Fatalf("create with a label: %d %s", r.status, r.body)
	}
	token := strings.TrimPrefix(created["url"].(string), testBaseURL+"/i/")
	if r := e.do("POST", base, "a_live", `{"label":"`+strings.Repeat("x", 201)+`"}`); r.status != 422 || !strings.Contains(string(r.body), `"loc":["body","label"]`) {
		t.Fatalf("a 201-character label: %d %s", r.status, r.body)
	}

	t.Run("OK_ListShowsLabelStatusAndCounts", func(t *testing.T) {
		dana := linkNamed(t, e.linksOf("a_live", st.ID), "Dana, Acme (enterprise)")
		if dana.Status != kv.LinkUnopened || dana.Opened+dana.Started+dana.Completed != 0 || dana.Disabled || dana.LastActivityAt != nil ||
			dana.ID != kv.LinkIDOf(token) || dana.URL != created["url"] || dana.Context["tier"] != "enterprise" || dana.Audience != "person" {
			t.Fatalf("new link %+v", dana)
		}
		if page := e.do("GET", "/i/"+token, "", ""); page.status != 200 { // a browser's first sight: opened
			t.Fatalf("page %d", page.status)
		}
		e.completeInterview(token, []string{"We plan on Sundays."})
		dana = linkNamed(t, e.linksOf("a_links_only", st.ID), "Dana, Acme (enterprise)")
		if dana.Status != kv.LinkCompleted || dana.Opened != 1 || dana.Started != 1 || dana.Completed != 1 || dana.LastActivityAt == nil {
			t.Fatalf("after a completed interview %+v", dana)
		}
		list := e.do("GET", "/v1/api/interviews?link_id="+dana.ID.String(), "a_live", "")
		var ivs []research.Interview
		list.json(t, &ivs)
		if list.status != 200 || len(ivs) != 1 || ivs[0].EntryAttributes["tier"] != "enterprise" {
			t.Fatalf("interviews of the link: %d %s", list.status, list.body)
		}
	})

	t.Run("OK_DisableThenEnable", func(t *testing.T) {
		group := e.linkFor(st, "group", nil, "")
		path := base + "/" + kv.LinkIDOf(group).String()
		r := e.do("PATCH", path, "a_live", `{"disabled":true,"label":"Newsletter"}`)
		var got research.ParticipantLinkStatus
		r.json(t, &got)
		if r.status != 200 || !got.Disabled || got.Label != "Newsletter" || got.DisabledAt == nil {
			t.Fatalf("disable: %d %s", r.status, r.body)
		}
		page := e.do("GET", "/i/"+group, "", "")
		if page.status != 200 || !strings.Contains(string(page.body), "This study has closed") {
			t.Fatalf("a disabled link's page: %d %s", page.status, page.body)
		}
		if s := e.do("POST", "/i/"+group+"/session", "", ""); !strings.Contains(string(s.body), `"state":"closed"`) {
			t.Fatalf("a disabled link's session: %s", s.body)
		}
		r = e.do("PATCH", path, "a_live", `{"disabled":false}`)
		r.json(t, &got)
		if r.status != 200 || got.Disabled || got.Label != "Newsletter" {
			t.Fatalf("enable: %d %s", r.status, r.body)
		}
		if s := e.do("POST", "/i/"+group+"/session", "", ""); !strings.Contains(string(s.body), `"state":"open"`) {
			t.Fatalf("an enabled link's session: %s", s.body)
		}
	})

	t.Run("ErrRefusals", func(t *testing.T) {
		link := base + "/" + kv.LinkIDOf(token).String()
		e.run(t, append(authCases("PATCH", link), []scenario{
			{name: "ErrScopeMissing", method: "PATCH", path: link, key: "a_links_only", body: `{"disabled":true}`, wantStatus: 403},
			{name: "ErrScopeMissing_List", method: "GET", path: base, key: "a_studies_only", wantStatus: 403},
			{name: "ErrLabel", method: "PATCH", path: link, key: "a_live", body: `{"label":"a\nb"}`, wantStatus: 422, wantBody: `"type":"control_character"`},
			{name: "ErrWrongType", method: "PATCH", path: link, key: "a_live", body: `{"disabled":"yes"}`, wantStatus: 422, wantBody: `"loc":["body","disabled"]`},
			{name: "ErrUnknownField", method: "PATCH", path: link, key: "a_live", body: `{"paused":true}`, wantStatus: 422, wantBody: `extra_forbidden`},
			{name: "ErrUnknownLink", method: "PATCH", path: base + "/" + kv.NewV4().String(), key: "a_live", body: `{}`, wantStatus: 404},
			{name: "ErrOtherOrganisation", method: "PATCH", path: "/v1/api/studies/" + other.ID.String() + "/participant-links/" + kv.LinkIDOf(token).String(), key: "a_live", body: `{}`, wantStatus: 404},
			{name: "ErrTestEnvironment", method: "GET", path: base, key: "a_test", wantStatus: 404},
		}...))
	})
}

func TestParticipantLinksBatch(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Batch")
	path := "/v1/api/studies/" + st.ID.String() + "/participant-links/batch"
	body := func(csv string, extra string) string {
		raw, _ := stdjson.Marshal(csv)
		return `{"csv":` + string(raw) + extra + `}`
	}
	good := "\ufefflabel,company,plan,note\nDana,Acme,enterprise,Ask about SSO\nLee,Beta,,\n,,,\n"

	t.Run("OK_OneLinkPerRow", func(t *testing.T) {
		r := e.do("POST", path, "a_live", body(good, ""), "Idempotency-Key", "batch-1")
		var got research.ParticipantLinksBatch
		r.json(t, &got)
		if r.status != 200 || len(got.Links) != 2 || got.Emailed != 0 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		dana, lee := got.Links[0], got.Links[1]
		if dana.Label != "Dana" || dana.Audience != "person" || dana.Context["company"] != "Acme" || dana.Context["plan"] != "enterprise" ||
			dana.Note != "Ask about SSO" || len(lee.Context) != 1 || !strings.HasPrefix(lee.URL, testBaseURL+"/i/") {
			t.Fatalf("links %+v", got.Links)
		}
		again := e.do("POST", path, "a_live", body(good, ""), "Idempotency-Key", "batch-1")
		if again.status != 200 || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.status, again.body)
		}
		if n := len(e.linksOf("a_live", st.ID)); n != 2 {
			t.Fatalf("%d links after a replay, want 2", n)
		}
	})

	t.Run("OK_SemicolonsAsASpreadsheetWrites", func(t *testing.T) {
		r := e.do("POST", path, "a_live", body("Label;Region\nKim;EU\n", ""))
		var got research.ParticipantLinksBatch
		r.json(t, &got)
		if r.status != 200 || len(got.Links) != 1 || got.Links[0].Context["Region"] != "EU" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	t.Run("ErrMailNotConfigured_CreatesNothing", func(t *testing.T) {
		before := len(e.linksOf("a_live", st.ID))
		r := e.do("POST", path, "a_live", body("label,email\nAna,ana@example.com\n", `,"send_email":true`))
		if r.status != 409 || !strings.Contains(string(r.body), `"code":"mail_not_configured"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if after := len(e.linksOf("a_live", st.ID)); after != before {
			t.Fatalf("%d links, want %d: a refused batch created some", after, before)
		}
	})

	many := "label\n" + strings.Repeat("p\n", kv.LinksBatchMax+1)
	e.run(t, []scenario{
		{name: "ErrNoLabelColumn", method: "POST", path: path, key: "a_live", body: body("name,plan\nDana,pro\n", ""), wantStatus: 422, wantBody: `"msg":"Row 1: the header has no label column."`},
		{name: "ErrEmptyLabel", method: "POST", path: path, key: "a_live", body: body("label,plan\nDana,pro\n,free\n", ""), wantStatus: 422,
			wantBody: `"loc":["body","csv",3,"label"]`},
		{name: "ErrContextCell", method: "POST", path: path, key: "a_live", body: body("label,token\nDana,x\n", ""), wantStatus: 422,
			wantBody: `Row 2, column \"token\"`},
		{name: "ErrShortRow", method: "POST", path: path, key: "a_live", body: body("label,plan\nDana\n", ""), wantStatus: 422, wantBody: `"type":"row_length"`},
		{name: "ErrDuplicateColumn", method: "POST", path: path, key: "a_live", body: body("label,Plan,plan\nDana,a,b\n", ""), wantStatus: 422, wantBody: `"type":"duplicate"`},
		{name: "ErrBadEmail", method: "POST", path: path, key: "a_live", body: body("label,email\nDana,not-an-address\n", ""), wantStatus: 422, wantBody: `"loc":["body","csv",2,"email"]`},
		{name: "ErrNoRows", method: "POST", path: path, key: "a_live", body: body("label\n", ""), wantStatus: 422},
		{name: "ErrTooManyRows", method: "POST", path: path, key: "a_live", body: body(many, ""), wantStatus: 422, wantBody: `at most 1,000 people`},
		{name: "ErrTooLarge", method: "POST", path: path, key: "a_live", body: body("label\n"+strings.Repeat("x", research.LinksCSVMaxBytes), ""), wantStatus: 422, wantBody: `"type":"too_large"`},
		{name: "ErrScopeMissing", method: "POST", path: path, key: "a_links_only", body: body(good, ""), wantStatus: 403},
	})
}

func TestParticipantLinksBatchMailed(t *testing.T) {
	e, smtp := mustServeMail(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Onboarding")
	r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links/batch", "a_live",
		`{"csv":"label,email,plan\nAna,ana@example.com,pro\nBo,bo@example.com,free\n","send_email":true,"sender_name":"Acme research"}`)
	var got research.ParticipantLinksBatch
	r.json(t, &got)
	if r.status != 200 || got.Emailed != 2 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for i, to := range []string{"ana@example.com", "bo@example.com"} {
		m := smtp.Next(t, to)
		if m.Link(testBaseURL+"/i/") != got.Links[i].URL || !strings.Contains(string(m.Raw), "From: \"Acme research\" <") {
			t.Fatalf("mail to %s: from %q, link %q, want %q", to, headerFrom(m.Raw), m.Link(testBaseURL+"/i/"), got.Links[i].URL)
		}
	}
	if got.Links[0].Context["email"] != "" || len(got.Links[0].Context) != 1 {
		t.Fatalf("the address was stored as context: %+v", got.Links[0].Context)
	}
}

func TestStudyQuotaRoutes(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Quota", "What did you plan this week?"))
	path := "/v1/api/studies/" + st.ID.String() + "/quota"
	e.completeInterview(st.LinkToken, []string{"Sundays."})

	r := e.do("PUT", path, "a_live", `{"quota":2}`)
	var q research.StudyQuota
	r.json(t, &q)
	if r.status != 200 || q.Quota != 2 || q.Completed != 1 || q.Reached || q.Mode != kv.ModeLive {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	e.completeInterview(st.LinkToken, []string{"Mondays."})
	r = e.do("GET", path, "a_studies_only", "")
	r.json(t, &q)
	if r.status != 200 || !q.Reached || q.Completed != 2 || q.ReachedAt == nil || q.Mode != kv.ModePaused {
		t.Fatalf("after the quota: %d %s", r.status, r.body)
	}
	page := e.do("GET", "/i/"+st.LinkToken, "", "")
	if !strings.Contains(string(page.body), "This study has all the interviews it needs") {
		t.Fatalf("the participant page after the quota: %s", page.body)
	}
	e.run(t, []scenario{
		{name: "ErrRange", method: "PUT", path: path, key: "a_live", body: `{"quota":-1}`, wantStatus: 422, wantBody: `"loc":["body","quota"]`},
		{name: "ErrMissing", method: "PUT", path: path, key: "a_live", body: `{}`, wantStatus: 422, wantBody: `"type":"missing"`},
		{name: "ErrScopeMissing", method: "PUT", path: path, key: "a_studies_only", body: `{"quota":3}`, wantStatus: 403},
		{name: "ErrOtherOrganisation", method: "GET", path: "/v1/api/studies/" + e.mustStudy(e.orgB.ID, kv.EnvLive, "B").ID.String() + "/quota", key: "a_live", wantStatus: 404},
	})
}

// TestRecruitmentMCP: the recruitment operations are tools with the REST rules.
func TestRecruitmentMCP(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "MCP links")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			res, sc := callTool(t, cs, "create_participant_links", map[string]any{"study_id": st.ID.String(), "csv": "label,segment\nMCP " + era + ",smb\n"})
			if res.IsError {
				t.Fatalf("batch: %v", sc)
			}
			id := sc["links"].([]any)[0].(map[string]any)["id"].(string)
			res, sc = callTool(t, cs, "update_participant_link", map[string]any{"study_id": st.ID.String(), "link_id": id, "disabled": true})
			if res.IsError || sc["disabled"] != true || sc["label"] != "MCP "+era {
				t.Fatalf("disable: %v", sc)
			}
			res, sc = callTool(t, cs, "list_participant_links", map[string]any{"study_id": st.ID.String()})
			if res.IsError || !strings.Contains(stdjsonString(t, sc["items"]), `"label":"MCP `+era+`"`) {
				t.Fatalf("list: %v", sc)
			}
			res, sc = callTool(t, e.mustMCP(t, "a_links_only", era), "update_participant_link", map[string]any{"study_id": st.ID.String(), "link_id": id, "disabled": false})
			if !res.IsError || sc["code"] != "insufficient_scope" {
				t.Fatalf("links:read only: %v", sc)
			}
		})
	}
}

func stdjsonString(t *testing.T, v any) string {
	t.Helper()
	raw, err := stdjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func headerFrom(raw []byte) string {
	for _, line := range strings.Split(string(raw), "\r\n") {
		if strings.HasPrefix(line, "From: ") {
			return line
		}
	}
	return ""
}
