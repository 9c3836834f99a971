package participant

import (
	"reflect"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// The participant JSON API under /i/{token}: public, the link token is the capability,
// and a session secret (cookie or X-Interview-Session header) picks the interview.

// HeaderSession carries the session secret for callers that do not keep cookies.
const HeaderSession = "X-Interview-Session"

// sessionCookieMaxAge keeps a participant's session across browser restarts for a while,
// so a group link's interview can be continued the next day.
const sessionCookieMaxAge = 30 * 24 * time.Hour

// SessionCookieName is the cookie of one link: its path already scopes it to the link;
// the token prefix in the name keeps links apart even in a browser that mixes paths up.
func SessionCookieName(token string) string { return "iv_" + token[:min(8, len(token))] }

// participantSession returns the session the request presents: the header, else the
// link's cookie, else "".
func participantSession(c *fasthttp.RequestCtx, token string) string {
	if v := c.Request.Header.Peek(HeaderSession); len(v) > 0 {
		return string(v)
	}
	return string(c.Request.Header.Cookie(SessionCookieName(token)))
}

// participantAPISurface is the participant JSON API: no credential (the link token is
// the capability, the session secret picks the interview), private and inert headers,
// the per-address limit, REST-shaped JSON answers.
func (s *Pages) participantAPISurface() *pipeline.Surface {
	return &pipeline.Surface{
		Name:   "participant",
		Steps:  []pipeline.Middleware{participantAPIHeaders, s.participantLimit},
		Render: s.renderParticipantAPI,
	}
}

func participantAPIHeaders(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		setAPIHeaders(r.C)
		return next(r)
	}
}

// participantLimit is admitParticipant as a step.
func (s *Pages) participantLimit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		if err := s.admitParticipant(r.C); err != nil {
			return err
		}
		return next(r)
	}
}

// renderParticipantAPI writes the output as JSON, or the error in the REST shapes. A
// 401 challenges for the session, not a bearer: this API takes no credential.
func (s *Pages) renderParticipantAPI(r *pipeline.Request, err error) {
	c := r.C
	if err == nil {
		var raw []byte
		var encErr error
		if turn, ok := r.Out.(ParticipantTurn); ok && turn.Completion == nil {
			raw, encErr = appendParticipantTurn(make([]byte, 0, 512), turn)
		} else {
			raw, encErr = json.MarshalNoEscape(r.Out)
		}
		if encErr == nil {
			c.SetStatusCode(fasthttp.StatusOK)
			c.SetContentType("application/json")
			c.SetBody(raw)
			return
		}
		err = encErr
	}
	ae := pipeline.ToAPIError(err).LocatedREST(s.plan)
	if ae.Status == 401 {
		c.Response.Header.Set("WWW-Authenticate", `Session realm="interview"`)
	}
	pipeline.WriteErrorBody(c, ae)
}

func (s *Pages) handleParticipantSession(r *pipeline.Request) error {
	token := r.PathParam("token")
	body, err := pipeline.ReadBody(r.C, pipeline.MaxJSONBody)
	if err != nil {
		return err
	}
	consented, err := s.sessionConsent(body)
	if err != nil {
		return err
	}
	out, err := s.openParticipantSession(r.Ctx, token, participantSession(r.C, token), consented)
	if err != nil {
		return err
	}
	if out.Session != nil {
		s.setSessionCookie(r.C, token, *out.Session)
	}
	r.Out = out
	return nil
}

func (s *Pages) handleParticipantMessage(r *pipeline.Request) error {
	token := r.PathParam("token")
	session := participantSession(r.C, token)
	if !wellFormedSession(session) { // refuse before reading a body for nobody
		return errNoSession
	}
	var in ParticipantMessageInput
	body, err := pipeline.ReadBody(r.C, pipeline.MaxJSONBody)
	if err != nil {
		return err
	}
	plan := s.plan
	var errs []kv.FieldError
	if !quickMessageInput(body, &in) {
		errs = plan.BindBody(reflect.ValueOf(&in).Elem(), body)
	}
	if err := plan.Finish(&in, errs); err != nil {
		return err
	}
	out, err := s.postParticipantMessage(r.Ctx, token, session, &in)
	if err != nil {
		return err
	}
	r.Out = out
	return nil
}

// handleParticipantSkip passes on the current question: the transcript records
// moderator.SkippedAnswer and the interviewer moves to the next scripted question with no
// follow-up. It takes no body and answers as POST /i/{token}/messages does.
func (s *Pages) handleParticipantSkip(r *pipeline.Request) error {
	token := r.PathParam("token")
	session := participantSession(r.C, token)
	if !wellFormedSession(session) {
		return errNoSession
	}
	out, err := s.postParticipantTurn(r.Ctx, token, session, &ParticipantMessageInput{}, true)
	if err != nil {
		return err
	}
	r.Out = out
	return nil
}

// admitParticipant applies the per-client-address limit, so a leaked link cannot be
// used to hammer the service (or to burn an organisation's credits quickly).
func (s *Pages) admitParticipant(c *fasthttp.RequestCtx) error {
	d := s.Limiter.AdmitIP(s.Now(), ratelimit.AddrKey(s.ClientIP(c)).String())
	s.SetRateHeaders(c, d)
	if !d.OK {
		return &pipeline.APIError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
			Detail: "Too many requests from your network; please wait a moment."}
	}
	return nil
}

func (s *Pages) setSessionCookie(c *fasthttp.RequestCtx, token, session string) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(SessionCookieName(token))
	ck.SetValue(session)
	ck.SetPath("/i/" + token)
	ck.SetMaxAge(int(sessionCookieMaxAge / time.Second))
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	ck.SetSecure(s.SecureCookies)
	c.Response.Header.SetCookie(ck)
}

// setAPIHeaders marks participant API answers private and inert: never cached (they
// carry a transcript), never sniffed, and the link URL never leaks as a referrer.
func setAPIHeaders(c *fasthttp.RequestCtx) {
	h := &c.Response.Header
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
}
