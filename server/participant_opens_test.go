package server

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"interviewd/kv"
)

// visitor is a participant's browser: it keeps the cookies the pages set.
type visitor struct {
	t  *testing.T
	e  *testEnv
	hc *http.Client
}

func (e *testEnv) visitor(t *testing.T) *visitor {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &visitor{t: t, e: e, hc: &http.Client{Jar: jar}}
}

// visit opens the invite page of token and returns its body; it expects 200.
func (b *visitor) visit(token string) string {
	b.t.Helper()
	return b.send("GET", "/i/"+token)
}

func (b *visitor) send(method, path string) string {
	b.t.Helper()
	req, err := http.NewRequest(method, b.e.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, body)
	}
	return string(body)
}

func (e *testEnv) linkOpens(st kv.Study) int {
	e.t.Helper()
	n, err := e.db.FindLinkOpens(e.t.Context(), st.Partition(), st.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestParticipantLinkOpens: "Link opened" counts browsers, not visits. N visits of a
// live study's invite page from K browsers count K; a browser that has started its
// interview, rehearsals and a paused study's notice count nothing; a client that keeps
// no cookie (a link preview) counts each time. The dashboard's funnel starts with the
// count, and its shares are of it.
func TestParticipantLinkOpens(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, findingsBrief())
	const K, N = 3, 11
	browsers := make([]*visitor, K)
	for i := range browsers {
		browsers[i] = e.visitor(t)
	}
	for i := range N {
		if page := browsers[i%K].visit(st.LinkToken); !strings.Contains(page, `id="welcome"`) {
			t.Fatalf("visit %d: no welcome", i)
		}
	}
	if n := e.linkOpens(st); n != K {
		t.Fatalf("%d visits from %d browsers counted %d opens", N, K, n)
	}

	t.Run("OK_StartedBrowserNotCountedAgain", func(t *testing.T) {
		fresh := e.visitor(t)
		fresh.send("POST", "/i/"+st.LinkToken+"/session") // started without the page: no open
		if page := fresh.visit(st.LinkToken); !strings.Contains(page, `data-resume="1"`) {
			t.Fatal("the started browser is not resumed")
		}
		browsers[0].send("POST", "/i/"+st.LinkToken+"/session")
		browsers[0].visit(st.LinkToken)
		if n := e.linkOpens(st); n != K {
			t.Fatalf("%d opens after started browsers came back, want %d", n, K)
		}
	})
	t.Run("OK_RehearsalAndPausedNotCounted", func(t *testing.T) {
		rehearsal := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, findingsBrief())
		paused := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModePaused, findingsBrief())
		b := e.visitor(t)
		b.visit(rehearsal.LinkToken)
		if page := b.visit(paused.LinkToken); !strings.Contains(page, "This study is paused") {
			t.Fatal("no paused notice")
		}
		if n, m := e.linkOpens(rehearsal), e.linkOpens(paused); n != 0 || m != 0 {
			t.Fatalf("rehearsal %d, paused %d opens", n, m)
		}
	})
	t.Run("OK_NoCookieCountsEachTime", func(t *testing.T) {
		for range 2 {
			if r := e.do("GET", "/i/"+st.LinkToken, "", ""); r.status != 200 {
				t.Fatalf("%d", r.status)
			}
		}
		if n := e.linkOpens(st); n != K+2 {
			t.Fatalf("%d opens, want %d", n, K+2)
		}
	})
	t.Run("OK_Dashboard", func(t *testing.T) {
		// K+2 opened, 2 started (one of them without opening the page), none answered.
		wantPage(t, owner.get(t, "/app/studies/"+st.ID.String()+"/dashboard"), 200,
			`<th scope="col">Of link opened</th>`,
			`<th scope="row">Link opened</th><td>5</td><td>100%</td>`,
			`<th scope="row">Started</th><td>2</td><td>40%</td>`,
			`<th scope="row">Completed</th><td>0</td><td>0%</td>`,
			"5 opened the invite link, 2 started an interview")
	})
}
