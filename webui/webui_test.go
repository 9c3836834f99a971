package webui

import (
	"bytes"
	"html/template"
	"regexp"
	"strings"
	"testing"
)

func mustUI(tb testing.TB) *UI {
	tb.Helper()
	u, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func render(tb testing.TB, u *UI, page string, data any) string {
	tb.Helper()
	var b bytes.Buffer
	if err := u.Render(&b, page, data); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/static/[^"?]+)\?v=([^"]+)"`)

func TestRender(t *testing.T) {
	u := mustUI(t)
	cases := []struct {
		name string
		page string
		data any
		want []string
	}{
		{"OK_Welcome", PageInterview, InterviewPage{Title: "Rotas <b>now</b>", Questions: 7, Minutes: 11, API: "/i/abc"},
			[]string{"Rotas &lt;b&gt;now&lt;/b&gt;", "7 questions, about 11 minutes", "Skip this question", "Powered by interviewd", `id="rehearsal" role="note" hidden`, `data-api="/i/abc"`, `data-resume=""`, `data-phase="welcome"`, `data-notice="paused"`, `data-notice="closed"`, `data-notice="unavailable"`}},
		{"OK_Resume", PageInterview, InterviewPage{API: "/i/abc", Resume: true},
			[]string{`data-resume="1"`, `data-phase="starting"`, "Thanks for taking part"}},
		{"OK_Rehearsal", PageInterview, InterviewPage{API: "/i/abc", Questions: 1, Minutes: 1, Rehearsal: true},
			[]string{`id="rehearsal" role="note">Rehearsal — answers are not collected`, "1 question, about 1 minute<"}},
		{"OK_PausedNamesStudy", PageNotice, NoticePage{Kind: NoticePaused, Title: "Rotas & shifts"},
			[]string{"This study is paused", `<p class="eyebrow notice-study">Rotas &amp; shifts</p>`, "<title>Rotas &amp; shifts · Research interview</title>", "Powered by interviewd"}},
		{"OK_Paused", PageNotice, NoticePage{Kind: NoticePaused}, []string{"This study is paused"}},
		{"OK_Closed", PageNotice, NoticePage{Kind: NoticeClosed}, []string{"This study has closed"}},
		{"OK_Unavailable", PageNotice, NoticePage{Kind: NoticeUnavailable}, []string{"Not accepting responses right now"}},
		{"OK_NotFound", PageNotice, NoticePage{Kind: NoticeNotFound}, []string{"This link doesn't work", "<title>Link not found</title>"}},
		{"OK_Busy", PageNotice, NoticePage{Kind: NoticeBusy}, []string{"One moment, please"}},
		{"OK_Error", PageNotice, NoticePage{Kind: NoticeError}, []string{"Something went wrong"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html := render(t, u, c.page, c.data)
			for _, w := range append(c.want, "<!doctype html>", `lang="en"`, `name="viewport"`) {
				if !strings.Contains(html, w) {
					t.Fatalf("page lacks %q:\n%s", w, html)
				}
			}
			refs := assetRef.FindAllStringSubmatch(html, -1)
			if len(refs) < 2 {
				t.Fatalf("page links %d static files", len(refs))
			}
			for _, ref := range refs {
				a, ok := u.Asset(strings.TrimPrefix(ref[1], "/static/"))
				if !ok || a.Version != ref[2] {
					t.Fatalf("page links %s?v=%s, which is not a current static file", ref[1], ref[2])
				}
			}
		})
	}
	t.Run("ErrUnknownPage", func(t *testing.T) {
		if err := u.Render(&bytes.Buffer{}, "nope", nil); err == nil {
			t.Fatal("rendered an unknown page")
		}
	})
	t.Run("ErrBadDataWritesNothing", func(t *testing.T) {
		var b bytes.Buffer
		if err := u.Render(&b, PageNotice, 42); err == nil || b.Len() != 0 {
			t.Fatalf("err %v, wrote %d bytes", err, b.Len())
		}
	})
}

func TestAssets(t *testing.T) {
	u := mustUI(t)
	cases := []struct{ name, wantType string }{
		{"interview.js", "text/javascript"},
		{"interview.css", "text/css"},
		{"icon.svg", "image/svg+xml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, ok := u.Asset(c.name)
			if !ok || !strings.HasPrefix(a.ContentType, c.wantType) || len(a.Body) == 0 || len(a.Version) != 12 {
				t.Fatalf("%+v", a)
			}
			if u.AssetURL(c.name) != "/static/"+c.name+"?v="+a.Version {
				t.Fatal(u.AssetURL(c.name))
			}
		})
	}
	if _, ok := u.Asset("nope.js"); ok || u.AssetURL("nope.js") != "/static/nope.js" {
		t.Fatal("unknown asset")
	}
}

// App pages parse on first use, so a template that does not parse would only show when
// someone opens it: CheckPages parses them all, and a page parsed concurrently by many
// first requests is parsed once.
func TestAppPagesParse(t *testing.T) {
	u := mustUI(t)
	if len(u.app.pages) < 10 {
		t.Fatalf("app pages indexed: %d, want the app's page files", len(u.app.pages))
	}
	if !u.HasAppPage("app_signin") || u.HasAppPage("app_layout") || u.HasAppPage("app_partials") {
		t.Fatal("HasAppPage: want app_signin, and neither the layout nor the partials as pages")
	}
	done := make(chan *template.Template, 8)
	for range 8 {
		go func() {
			p, err := u.app.page("app_signin")
			if err != nil {
				t.Error(err)
			}
			done <- p
		}()
	}
	first := <-done
	for range 7 {
		if p := <-done; p != first {
			t.Fatal("concurrent first uses parsed the page more than once")
		}
	}
	if err := u.CheckPages(); err != nil {
		t.Fatal(err)
	}
	for name, p := range u.app.pages {
		if p.t == nil {
			t.Errorf("page %s not parsed by CheckPages", name)
		}
	}
	if _, err := u.app.page("app_nope"); err == nil || !strings.Contains(err.Error(), `no app page "app_nope"`) {
		t.Fatalf("unknown page: %v", err)
	}
}
