package server

import (
	"reflect"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// The participant JSON API under /i/{token}: public, the link token is the capability,
// and a session secret (cookie or X-Interview-Session header) picks the interview.

// headerSession carries the session secret for callers that do not keep cookies.
const headerSession = "X-Interview-Session"

// sessionCookieMaxAge keeps a participant's session across browser restarts for a while,
// so a group link's interview can be continued the next day.
const sessionCookieMaxAge = 30 * 24 * time.Hour

// sessionCookieName is the cookie of one link: its path already scopes it to the link;
// the token prefix in the name keeps links apart even in a browser that mixes paths up.
func sessionCookieName(token string) string { return "iv_" + token[:min(8, len(token))] }

// participantSession returns the session the request presents: the header, else the
// link's cookie, else "".
func participantSession(c *fasthttp.RequestCtx, token string) string {
	if v := c.Request.Header.Peek(headerSession); len(v) > 0 {
		return string(v)
	}
	return string(c.Request.Header.Cookie(sessionCookieName(token)))
}

func (s *Server) handleParticipantSession(c *fasthttp.RequestCtx) {
	infoOf(c).route = "/i/{token}/session"
	s.setAPIHeaders(c)
	if err := s.admitParticipant(c); err != nil {
		s.writeParticipantError(c, err)
		return
	}
	token, _ := c.UserValue("token").(string)
	out, err := s.openParticipantSession(s.ctx, token, participantSession(c, token))
	if err != nil {
		s.writeParticipantError(c, err)
		return
	}
	if out.Session != nil {
		s.setSessionCookie(c, token, *out.Session)
	}
	s.writeParticipantJSON(c, out)
}

func (s *Server) handleParticipantMessage(c *fasthttp.RequestCtx) {
	infoOf(c).route = "/i/{token}/messages"
	s.setAPIHeaders(c)
	if err := s.admitParticipant(c); err != nil {
		s.writeParticipantError(c, err)
		return
	}
	token, _ := c.UserValue("token").(string)
	session := participantSession(c, token)
	if !wellFormedSession(session) { // refuse before reading a body for nobody
		s.writeParticipantError(c, errNoSession)
		return
	}
	var in ParticipantMessageInput
	body, err := readBody(c, maxJSONBody)
	if err == nil {
		plan := s.part.plan
		err = plan.finish(&in, plan.bindBody(reflect.ValueOf(&in).Elem(), body))
	}
	if err != nil {
		s.writeParticipantError(c, err)
		return
	}
	out, err := s.postParticipantMessage(s.ctx, token, session, &in)
	if err != nil {
		s.writeParticipantError(c, err)
		return
	}
	s.writeParticipantJSON(c, out)
}

// handleParticipantSkip passes on the current question: the transcript records
// moderator.SkippedAnswer and the interviewer moves to the next scripted question with no
// follow-up. It takes no body and answers as POST /i/{token}/messages does.
func (s *Server) handleParticipantSkip(c *fasthttp.RequestCtx) {
	infoOf(c).route = "/i/{token}/skip"
	s.setAPIHeaders(c)
	if err := s.admitParticipant(c); err != nil {
		s.writeParticipantError(c, err)
		return
	}
	token, _ := c.UserValue("token").(string)
	session := participantSession(c, token)
	if !wellFormedSession(session) {
		s.writeParticipantError(c, errNoSession)
		return
	}
	out, err := s.postParticipantTurn(s.ctx, token, session, &ParticipantMessageInput{}, true)
	if err != nil {
		s.writeParticipantError(c, err)
		return
	}
	s.writeParticipantJSON(c, out)
}

// admitParticipant applies the per-client-address limit, so a leaked link cannot be
// used to hammer the service (or to burn an organisation's credits quickly).
func (s *Server) admitParticipant(c *fasthttp.RequestCtx) error {
	d := s.limiter.admitIP(s.now(), addrBudgetKey(s.clientIP(c)).String())
	s.setRateHeaders(c, d)
	if !d.OK {
		return &apiError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
			Detail: "Too many requests from your network; please wait a moment."}
	}
	return nil
}

func (s *Server) setSessionCookie(c *fasthttp.RequestCtx, token, session string) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(sessionCookieName(token))
	ck.SetValue(session)
	ck.SetPath("/i/" + token)
	ck.SetMaxAge(int(sessionCookieMaxAge / time.Second))
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	ck.SetSecure(s.part.secureCookies)
	c.Response.Header.SetCookie(ck)
}

// setAPIHeaders marks participant API answers private and inert: never cached (they
// carry a transcript), never sniffed, and the link URL never leaks as a referrer.
func (s *Server) setAPIHeaders(c *fasthttp.RequestCtx) {
	h := &c.Response.Header
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
}

func (s *Server) writeParticipantJSON(c *fasthttp.RequestCtx, v any) {
	raw, err := json.MarshalNoEscape(v)
	if err != nil {
		s.writeParticipantError(c, err)
		return
	}
	c.SetStatusCode(fasthttp.StatusOK)
	c.SetContentType("application/json")
	c.SetBody(raw)
}

// writeParticipantError writes err in the REST shapes. A 401 challenges for the
// session, not a bearer: this API takes no credential.
func (s *Server) writeParticipantError(c *fasthttp.RequestCtx, err error) {
	ae := toAPIError(err)
	if ae.Status == 401 {
		c.Response.Header.Set("WWW-Authenticate", `Session realm="interview"`)
	}
	writeErrorBody(c, ae)
}
