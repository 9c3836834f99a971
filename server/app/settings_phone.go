package app

import (
	"errors"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/sms"
)

// Settings → Security → Text message: add a phone number for two-step codes (a code is
// texted to it and typed back), or remove it. Offered only when the server has an SMS
// provider (Config.SMS). Every text costs the self-hoster money, so each one is admitted
// by the sign-in limits, keyed by the person's email address, like an emailed code.

func (s *App) appPhoneRoutes() []appRoute {
	return []appRoute{
		{"POST", "/settings/security/phone", AccessMember, s.handleAppPhoneBegin},
		{"POST", "/settings/security/phone/confirm", AccessMember, s.handleAppPhoneConfirm},
		{"POST", "/settings/security/phone/remove", AccessMember, s.handleAppPhoneRemove},
	}
}

// appPhoneSection is the Security page's text-message section.
type appPhoneSection struct {
	Offered bool   // the server has an SMS provider
	Number  string // the verified number, "" for none
	Pending string // a number a code was just texted to, waiting for the code
	Typed   string // what the person typed, shown again after a refusal
}

func (s *App) phoneSection(r *pipeline.Request) appPhoneSection {
	return appPhoneSection{Offered: s.sms != nil, Number: appOf(r).auth.User.Phone}
}

// errSMSUnavailable refuses a text-message action on a server without a provider.
var errSMSUnavailable = &pipeline.APIError{Status: 422, Code: "sms_unavailable",
	Detail: "Text messages are not available: this server has no SMS provider."}

// sendSMS texts a code to the number on the request path, so a refusal (a number the
// provider will not text) can be shown to the person; nil when the provider took it.
func (s *App) sendSMS(r *pipeline.Request, to, code string) error {
	err := s.sms.Send(r.Ctx, to, sms.CodeText(code, kv.PhoneCodeTTL, s.BaseURL))
	if err != nil {
		s.Log.Warn().Err(err).Msg("send text message")
	}
	return err
}

// smsRefusal is the status and sentence for a text that could not be sent.
func smsRefusal(err error) (int, string, string) {
	var e *sms.Error
	if errors.As(err, &e) && e.BadNumber() {
		return 422, "sms_refused", "That number can't receive our texts. Check it, or use another mobile number."
	}
	return 502, "sms_failed", "The text could not be sent just now. Try again in a few minutes."
}

// renderPhone shows the Security page with the text-message section in state phone,
// and problem, if any, above it.
func (s *App) renderPhone(r *pipeline.Request, phone appPhoneSection, status int, code, problem string) error {
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	page.Phone = phone
	switch {
	case problem == "":
	case !phone.Offered && phone.Number == "":
		// No section to show it in: above the page's first section instead.
		page.Errors, r.Info.Code = []string{problem}, code
	default:
		page.PhoneErrors, r.Info.Code = []string{problem}, code
	}
	s.renderSecurity(r, page, status, "", false)
	return nil
}

func (s *App) handleAppPhoneBegin(r *pipeline.Request) error {
	phone := s.phoneSection(r)
	phone.Typed = formValue(r, "phone")
	if s.sms == nil {
		return s.renderPhone(r, phone, errSMSUnavailable.Status, errSMSUnavailable.Code, errSMSUnavailable.Detail)
	}
	if err := s.admitTwoStep(r, true); err != nil {
		return err
	}
	code, err := s.DB.BeginPhone(r.Ctx, appOf(r).token, phone.Typed)
	switch kv.ErrorCode(err) {
	case "":
	case kv.EINVALID:
		return s.renderPhone(r, phone, 422, "validation_error", appFieldMessages(err, nil)[0])
	default:
		return s.securityRefusal(r, err)
	}
	if err := s.sendSMS(r, code.Phone, code.Code); err != nil {
		status, reason, msg := smsRefusal(err)
		return s.renderPhone(r, phone, status, reason, msg)
	}
	phone.Pending, phone.Typed = code.Phone, ""
	return s.renderPhone(r, phone, 0, "", "")
}

func (s *App) handleAppPhoneConfirm(r *pipeline.Request) error {
	phone := s.phoneSection(r)
	if err := s.admitTwoStep(r, false); err != nil {
		return err
	}
	_, err := s.DB.ConfirmPhone(r.Ctx, appOf(r).token, formValue(r, "code"))
	if err == nil {
		r.Out = appRedirect{to: "/app/settings/security?done=phone_added"}
		return nil
	}
	ae := pipeline.ToAPIError(err)
	switch {
	case ae.Code == "invalid_code":
		// The same number's form again, so the person can retry with the code they have.
		if p, ok := kv.NormalizePhone(formValue(r, "phone")); ok {
			phone.Pending = p
		}
		return s.renderPhone(r, phone, 422, ae.Code, ae.Detail)
	case kv.ErrorCode(err) == kv.EUNAUTHORIZED:
		return s.renderPhone(r, phone, 422, ae.Code, ae.Detail) // code_exhausted: start again
	case kv.ErrorCode(err) == kv.ECONFLICT:
		return s.renderPhone(r, phone, ae.Status, ae.Code, ae.Detail)
	}
	return s.securityRefusal(r, err)
}

func (s *App) handleAppPhoneRemove(r *pipeline.Request) error {
	if _, err := s.DB.RemovePhone(r.Ctx, appOf(r).token); err != nil {
		if kv.ErrorCode(err) == kv.ECONFLICT {
			ae := pipeline.ToAPIError(err)
			return s.renderPhone(r, s.phoneSection(r), ae.Status, ae.Code, ae.Detail)
		}
		return s.securityRefusal(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/security?done=phone_removed"}
	return nil
}

// phoneEnding is the last digits of a number, enough for its owner to recognise it on
// a page shown before two-step has passed.
func phoneEnding(phone string) string {
	if len(phone) < 4 {
		return phone
	}
	return phone[len(phone)-4:]
}
