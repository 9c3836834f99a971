package server

import (
	"time"

	"interviewd/kv"
	"interviewd/mail"
)

// The two-step check after sign-in: a code from an authenticator app, a recovery code,
// or a code sent by email. Passing it rotates the session. It is due when the user has
// turned it on or the chosen organisation requires it (kv.SessionAuth.TwoStepDue).

func (s *Server) appTwoStepRoutes() []appRoute {
	return []appRoute{
		{"GET", "/twostep", accessTwoStep, s.handleAppTwoStepPage},
		{"POST", "/twostep", accessTwoStep, s.handleAppTwoStep},
		{"POST", "/twostep/email", accessTwoStep, s.handleAppTwoStepEmail},
	}
}

type appTwoStepPage struct {
	Method    string // totp, recovery or email
	HasTOTP   bool
	EmailOK   bool // codes by email are accepted
	EmailSent bool
	Required  string // why the check is asked for
	Next      string
	Errors    []string
}

func (s *Server) twoStepPage(r *request, method, next string) *appTwoStepPage {
	a := r.app()
	u := a.auth.User
	page := &appTwoStepPage{Method: method, HasTOTP: u.TOTPEnabled, EmailOK: !u.TOTPEnabled || u.EmailFallback, Next: next}
	switch m := kv.TwoStepMethod(method); {
	case !page.HasTOTP:
		page.Method = string(kv.MethodEmail)
	case m != kv.MethodTOTP && m != kv.MethodRecovery && (m != kv.MethodEmail || !page.EmailOK):
		page.Method = string(kv.MethodTOTP)
	}
	if !a.auth.User.TOTPEnabled && a.auth.Org.RequireMFA {
		page.Required = a.auth.Org.Name + " requires a second step at every sign-in. Until you set up an authenticator app, we'll email you a code."
	}
	return page
}

func (s *Server) handleAppTwoStepPage(r *request) error {
	a := r.app()
	next := safeNext(string(r.c.QueryArgs().Peek("next")))
	if !a.auth.TwoStepDue() {
		r.out = appRedirect{to: orDefault(next, "/app")}
		return nil
	}
	page := s.twoStepPage(r, string(r.c.QueryArgs().Peek("method")), next)
	r.out = &appPage{name: "app_twostep", title: "Two-step verification", bare: true, data: page}
	return nil
}

// admitTwoStep applies the sign-in limits for the session's user to a code request
// (an emailed code) or a code attempt.
func (s *Server) admitTwoStep(r *request, request bool) error {
	return s.admitSignIn(r, r.app().auth.User.Email, request)
}

func (s *Server) handleAppTwoStep(r *request) error {
	a := r.app()
	next := safeNext(r.formValue("next"))
	method := r.formValue("method")
	if err := s.admitTwoStep(r, false); err != nil {
		return err
	}
	passed, err := s.db.PassTwoStep(r.ctx, kv.PassTwoStepInput{Token: a.token, Method: kv.TwoStepMethod(method),
		Code: r.formValue("code"), UserAgent: string(r.c.UserAgent()), IP: s.clientIP(r.c).String()})
	switch {
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED && toAPIError(err).Code == "invalid_code":
		page := s.twoStepPage(r, method, next)
		page.EmailSent = method == string(kv.MethodEmail)
		page.Errors = []string{toAPIError(err).Detail}
		r.info.code = "invalid_code"
		r.out = &appPage{name: "app_twostep", status: 401, title: "Two-step verification", bare: true, data: page}
		return nil
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED:
		// Too many wrong codes: the session is gone; start again.
		s.setAppCookie(r, appSessionCookie, "", -1)
		r.info.code = toAPIError(err).Code
		r.out = appRedirect{to: "/app/signin"}
		return nil
	case kv.ErrorCode(err) == kv.EINVALID:
		page := s.twoStepPage(r, method, next)
		page.Errors = appFieldMessages(err, nil)
		r.out = &appPage{name: "app_twostep", status: 422, title: "Two-step verification", bare: true, data: page}
		return nil
	case kv.ErrorCode(err) == kv.EFORBIDDEN || kv.ErrorCode(err) == kv.ECONFLICT:
		// A method this person cannot use (now): say so on the page, with the others.
		ae := toAPIError(err)
		page := s.twoStepPage(r, method, next)
		page.Errors = []string{ae.Detail}
		r.info.code = ae.Code
		r.out = &appPage{name: "app_twostep", status: ae.Status, title: "Two-step verification", bare: true, data: page}
		return nil
	case err != nil:
		return err
	}
	s.setAppCookie(r, appSessionCookie, passed.Token, int(kv.SessionIdleTTL/time.Second))
	if passed.Session.OrgID.IsZero() {
		r.out = appRedirect{to: "/app/workspace" + nextQuery(next)}
		return nil
	}
	r.out = appRedirect{to: orDefault(next, "/app")}
	return nil
}

func (s *Server) handleAppTwoStepEmail(r *request) error {
	a := r.app()
	next := safeNext(r.formValue("next"))
	if err := s.admitTwoStep(r, true); err != nil {
		return err
	}
	code, err := s.db.RequestTwoStepEmailCode(r.ctx, a.token)
	page := s.twoStepPage(r, string(kv.MethodEmail), next)
	status := 0
	switch kv.ErrorCode(err) {
	case "":
		s.sendMail(mail.TwoStepCode(code.Email, code.Code))
		page.EmailSent = true
	case kv.EFORBIDDEN, kv.ECONFLICT:
		ae := toAPIError(err)
		page.Errors = []string{ae.Detail}
		status, r.info.code = ae.Status, ae.Code
	default:
		return err
	}
	r.out = &appPage{name: "app_twostep", status: status, title: "Two-step verification", bare: true, data: page}
	return nil
}
