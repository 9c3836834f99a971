package app

import (
	"time"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
)

// The two-step check after sign-in: a code from an authenticator app, a recovery code,
// a code texted to the user's phone (when the server has an SMS provider), or a code
// sent by email where the organisation accepts those (kv.EmailSecondStep). Passing it
// rotates the session. It is due when the user has turned it on or the chosen
// organisation requires it (kv.SessionAuth.TwoStepDue). A person the organisation
// requires it of who has no second step it accepts sets up an authenticator app here
// (twostep_setup.go).

func (s *App) appTwoStepRoutes() []appRoute {
	return []appRoute{
		{"GET", "/twostep", accessTwoStep, s.handleAppTwoStepPage},
		{"POST", "/twostep", accessTwoStep, s.handleAppTwoStep},
		{"POST", "/twostep/email", accessTwoStep, s.handleAppTwoStepEmail},
		{"POST", "/twostep/sms", accessTwoStep, s.handleAppTwoStepSMS},
		{"POST", "/twostep/totp", accessTwoStep, s.handleAppTwoStepSetup},
		{"POST", "/twostep/totp/confirm", accessTwoStep, s.handleAppTwoStepSetupConfirm},
	}
}

type appTwoStepPage struct {
	Method    string // totp, recovery, email, sms, or setup (an authenticator to set up)
	HasTOTP   bool
	EmailOK   bool // codes by email are accepted
	EmailSent bool
	// HasPhone: the user has a phone and the server can text it; PhoneEnding is the
	// number's last digits (enough to recognise it before two-step has passed).
	HasPhone    bool
	PhoneEnding string
	SMSSent     bool
	Required    string // why the check is asked for
	Next        string
	Errors      []string
	// Setup is an authenticator being set up (Method setup), RecoveryCodes its codes
	// once it is on, shown once before the person goes on to Continue.
	Setup         *appTOTPSetup
	RecoveryCodes []string
	Continue      string
}

// twoStepPage is the check's page for method (one the person can use, or the best
// they have). An error is one reading the store.
func (s *App) twoStepPage(r *pipeline.Request, method, next string) (*appTwoStepPage, error) {
	a := appOf(r)
	u := a.auth.User
	emailErr := s.DB.EmailSecondStep(r.Ctx, a.token)
	if code := kv.ErrorCode(emailErr); emailErr != nil && code != kv.EFORBIDDEN {
		return nil, emailErr
	}
	page := &appTwoStepPage{Method: method, HasTOTP: u.TOTPEnabled, Next: next, EmailOK: emailErr == nil,
		HasPhone: u.Phone != "" && s.sms != nil, PhoneEnding: phoneEnding(u.Phone)}
	// Nothing set up, and the organisation takes no code by email: set one up.
	enrol := !u.TOTPEnabled && u.Phone == "" && !page.EmailOK
	switch m := kv.TwoStepMethod(method); {
	case enrol:
		page.Method = appMethodSetup
	case m == kv.MethodSMS && page.HasPhone:
	case !page.HasTOTP && page.HasPhone && (m != kv.MethodEmail || !page.EmailOK):
		page.Method = string(kv.MethodSMS)
	case !page.HasTOTP:
		page.Method = string(kv.MethodEmail)
	case m != kv.MethodTOTP && m != kv.MethodRecovery && (m != kv.MethodEmail || !page.EmailOK):
		page.Method = string(kv.MethodTOTP)
	}
	switch org := a.auth.Org; {
	case u.TOTPEnabled || u.Phone != "" || !org.RequireMFA:
	case enrol:
		page.Required = org.Name + " requires a second step at every sign-in. Set up an authenticator app to continue."
	default:
		page.Required = org.Name + " requires a second step at every sign-in. Until you set up an authenticator app, we'll email you a code."
	}
	return page, nil
}

// renderTwoStep shows the check's page with status (0: 200).
func renderTwoStep(r *pipeline.Request, page *appTwoStepPage, status int) {
	r.Out = &appPage{name: "app_twostep", status: status, title: "Two-step verification", bare: true, data: page}
}

func (s *App) handleAppTwoStepPage(r *pipeline.Request) error {
	a := appOf(r)
	next := SafeNext(string(r.C.QueryArgs().Peek("next")))
	if !a.auth.TwoStepDue() {
		r.Out = appRedirect{to: pipeline.OrDefault(next, "/app")}
		return nil
	}
	page, err := s.twoStepPage(r, string(r.C.QueryArgs().Peek("method")), next)
	if err != nil {
		return err
	}
	renderTwoStep(r, page, 0)
	return nil
}

// admitTwoStep applies the sign-in limits for the session's user to a code request
// (an emailed code) or a code attempt.
func (s *App) admitTwoStep(r *pipeline.Request, request bool) error {
	return s.AdmitSignIn(r, appOf(r).auth.User.Email, request)
}

func (s *App) handleAppTwoStep(r *pipeline.Request) error {
	a := appOf(r)
	next := SafeNext(formValue(r, "next"))
	method := formValue(r, "method")
	if method == string(kv.MethodSMS) && s.sms == nil {
		return s.refuseTwoStepSMS(r, next)
	}
	if err := s.admitTwoStep(r, false); err != nil {
		return err
	}
	passed, err := s.DB.PassTwoStep(r.Ctx, kv.PassTwoStepInput{Token: a.token, Method: kv.TwoStepMethod(method),
		Code: formValue(r, "code"), UserAgent: string(r.C.UserAgent()), IP: s.ClientIP(r.C).String()})
	switch {
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED && pipeline.ToAPIError(err).Code == "invalid_code":
		page, perr := s.twoStepPage(r, method, next)
		if perr != nil {
			return perr
		}
		page.EmailSent = method == string(kv.MethodEmail)
		page.SMSSent = method == string(kv.MethodSMS)
		page.Errors = []string{pipeline.ToAPIError(err).Detail}
		r.Info.Code = "invalid_code"
		renderTwoStep(r, page, 401)
		return nil
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED:
		// Too many wrong codes: the session is gone; start again.
		s.setAppCookie(r, SessionCookie, "", -1)
		r.Info.Code = pipeline.ToAPIError(err).Code
		r.Out = appRedirect{to: "/app/signin"}
		return nil
	case kv.ErrorCode(err) == kv.EINVALID:
		page, perr := s.twoStepPage(r, method, next)
		if perr != nil {
			return perr
		}
		page.Errors = appFieldMessages(err, nil)
		renderTwoStep(r, page, 422)
		return nil
	case kv.ErrorCode(err) == kv.EFORBIDDEN || kv.ErrorCode(err) == kv.ECONFLICT:
		// A method this person cannot use (now): say so on the page, with the others.
		ae := pipeline.ToAPIError(err)
		page, perr := s.twoStepPage(r, method, next)
		if perr != nil {
			return perr
		}
		page.Errors = []string{ae.Detail}
		r.Info.Code = ae.Code
		renderTwoStep(r, page, ae.Status)
		return nil
	case err != nil:
		return err
	}
	s.setAppCookie(r, SessionCookie, passed.Token, int(kv.SessionIdleTTL/time.Second))
	if passed.Session.OrgID.IsZero() {
		r.Out = appRedirect{to: "/app/workspace" + nextQuery(next)}
		return nil
	}
	r.Out = appRedirect{to: pipeline.OrDefault(next, "/app")}
	return nil
}

func (s *App) handleAppTwoStepEmail(r *pipeline.Request) error {
	a := appOf(r)
	next := SafeNext(formValue(r, "next"))
	if err := s.admitTwoStep(r, true); err != nil {
		return err
	}
	code, err := s.DB.RequestTwoStepEmailCode(r.Ctx, a.token)
	page, perr := s.twoStepPage(r, string(kv.MethodEmail), next)
	if perr != nil {
		return perr
	}
	status := 0
	switch kv.ErrorCode(err) {
	case "":
		s.SendMail(mail.TwoStepCode(code.Email, code.Code))
		page.EmailSent = true
	case kv.EFORBIDDEN, kv.ECONFLICT:
		ae := pipeline.ToAPIError(err)
		page.Errors = []string{ae.Detail}
		status, r.Info.Code = ae.Status, ae.Code
	default:
		return err
	}
	renderTwoStep(r, page, status)
	return nil
}

func (s *App) handleAppTwoStepSMS(r *pipeline.Request) error {
	a := appOf(r)
	next := SafeNext(formValue(r, "next"))
	if s.sms == nil {
		return s.refuseTwoStepSMS(r, next)
	}
	if err := s.admitTwoStep(r, true); err != nil {
		return err
	}
	code, err := s.DB.RequestTwoStepSMSCode(r.Ctx, a.token)
	page, perr := s.twoStepPage(r, string(kv.MethodSMS), next)
	if perr != nil {
		return perr
	}
	status := 0
	switch kv.ErrorCode(err) {
	case "":
		if err := s.sendSMS(r, code.Phone, code.Code); err != nil {
			status, r.Info.Code, _ = smsRefusal(err)
			page.Errors = []string{"The text could not be sent just now. Try again in a few minutes, or verify another way."}
			break
		}
		page.SMSSent = true
	case kv.ECONFLICT:
		ae := pipeline.ToAPIError(err)
		page.Errors = []string{ae.Detail}
		status, r.Info.Code = ae.Status, ae.Code
	default:
		return err
	}
	renderTwoStep(r, page, status)
	return nil
}

// refuseTwoStepSMS answers a request for a texted code on a server without an SMS
// provider: 422, naming the methods this person can use instead.
func (s *App) refuseTwoStepSMS(r *pipeline.Request, next string) error {
	page, err := s.twoStepPage(r, "", next)
	if err != nil {
		return err
	}
	msg := "Codes by text message are not available on this server. "
	switch {
	case page.HasTOTP && page.EmailOK:
		msg += "Verify with an authenticator app, a recovery code or a code by email."
	case page.HasTOTP:
		msg += "Verify with an authenticator app or a recovery code."
	case page.EmailOK:
		msg += "Verify with a code by email."
	default:
		msg += "Codes by email are not accepted here either: ask whoever runs the server to set up text messages, or an owner or admin to accept codes by email."
	}
	page.Errors = []string{msg}
	r.Info.Code = errSMSUnavailable.Code
	renderTwoStep(r, page, errSMSUnavailable.Status)
	return nil
}
