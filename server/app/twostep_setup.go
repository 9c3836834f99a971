package app

import (
	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Setting up an authenticator app at the two-step check. An organisation that requires
// two-step and does not accept codes by email leaves a person with no second step no
// way through the check: they set up an authenticator here (as on Settings → Security),
// and confirming its first code passes the check. Only such a person is offered it;
// kv refuses to replace an existing authenticator before the check is passed.

const appMethodSetup = "setup"

// handleAppTwoStepSetup begins the set-up: the page shows the QR code and asks for the
// app's first code.
func (s *App) handleAppTwoStepSetup(r *pipeline.Request) error {
	next := SafeNext(formValue(r, "next"))
	page, err := s.twoStepPage(r, appMethodSetup, next)
	if err != nil {
		return err
	}
	page.Method = appMethodSetup
	setup, err := s.DB.BeginTOTP(r.Ctx, appOf(r).token)
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
func (s *App) handleAppTwoStepSetupConfirm(r *pipeline.Request) error {
	a := appOf(r)
	next := SafeNext(formValue(r, "next"))
	page, err := s.twoStepPage(r, appMethodSetup, next)
	if err != nil {
		return err
	}
	page.Method = appMethodSetup
	codes, err := s.DB.ConfirmTOTP(r.Ctx, a.token, formValue(r, "code"))
	if err != nil {
		setup, ok := TOTPSetupOf(formValue(r, "setup"))
		if code := kv.ErrorCode(err); ok && (code == kv.EUNAUTHORIZED || code == kv.EINVALID) {
			page.Setup = setup
			page.Errors = []string{"That code didn't match. Check the time on your phone and try the newest code."}
			r.Info.Code = "invalid_code"
			renderTwoStep(r, page, 422)
			return nil
		}
		return s.twoStepSetupRefusal(r, page, err)
	}
	page.Required, page.Errors = "", nil
	page.RecoveryCodes, page.Continue = codes, pipeline.OrDefault(next, "/app")
	renderTwoStep(r, page, 0)
	return nil
}

// twoStepSetupRefusal shows a refused set-up (one already on, too many wrong codes) on
// the check's page, or returns err when it is not the person's to fix.
func (s *App) twoStepSetupRefusal(r *pipeline.Request, page *appTwoStepPage, err error) error {
	switch kv.ErrorCode(err) {
	case kv.EFORBIDDEN, kv.ECONFLICT:
	default:
		return err
	}
	ae := pipeline.ToAPIError(err)
	page.Errors = []string{ae.Detail}
	r.Info.Code = ae.Code
	renderTwoStep(r, page, ae.Status)
	return nil
}
