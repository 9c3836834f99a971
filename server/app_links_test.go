package server

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/research"
)

// appBatch posts the recruitment page's CSV form as the browser's script does:
// multipart, the CSRF token in its header.
func (e *testEnv) appBatch(t *testing.T, as appUser, study kv.ID, csv string) response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csv", csv)
	_ = mw.Close()
	req, err := http.NewRequest("POST", e.url+"/app/studies/"+study.String()+"/links/batch", &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-CSRF-Token", as.csrf)
	req.AddCookie(&http.Cookie{Name: app.SessionCookie, Value: as.token})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// TestAppRecruitmentRoles: each role does on the recruitment page what its scopes allow
// over the API, decided on the server: owners, admins and members (who hold links:write
// and studies:write) manage links and the quota, and every role reads the interviews
// list; a viewer changes nothing (TestAppRecruitmentViewer). Another organisation's
// study or link is not found, and a post without its CSRF token is refused.
func TestAppRecruitmentRoles(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Roles", "Why?"))
	links := "/app/studies/" + st.ID.String() + "/links"
	other := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, plainBrief("B", "Why?"))
	otherLink := kv.LinkIDOf(e.linkFor(other, "group", nil, ""))

	for _, c := range []struct {
		role       string
		as         appUser
		interviews int
	}{{"owner", f.owner, 200}, {"admin", f.admin, 200}, {"member", f.member, 200}} {
		t.Run(c.role, func(t *testing.T) {
			if r := e.appDo("GET", links, &c.as, nil, false); r.status != 200 || !bytes.Contains(r.body, []byte(`action="`+links+`/batch"`)) {
				t.Fatalf("page: %d", r.status)
			}
			r := e.appBatch(t, c.as, st.ID, "label,segment\n"+c.role+",smb\n")
			if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), links+"?created=1") {
				t.Fatalf("batch: %d %s", r.status, r.body)
			}
			var id string
			ls, _ := e.db.FindLinkStatuses(t.Context(), st.Partition(), st.ID)
			for _, l := range ls {
				if l.Label == c.role {
					id = l.ID.String()
				}
			}
			if id == "" {
				t.Fatalf("no link labelled %s", c.role)
			}
			if r := e.appDo("POST", links+"/"+id, &c.as, url.Values{"op": {"disable"}}, true); r.status != 303 || r.header.Get("Location") != links+"?done=disable" {
				t.Fatalf("disable: %d %s", r.status, r.body)
			}
			if r := e.appDo("POST", links+"/"+id, &c.as, url.Values{"op": {"label"}, "label": {c.role + " renamed"}}, true); r.status != 303 {
				t.Fatalf("rename: %d %s", r.status, r.body)
			}
			if r := e.appDo("POST", "/app/studies/"+st.ID.String()+"/quota", &c.as, url.Values{"quota": {"40"}}, true); r.status != 303 {
				t.Fatalf("quota: %d %s", r.status, r.body)
			}
			if r := e.appDo("GET", "/app/interviews?study="+st.ID.String(), &c.as, nil, false); r.status != c.interviews {
				t.Fatalf("interviews list: %d, want %d", r.status, c.interviews)
			}
			// Refusals: another organisation's study or link, a post without its token.
			if r := e.appDo("POST", "/app/studies/"+other.ID.String()+"/links/"+otherLink.String(), &c.as, url.Values{"op": {"disable"}}, true); r.status != 404 {
				t.Fatalf("another organisation's link: %d", r.status)
			}
			if r := e.appDo("POST", links+"/"+otherLink.String(), &c.as, url.Values{"op": {"disable"}}, true); r.status != 404 {
				t.Fatalf("another organisation's link under this study: %d", r.status)
			}
			if r := e.appDo("POST", links+"/"+id, &c.as, url.Values{"op": {"enable"}}, false); r.status != 403 {
				t.Fatalf("no CSRF token: %d", r.status)
			}
		})
	}
	ls, _ := e.db.FindLinkStatuses(t.Context(), st.Partition(), st.ID)
	for _, l := range ls {
		if !l.Disabled || !strings.HasSuffix(l.Label, " renamed") {
			t.Fatalf("link %q disabled=%v", l.Label, l.Disabled)
		}
	}
	if q, _ := e.db.FindStudyQuota(t.Context(), st.Partition(), st.ID); q.Quota != 40 {
		t.Fatalf("quota %d", q.Quota)
	}
	if b, _ := e.db.FindLinkStatuses(t.Context(), other.Partition(), other.ID); b[0].Disabled {
		t.Fatal("another organisation's link was disabled")
	}

	t.Run("OK_DownloadIsCSVNotCached", func(t *testing.T) {
		r := e.appDo("GET", links+"/csv", &f.owner, nil, false)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || r.header.Get("Cache-Control") != "no-store" ||
			!strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%d %v", r.status, r.header)
		}
		if !strings.HasPrefix(string(r.body), "label,url,audience,status,disabled,opened,started,completed,last_activity_at,segment,note\n") ||
			!strings.Contains(string(r.body), "owner renamed,"+testBaseURL+"/i/") {
			t.Fatalf("csv %s", r.body)
		}
	})
	t.Run("ErrQuotaNotANumber", func(t *testing.T) {
		r := e.appDo("POST", "/app/studies/"+st.ID.String()+"/quota", &f.owner, url.Values{"quota": {"lots"}}, true)
		if r.status != 422 || !strings.Contains(string(r.body), "The quota is a whole number") {
			t.Fatalf("%d", r.status)
		}
	})
	t.Run("ErrBatchRefusedNamesRowAndColumn", func(t *testing.T) {
		r := e.appBatch(t, f.owner, st.ID, "label,token\nKim,x\n")
		if r.status != 422 || !strings.Contains(string(r.body), `Row 2, column &#34;token&#34;`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestLinksCSVFormulaGuard(t *testing.T) {
	out := string(research.LinksCSV([]research.ParticipantLinkStatus{{Label: "=HYPERLINK(1)", URL: "u", Audience: "person", Status: "unopened",
		Context: map[string]string{"k": "+1"}, Note: "@n"}}))
	want := "label,url,audience,status,disabled,opened,started,completed,last_activity_at,k,note\n'=HYPERLINK(1),u,person,unopened,false,0,0,0,,'+1,'@n\n"
	if out != want {
		t.Fatalf("got %q\nwant %q", out, want)
	}
}

// TestAppRecruitmentViewer: a viewer reads the recruitment page and the interviews list
// but cannot make links, disable one or set the quota: refused on the server.
func TestAppRecruitmentViewer(t *testing.T) {
	e := mustServe(t)
	f := e.appParamFixtures()
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Roles", "Why?"))
	links := "/app/studies/" + st.ID.String() + "/links"
	link := kv.LinkIDOf(e.linkFor(st, "group", nil, ""))
	if r := e.appDo("GET", links, &f.viewer, nil, false); r.status != 200 {
		t.Fatalf("page: %d", r.status)
	}
	if r := e.appDo("GET", "/app/interviews?study="+st.ID.String(), &f.viewer, nil, false); r.status != 200 {
		t.Fatalf("interviews list: %d", r.status)
	}
	if r := e.appBatch(t, f.viewer, st.ID, "label,segment\nviewer,smb\n"); r.status != 403 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	if r := e.appDo("POST", links+"/"+link.String(), &f.viewer, url.Values{"op": {"disable"}}, true); r.status != 403 {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	if r := e.appDo("POST", "/app/studies/"+st.ID.String()+"/quota", &f.viewer, url.Values{"quota": {"40"}}, true); r.status != 403 {
		t.Fatalf("quota: %d %s", r.status, r.body)
	}
	ls, _ := e.db.FindLinkStatuses(t.Context(), st.Partition(), st.ID)
	if len(ls) != 1 || ls[0].Disabled {
		t.Fatalf("after the refusals: %+v", ls)
	}
}
