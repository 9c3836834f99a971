package server

import (
	"interviewd/kv"
)

// Setting up an authenticator app at the two-step check. An organisation that requires
// two-step and does not accept codes by email leaves a person with no second step no
// way through the check: they set up an authenticator here (as on Settings → Security),
// and confirming its first code passes the check. Only such a person is offered it;
// kv refuses to replace an existing authenticator before the check is passed.

const appMethodSetup = "setup"

// handleAppTwoStepSetup begins the set-up: the page shows the QR code and asks for the
// app's first code.
func (s *Server) handleAppTwoStepSetup(r *request) error {
	next := safeNext(r.formValue("next"))
	page, err := s.twoStepPage(r, appMethodSetup, next)
	if err != nil {
		return err
	}
	page.Method = appMethodSetup
	setup, err := s.db.BeginTOTP(r.ctx, r.app().token)
	if err != nil {
		return s.twoStepSetupRefusal(r, page, err)
	}
	qr, err := qrDataURI(setup.URL)
	if err != nil {
		return err
	}
	page.Setup = &appTOTPSetup{QR: qr, Secret: setup.Secret, URL: setup.URL}
	renderTwoStep(r, page, 0)
	return nil
}

// handleAppTwoStepSetupConfirm checks the app's first code: right, two-step is on, the
// check is passed and the recovery codes are shown once; wrong, the same QR code again.
func (s *Server) handleAppTwoStepSetupConfirm(r *request) error {
	a := r.app()
	next := safeNext(r.formValue("next"))
	page, err := s.twoStepPage(r, appMethodSetup, next)
	if err != nil {
		return err
	}
	page.Method = appMethodSetup
	codes, err := s.db.ConfirmTOTP(r.ctx, a.token, r.formValue("code"))
	if err != nil {
		setup, ok := totpSetupOf(r.formValue("setup"))
		if code := kv.ErrorCode(err); ok && (code == kv.EUNAUTHORIZED || code == kv.EINVALID) {
			page.Setup = setup
			page.Errors = []string{"That code didn't match. Check the time on your phone and try the newest code."}
			r.info.code = "invalid_code"
			renderTwoStep(r, page, 422)
			return nil
		}
		return s.twoStepSetupRefusal(r, page, err)
	}
	page.Required, page.Errors = "", nil
	page.RecoveryCodes, page.Continue = codes, orDefault(next, "/app")
	renderTwoStep(r, page, 0)
	return nil
}

// twoStepSetupRefusal shows a refused set-up (one already on, too many wrong codes) on
// the check's page, or returns err when it is not the person's to fix.
func (s *Server) twoStepSetupRefusal(r *request, page *appTwoStepPage, err error) error {
	switch kv.ErrorCode(err) {
	case kv.EFORBIDDEN, kv.ECONFLICT:
	default:
		return err
	}
	ae := toAPIError(err)
	page.Errors = []string{ae.Detail}
	r.info.code = ae.Code
	renderTwoStep(r, page, ae.Status)
	return nil
}
