package server

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/webui"
)

// pageCSP allows the page's own script, style and API and nothing else: no inline
// script or style, no framing, no form posts elsewhere.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; media-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// setPageHeaders are the security headers of every page. The URL of a participant page
// is a capability, so it must never leave as a referrer or sit in a shared cache.
func setPageHeaders(c *fasthttp.RequestCtx) {
	h := &c.Response.Header
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "microphone=(self), camera=(), geolocation=(), payment=(), usb=()")
	h.Set("Cache-Control", "no-store")
}

// handleParticipantPage renders the page for an invite link: the chat, or a notice
// when the study is paused, closed or not accepting responses, or the link is unknown.
// It only looks: nothing is created or spent until the page asks to start (a link
// preview or a crawler that fetches the URL costs nothing).
func (s *Server) handleParticipantPage(c *fasthttp.RequestCtx) {
	infoOf(c).route = "/i/{token}"
	setPageHeaders(c)
	if err := s.admitParticipant(c); err != nil {
		c.Response.Header.Set("Retry-After", "60")
		s.renderNotice(c, fasthttp.StatusTooManyRequests, webui.NoticeBusy)
		return
	}
	token, _ := c.UserValue("token").(string)
	if !wellFormedToken(token) {
		s.renderNotice(c, fasthttp.StatusNotFound, webui.NoticeNotFound)
		return
	}
	session := string(c.Request.Header.Cookie(sessionCookieName(token)))
	if !wellFormedSession(session) {
		session = ""
	}
	peek, err := s.db.PeekLink(s.ctx, token, session)
	switch {
	case kv.ErrorCode(err) == kv.ENOTFOUND:
		s.renderNotice(c, fasthttp.StatusNotFound, webui.NoticeNotFound)
		return
	case err != nil:
		infoOf(c).err = err.Error()
		s.renderNotice(c, fasthttp.StatusInternalServerError, webui.NoticeError)
		return
	}
	title := ""
	if b := peek.Study.Brief; b != nil && b.Title != nil {
		title = *b.Title
	}
	switch peek.State {
	case kv.LinkPaused:
		s.renderPage(c, fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: webui.NoticePaused, Title: title})
		return
	case kv.LinkClosed:
		s.renderPage(c, fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeClosed, Title: title})
		return
	case kv.LinkUnavailable:
		s.renderPage(c, fasthttp.StatusOK, webui.PageNotice, webui.NoticePage{Kind: webui.NoticeUnavailable, Title: title})
		return
	}
	page := webui.InterviewPage{API: "/i/" + token, Resume: peek.Interview != nil, Title: title,
		Rehearsal: peek.Study.Mode == kv.ModeTest}
	if peek.Interview != nil {
		page.Rehearsal = peek.Interview.IsTest
	}
	if b := peek.Study.Brief; b != nil {
		// The welcome's length is the design's: the questions this link will ask times a
		// realistic time per answer. The study's estimated_duration_minutes is the
		// researcher's own figure for their plans, and stays theirs.
		page.Questions, page.Minutes = moderator.PlannedLength(*b, peek.Link.Context)
	}
	s.renderPage(c, fasthttp.StatusOK, webui.PageInterview, page)
}

// renderNotice answers a refused page. Its access line carries the refusal's code, as
// the API's refusals do, so an operator can tell a bad link from a busy server.
func (s *Server) renderNotice(c *fasthttp.RequestCtx, status int, kind string) {
	switch kind {
	case webui.NoticeNotFound:
		infoOf(c).code = "not_found"
	case webui.NoticeBusy:
		infoOf(c).code = "rate_limited"
	}
	s.renderPage(c, status, webui.PageNotice, webui.NoticePage{Kind: kind})
}

func (s *Server) renderPage(c *fasthttp.RequestCtx, status int, page string, data any) {
	var buf bytes.Buffer
	if err := s.part.ui.Render(&buf, page, data); err != nil {
		infoOf(c).err = err.Error()
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
func (s *Server) handleStatic(c *fasthttp.RequestCtx) {
	infoOf(c).route = "/static/{name}"
	name, _ := c.UserValue("name").(string)
	a, ok := s.part.ui.Asset(name)
	if !ok {
		s.handleNotFound(c)
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
