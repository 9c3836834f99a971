package app

import (
	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
)

// Re-verification on Settings → Security: a change that weakens two-step (turning it
// off, accepting email codes again, new recovery codes, an organisation no longer
// requiring it) needs a session that proved its second step in the last
// kv.ReverifyWithin. Otherwise the change is refused and the page asks for a current
// code (appReverify); once given, the person makes the change again. kv enforces the
// rule for the person's own settings; require_mfa is checked here.

type appReverify struct {
	HasTOTP   bool // an authenticator (or a recovery code) can confirm
	Email     bool // a code by email can
	EmailSent bool // one was just sent: ask for it
}

// reverifyFor is the form for u in org: a code by email confirms only as kv allows
// (kv.EmailReverifies).
func reverifyFor(u kv.User, org kv.Org) *appReverify {
	return &appReverify{HasTOTP: u.TOTPEnabled, Email: kv.EmailReverifies(u, org)}
}

func (s *App) appReverifyRoutes() []appRoute {
	return []appRoute{
		{"POST", "/settings/security/reverify", AccessMember, s.handleAppReverify},
		{"POST", "/settings/security/reverify/email", AccessMember, s.handleAppReverifyEmail},
	}
}

// verifiedRecently reports whether the request's session may weaken security now.
func (s *App) verifiedRecently(r *pipeline.Request) bool {
	return appOf(r).auth.Session.VerifiedRecently(s.Now())
}

// reverifyPage is the security page asking for a code, with problems (if any).
func (s *App) reverifyPage(r *pipeline.Request, status int, form *appReverify, problems ...string) error {
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	page.Reverify, page.Errors = form, problems
	s.renderSecurity(r, page, status, "", false)
	return nil
}

func (s *App) handleAppReverify(r *pipeline.Request) error {
	a := appOf(r)
	if err := s.admitTwoStep(r, false); err != nil {
		return err
	}
	method := kv.TwoStepMethod(formValue(r, "method"))
	_, err := s.DB.Reverify(r.Ctx, kv.ReverifyInput{Token: a.token, Method: method, Code: formValue(r, "code")})
	form := reverifyFor(a.auth.User, a.auth.Org)
	form.EmailSent = method == kv.MethodEmail
	switch {
	case err == nil:
		r.Out = appRedirect{to: "/app/settings/security?done=reverified"}
		return nil
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED && pipeline.ToAPIError(err).Code == "invalid_code":
		r.Info.Code = "invalid_code"
		return s.reverifyPage(r, 422, form, pipeline.ToAPIError(err).Detail)
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED:
		// Too many wrong codes: this session is over.
		s.setAppCookie(r, SessionCookie, "", -1)
		r.Info.Code = pipeline.ToAPIError(err).Code
		r.Out = appRedirect{to: "/app/signin"}
		return nil
	case kv.ErrorCode(err) == kv.EINVALID || kv.ErrorCode(err) == kv.ECONFLICT || kv.ErrorCode(err) == kv.EFORBIDDEN:
		ae := pipeline.ToAPIError(err)
		r.Info.Code = ae.Code
		form.EmailSent = false
		msg := ae.Detail
		if kv.ErrorCode(err) == kv.EINVALID {
			msg = "Choose how to confirm: an authenticator app, a recovery code or a code by email."
		}
		return s.reverifyPage(r, ae.Status, form, msg)
	}
	return err
}

func (s *App) handleAppReverifyEmail(r *pipeline.Request) error {
	a := appOf(r)
	if err := s.admitTwoStep(r, true); err != nil {
		return err
	}
	code, err := s.DB.RequestReverifyEmailCode(r.Ctx, a.token)
	form := reverifyFor(a.auth.User, a.auth.Org)
	switch kv.ErrorCode(err) {
	case "":
		s.SendMail(mail.TwoStepCode(code.Email, code.Code))
		form.EmailSent = true
		return s.reverifyPage(r, 0, form)
	case kv.EFORBIDDEN:
		ae := pipeline.ToAPIError(err)
		r.Info.Code = ae.Code
		return s.reverifyPage(r, ae.Status, form, ae.Detail)
	}
	return err
}
