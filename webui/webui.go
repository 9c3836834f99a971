// Package webui holds the embedded templates and static files for interviewd's web
// pages: html/template pages and plain JavaScript and CSS, served as written with no
// build step. It knows nothing of the server: the server hands each page its data and
// serves the files, so the pages can be read and changed without touching Go.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"path"
	"strings"
	"sync"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Page names for Render.
const (
	PageInterview = "interview"
	PageNotice    = "notice"
)

// Notice kinds: why a link offers no interview (or not right now).
const (
	NoticePaused      = "paused"
	NoticeFull        = "full" // paused by its quota: it has the interviews it needs
	NoticeClosed      = "closed"
	NoticeUnavailable = "unavailable" // live, but no credits left
	NoticeNotFound    = "not_found"
	NoticeBusy        = "busy"  // rate limited
	NoticeError       = "error" // the server failed
)

// InterviewPage is the data of the participant's chat page.
type InterviewPage struct {
	Title     string // the study's title, shown on the welcome card; may be empty
	Questions int    // the scripted questions this link's interview asks
	Minutes   int    // the likely length in minutes, from the questions; 0 when none
	API       string // the link's path, "/i/TOKEN": the page's JSON API lives under it
	Resume    bool   // this visitor already has an interview here: continue it at once
	Rehearsal bool   // a test-mode interview: answers are not collected

	Brand PageBrand // who is asking
	// Consent, when set, is the study's consent text: the participant ticks it before
	// Start (ConsentGiven: this visitor's interview already recorded it).
	Consent string
	// Welcome and ThankYou replace the built-in welcome introduction and thank-you.
	Welcome, ThankYou string
	// CompletionCode: the thank-you shows the interview's completion code (and, for a
	// study with a redirect, a link back to the panel, filled in by the script).
	CompletionCode bool
}

// PageBrand is the organisation running the research, as its participant pages show it.
type PageBrand struct {
	Name          string // the organisation's (display) name
	LogoURL       string // same-origin URL of its logo; "" for none
	StylesheetURL string // same-origin stylesheet of its colour; "" for the defaults
	ContactEmail  string // whom to ask about the research; "" for no one named
}

// NoticePage is the data of a page explaining why no interview is on offer.
type NoticePage struct {
	Kind  string // one of the Notice* kinds
	Title string // the study's title, when the link names a study; else ""
}

// Notices returns the notices the chat page can switch to after it has loaded (the
// study's mode can change while a participant reads the welcome).
func (p InterviewPage) Notices() []NoticePage {
	return []NoticePage{{NoticePaused, p.Title}, {NoticeClosed, p.Title}, {NoticeUnavailable, p.Title}}
}

// Asset is one static file and what caching it needs.
type Asset struct {
	Name        string
	ContentType string
	Body        []byte
	// Version is a short hash of Body. Page URLs carry it, so a browser may keep the
	// file for good and still fetch a changed one after an upgrade.
	Version string
}

// UI is the pages and the indexed static files. It is safe for concurrent use.
type UI struct {
	// pages are the participant's pages, each parsed on its first render: a server
	// that answers no participant spends nothing on them at start-up.
	pages map[string]func() (*template.Template, error)
	app   appPages // the web app's pages, parsed on first use (see app.go)
	// assets are the static files with their versions, indexed (and hashed) on first
	// use rather than at start-up.
	assets func() (map[string]Asset, error)
	// bufs are render buffers: a page is rendered whole before it is written, and a
	// fresh buffer regrown to 20-odd KB per request was a fifth of a page's cost.
	bufs sync.Pool
}

// staticTypes are the content types of the static files' extensions. Asking mime for
// them would load the system's MIME tables (/etc/mime.types): the slowest step of a
// server's start-up, for three answers known in advance.
var staticTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
}

// New names the pages and the static files; both are read on first use, so a server
// that answers no page spends nothing on them at start-up (CheckPages reads them all).
// It returns an error when the static files are missing: a broken build, never a
// condition of a running server.
func New() (*UI, error) {
	u := &UI{pages: map[string]func() (*template.Template, error){}, assets: sync.OnceValues(indexAssets)}
	if _, err := fs.Stat(staticFiles, "static"); err != nil {
		return nil, fmt.Errorf("webui: index static files: %w", err)
	}
	funcs := template.FuncMap{"asset": u.AssetURL}
	for _, page := range []string{PageInterview, PageNotice} {
		u.pages[page] = sync.OnceValues(func() (*template.Template, error) {
			t, err := template.New(page).Funcs(funcs).ParseFS(templateFiles,
				"templates/layout.html", "templates/notices.html", "templates/"+page+".html")
			if err != nil {
				return nil, fmt.Errorf("webui: parse page %s: %w", page, err)
			}
			return t, nil
		})
	}
	appFns := appFuncs()
	appFns["asset"] = u.AssetURL
	if err := u.indexApp(appFns); err != nil {
		return nil, err
	}
	return u, nil
}

// indexAssets reads every static file and computes its version.
func indexAssets() (map[string]Asset, error) {
	assets := map[string]Asset{}
	err := fs.WalkDir(staticFiles, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFiles.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		sum := sha256.Sum256(body)
		ct := staticTypes[path.Ext(name)]
		if ct == "" {
			ct = mime.TypeByExtension(path.Ext(name))
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		assets[name] = Asset{Name: name, ContentType: ct, Body: body, Version: base64.RawURLEncoding.EncodeToString(sum[:9])}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: index static files: %w", err)
	}
	return assets, nil
}

// Render writes page name with data to w. The page is rendered whole before anything
// is written, so a failure never sends half a page. It returns an error for an unknown
// page, a failed execution or a failed write.
func (u *UI) Render(w io.Writer, name string, data any) error {
	parse, ok := u.pages[name]
	if !ok {
		return fmt.Errorf("webui: no page %q", name)
	}
	t, err := parse()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("webui: render %s: %w", name, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// Asset returns the static file name ("interview.js"), and whether there is one.
func (u *UI) Asset(name string) (Asset, bool) {
	assets, _ := u.assets() // the embedded files always read: New checked they are there
	a, ok := assets[name]
	return a, ok
}

// AssetURL returns the path pages use for a static file: /static/NAME?v=VERSION. An
// unknown name still gets a path (which answers 404), so a typo shows in the browser
// rather than failing a page.
func (u *UI) AssetURL(name string) string {
	assets, _ := u.assets()
	a, ok := assets[name]
	if !ok {
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + a.Version
}
