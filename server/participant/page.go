package participant

import (
	"bytes"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// PageCSP allows the page's own script, style and API and nothing else: no inline
// script or style, no framing, no form posts elsewhere.
const PageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; media-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// setPageHeaders are the security headers of every page. The URL of a participant page
// is a capability, so it must never leave as a referrer or sit in a shared cache.
func setPageHeaders(c *fasthttp.RequestCtx) {
	h := &c.Response.Header
	h.Set("Content-Security-Policy", PageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "microphone=(self), camera=(), geolocation=(), payment=(), usb=()")
	h.Set("Cache-Control", "no-store")
}

// participantPageSurface is the participant pages: no credential, the pages' security
// headers, the per-address limit, and HTML answers (renderParticipantPage).
func (s *Pages) participantPageSurface() *pipeline.Surface {
	return &pipeline.Surface{
		Name:   "participant_page",
		Steps:  []pipeline.Middleware{pageHeaders, s.pageLimit},
		Render: s.renderParticipantPage,
	}
}

func pageHeaders(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		setPageHeaders(r.C)
		return next(r)
	}
}

// pageLimit is admitParticipant for pages: a busy notice asks to come back in a minute.
func (s *Pages) pageLimit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		if err := s.admitParticipant(r.C); err != nil {
			r.C.Response.Header.Set("Retry-After", "60")
			return err
		}
		return next(r)
	}
}

// pageOut is a page handler's output: the template, its data and the status.
type pageOut struct {
	status int
	page   string
	data   any
}

// renderParticipantPage renders a page, or a refusal as its notice: an unknown link
// 404, too many requests 429 (busy), anything else 500. The access line carries the
// refusal's code, as the API's refusals do, so an operator can tell a bad link from a
// busy server.
func (s *Pages) renderParticipantPage(r *pipeline.Request, err error) {
	if err == nil {
		out := r.Out.(pageOut)
		s.renderPage(r.C, out.status, out.page, out.data)
		return
	}
	ae := pipeline.ToAPIError(err)
	switch ae.Status {
	case fasthttp.StatusNotFound:
		r.Info.Code = "not_found"
		s.renderPage(r.C, ae.Status, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeNotFound})
	case fasthttp.StatusTooManyRequests:
		r.Info.Code = "rate_limited"
		s.renderPage(r.C, ae.Status, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeBusy})
	default:
		r.Info.Err = ae.Error()
		s.renderPage(r.C, fasthttp.StatusInternalServerError, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeError})
	}
}

// handleParticipantPage renders the page for an invite link: the chat, or a notice
// when the study is paused, closed or not accepting responses, or the link is unknown.
// It only looks: nothing is created or spent until the page asks to start (a link
// preview or a crawler that fetches the URL costs nothing), except that a browser's
// first sight of a live study's welcome is counted as the link opened (countOpen).
func (s *Pages) handleParticipantPage(r *pipeline.Request) error {
	token := r.PathParam("token")
	if !wellFormedToken(token) {
		return errLinkNotFound
	}
	session := string(r.C.Request.Header.Cookie(SessionCookieName(token)))
	if !wellFormedSession(session) {
		session = ""
	}
	peek, err := s.DB.PeekLink(r.Ctx, token, session)
	if err != nil {
		return err
	}
	title := ""
	if b := peek.Study.Brief; b != nil && b.Title != nil {
		title = *b.Title
	}
	switch peek.State {
	case kv.LinkPaused:
		r.Out = pageOut{fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: s.PausedKind(r, peek.Study), Title: title}}
		return nil
	case kv.LinkClosed:
		r.Out = pageOut{fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeClosed, Title: title}}
		return nil
	case kv.LinkUnavailable:
		r.Out = pageOut{fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeUnavailable, Title: title}}
		return nil
	}
	page := webui.InterviewPage{API: "/i/" + token, Resume: peek.Interview != nil, Title: title,
		Rehearsal: peek.Study.Mode == kv.ModeTest}
	if peek.Interview != nil {
		page.Rehearsal = peek.Interview.IsTest
	}
	ps := peek.Study.ParticipantSettings()
	page.Welcome, page.ThankYou, page.CompletionCode = ps.WelcomeText, ps.ThankYouText, ps.IssuesCompletionCode()
	if peek.Interview == nil {
		page.Consent = ps.ConsentText // an interview already started asks for none
	}
	org, err := s.DB.FindOrgByID(r.Ctx, peek.Link.OrgID)
	if err != nil {
		return err
	}
	page.Brand = pageBrand(token, org)
	if peek.Interview == nil && peek.Study.Mode == kv.ModeLive {
		s.countOpen(r, token, peek.Study)
	}
	if b := peek.Study.Brief; b != nil {
		// The welcome's length is the design's: the questions this link will ask times a
		// realistic time per answer. The study's estimated_duration_minutes is the
		// researcher's own figure for their plans, and stays theirs.
		page.Questions, page.Minutes = moderator.PlannedLength(*b, peek.Link.Context)
	}
	r.Out = pageOut{fasthttp.StatusOK, webui.PageInterview, page}
	return nil
}

// openedCookieName marks a browser already counted as having opened a link: its path
// scopes it to the link, as the session cookie is.
func openedCookieName(token string) string { return "ivo_" + token[:min(8, len(token))] }

// countOpen counts a browser that shows the welcome of a live study's link for the
// first time (it has neither this link's session nor its opened mark) and marks it, so
// the funnel's "Link opened" counts browsers, not visits. The count is one small
// write to the study's counter, never a record per visit, and the page's per-address
// limit bounds how fast anyone can make it. A failed count costs the participant
// nothing: the page is served all the same.
func (s *Pages) countOpen(r *pipeline.Request, token string, st kv.Study) {
	h := &r.C.Request.Header
	if len(h.Cookie(openedCookieName(token))) > 0 || wellFormedSession(string(h.Cookie(SessionCookieName(token)))) {
		return
	}
	if err := s.DB.CountLinkOpen(r.Ctx, st.Partition(), st.ID, token); err != nil {
		r.Info.Err = "count the link opened: " + err.Error()
		return
	}
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(openedCookieName(token))
	ck.SetValue("1")
	ck.SetPath("/i/" + token)
	ck.SetMaxAge(int(sessionCookieMaxAge / time.Second))
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	ck.SetSecure(s.SecureCookies)
	r.C.Response.Header.SetCookie(ck)
}

func (s *Pages) renderPage(c *fasthttp.RequestCtx, status int, page string, data any) {
	var buf bytes.Buffer
	if err := s.UI.Render(&buf, page, data); err != nil {
		pipeline.InfoOf(c).Err = err.Error()
		c.SetStatusCode(fasthttp.StatusInternalServerError)
		c.SetContentType("text/plain; charset=utf-8")
		c.SetBodyString("Internal error.")
		return
	}
	c.SetStatusCode(status)
	c.SetContentType("text/html; charset=utf-8")
	c.SetBody(buf.Bytes())
}

// handleStatic serves the pages' files. A URL carrying the file's current version
// (as pages link it) may be cached for good; any other for a few minutes. ETags let a
// browser revalidate cheaply.
func (s *Pages) handleStatic(c *fasthttp.RequestCtx) {
	name, _ := c.UserValue("name").(string)
	a, ok := s.UI.Asset(name)
	if !ok {
		s.HandleNotFound(c)
		return
	}
	h := &c.Response.Header
	h.Set("X-Content-Type-Options", "nosniff")
	etag := `"` + a.Version + `"`
	h.Set("ETag", etag)
	if string(c.QueryArgs().Peek("v")) == a.Version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if inm := c.Request.Header.Peek("If-None-Match"); len(inm) > 0 && bytes.Contains(inm, []byte(etag)) {
		c.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	c.SetContentType(a.ContentType)
	c.SetBody(a.Body)
}
