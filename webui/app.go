package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// The researcher web app's pages. Every file templates/app_*.html except the shared
// ones below is one page, named for its file ("app_signin"); adding a page is adding a
// file, no Go. A page defines "title" and "content", and may define "head" (extra
// stylesheets) and "scripts" (extra deferred scripts) — both from /static only, as the
// app's Content-Security-Policy allows nothing inline.
const (
	appLayoutFile   = "templates/app_layout.html"   // the document, header and navigation
	appPartialsFile = "templates/app_partials.html" // small shared pieces (csrf, notices, ...)
)

// Navigation sections of the app: AppShell.Nav names the active one.
const (
	NavStudies    = "studies"
	NavInterviews = "interviews"
	NavExports    = "exports"
	NavSettings   = "settings"
)

// AppShell is what the shared layout shows around every app page: who is signed in,
// in which workspace and environment, and where in the app they are. The server fills
// it from the session; pages never build it themselves.
type AppShell struct {
	Title string // the page's own title, before " · interviewd"
	// Nav is the active section (Nav*), Sub the active settings tab ("developer").
	Nav, Sub string
	// Bare pages (sign-in, two-step, choose workspace) show no navigation.
	Bare bool
	// SignedIn: a session with a passed sign-in (and two-step, when needed).
	SignedIn bool
	Email    string
	// OrgName and Env are the chosen workspace and data environment ("live"/"test");
	// empty before one is chosen.
	OrgName string
	Env     string
	Role    string // owner, admin, member (a researcher) or viewer
	// Credits is shown in the header for the live environment; CreditsLow (under the
	// threshold the owners set) adds a warning banner to every page.
	Credits    int
	CreditsLow bool
	// Workspaces is how many organisation × environment choices the user has; the
	// switcher is offered when there is more than one.
	Workspaces int
	// CSRF is the session's form token; every form posts it as "csrf".
	CSRF string
	// Flash is a one-line confirmation of the last action ("Key revoked."), FlashError
	// marks it as a problem.
	Flash      string
	FlashError bool
	// Path is the request path, so a form can return here.
	Path string
}

// Live reports whether the chosen environment is live (credits are spent).
func (s AppShell) Live() bool { return s.Env == "live" }

// Admin reports whether the role may manage the organisation (owner or admin).
func (s AppShell) Admin() bool { return s.Role == "owner" || s.Role == "admin" }

// AppPage is one rendered app page: the shell and the page's own data.
type AppPage struct {
	Shell AppShell
	Data  any
}

// appPage is one app page, parsed on first use: parsing the app's two dozen pages
// eagerly was most of a fresh process's time from exec to its first answer, for pages a
// participant-only server never shows.
type appPage struct {
	once sync.Once
	file string
	t    *template.Template
	err  error
}

// appPages indexes the app's page files; each is parsed by its first lookup.
type appPages struct {
	funcs template.FuncMap
	pages map[string]*appPage
	// base is the layout and partials, parsed once and cloned for each page: parsing
	// them again per page cost a seventh of a page's parse.
	base func() (*template.Template, error)
}

// indexApp finds every app page file; nothing is parsed yet.
func (u *UI) indexApp(funcs template.FuncMap) error {
	files, err := fs.Glob(templateFiles, "templates/app_*.html")
	if err != nil {
		return err
	}
	u.app = appPages{funcs: funcs, pages: map[string]*appPage{}}
	u.app.base = sync.OnceValues(func() (*template.Template, error) {
		base, err := template.New("app").Funcs(funcs).ParseFS(templateFiles, appLayoutFile, appPartialsFile)
		if err != nil {
			return nil, fmt.Errorf("webui: parse app layout: %w", err)
		}
		return base, nil
	})
	for _, f := range files {
		if f == appLayoutFile || f == appPartialsFile {
			continue
		}
		u.app.pages[strings.TrimSuffix(path.Base(f), ".html")] = &appPage{file: f}
	}
	return nil
}

// page returns app page name, parsing it on first use. The error is a broken build
// (a template that does not parse), never a condition of a running server; CheckPages
// finds it in tests.
func (a *appPages) page(name string) (*template.Template, error) {
	p, ok := a.pages[name]
	if !ok {
		return nil, fmt.Errorf("webui: no app page %q", name)
	}
	p.once.Do(func() {
		base, err := a.base()
		if err != nil {
			p.err = err
			return
		}
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(templateFiles, p.file)
		}
		if err != nil {
			p.err = fmt.Errorf("webui: parse app page %s: %w", name, err)
			return
		}
		p.t = t
	})
	return p.t, p.err
}

// CheckPages parses every page (the participant's and the app's) now and returns the
// first that does not parse.
func (u *UI) CheckPages() error {
	if _, err := u.assets(); err != nil {
		return err
	}
	for _, parse := range u.pages {
		if _, err := parse(); err != nil {
			return err
		}
	}
	for name := range u.app.pages {
		if _, err := u.app.page(name); err != nil {
			return err
		}
	}
	return nil
}

// HasAppPage reports whether an app page of that name exists.
func (u *UI) HasAppPage(name string) bool {
	_, ok := u.app.pages[name]
	return ok
}

// RenderApp writes app page name with p to w, whole or not at all. It returns an error
// for an unknown page, a failed execution or a failed write.
func (u *UI) RenderApp(w io.Writer, name string, p AppPage) error {
	t, err := u.app.page(name)
	if err != nil {
		return err
	}
	buf, _ := u.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() {
		if buf.Cap() <= 1<<20 { // an outsized page's buffer is not kept
			buf.Reset()
			u.bufs.Put(buf)
		}
	}()
	if err := t.ExecuteTemplate(buf, "app_layout", p); err != nil {
		return fmt.Errorf("webui: render %s: %w", name, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// appFuncs are the helpers app templates may call beside asset.
func appFuncs() template.FuncMap {
	return template.FuncMap{
		"barChart":    BarChart.SVG,
		"columnChart": ColumnChart.SVG,
		// plural picks the singular or plural word for n.
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
		// has reports whether list holds s (ticked scopes, chosen options).
		"has": func(list []string, s string) bool {
			for _, v := range list {
				if v == s {
					return true
				}
			}
			return false
		},
	}
}
