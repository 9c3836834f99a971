package app

import (
	"html/template"
	"net/url"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Settings → Security: the person's two-step verification (an authenticator app with
// a QR code, recovery codes shown once), where they are signed in, and for owners and
// admins the organisation's policies: require_mfa, and whether codes by email count as
// a second step (kv.Org.TwoStepEmail).

func (s *App) appSecurityRoutes() []appRoute {
	return append(s.appReverifyRoutes(), []appRoute{
		{"GET", "/settings/security", AccessMember, s.handleAppSecurity},
		{"POST", "/settings/security/totp", AccessMember, s.handleAppTOTPBegin},
		{"POST", "/settings/security/totp/confirm", AccessMember, s.handleAppTOTPConfirm},
		{"POST", "/settings/security/totp/disable", AccessMember, s.handleAppTOTPDisable},
		{"POST", "/settings/security/recovery-codes", AccessMember, s.handleAppRecoveryCodes},
		{"POST", "/settings/security/email-fallback", AccessMember, s.handleAppEmailFallback},
		{"POST", "/settings/security/sessions/{session_id}/revoke", AccessMember, s.handleAppSessionRevoke},
		{"POST", "/settings/security/sessions/revoke-others", AccessMember, s.handleAppSessionsRevokeOthers},
		{"POST", "/settings/security/require-mfa", AccessAdmin, s.handleAppRequireMFA},
		{"POST", "/settings/security/email-codes", AccessAdmin, s.handleAppEmailCodes},
	}...)
}

type appTOTPSetup struct {
	QR     template.URL
	Secret string
	// URL is the otpauth:// address the QR code shows. The confirm form carries it
	// back, so a mistyped code re-shows the same code instead of a new secret; kv keeps
	// the secret it checks against.
	URL string
}

// totpSetupOf rebuilds the set-up display from its otpauth:// address.
func TOTPSetupOf(otpauth string) (*appTOTPSetup, bool) {
	u, err := url.Parse(otpauth)
	if err != nil || u.Scheme != "otpauth" || len(otpauth) > 1000 {
		return nil, false
	}
	secret := u.Query().Get("secret")
	if secret == "" {
		return nil, false
	}
	qr, err := qrDataURI(otpauth)
	if err != nil {
		return nil, false
	}
	return &appTOTPSetup{QR: qr, Secret: secret, URL: otpauth}, true
}

type appSessionRow struct {
	ID, Agent, IP, Created, LastSeen string
	Current                          bool
}

type appSecurityPage struct {
	TOTPEnabled   bool
	EmailFallback bool // a code by email may stand in for the authenticator
	RecoveryLeft  int
	RecoveryCodes []string // only right after they were made
	Setup         *appTOTPSetup
	Sessions      []appSessionRow
	OrgRequires   bool
	RequireMFA    bool
	CanSetMFA     bool
	EmailCodes    bool // the organisation accepts codes by email as a second step
	Errors        []string
	Phone         appPhoneSection // text messages (settings_phone.go)
	PhoneErrors   []string
	Reverify      *appReverify // a refused change asks for a current code (settings_reverify.go)
}

func (s *App) securityPage(r *pipeline.Request) (*appSecurityPage, error) {
	a := appOf(r)
	sessions, err := s.DB.FindSessions(r.Ctx, a.auth.User.ID)
	if err != nil {
		return nil, err
	}
	page := &appSecurityPage{TOTPEnabled: a.auth.User.TOTPEnabled, RecoveryLeft: a.auth.User.RecoveryCodesLeft,
		EmailFallback: a.auth.User.EmailFallback,
		OrgRequires:   a.auth.Org.RequireMFA, RequireMFA: a.auth.Org.RequireMFA, CanSetMFA: a.auth.Role.Manages(),
		EmailCodes: a.auth.Org.TwoStepEmail,
		Phone:      s.phoneSection(r)}
	for _, ss := range sessions {
		page.Sessions = append(page.Sessions, appSessionRow{ID: ss.ID.String(), Agent: browserName(ss.UserAgent),
			IP: pipeline.OrDefault(ss.IP, "unknown address"), Created: appDate(ss.CreatedAt), LastSeen: appDate(ss.LastSeenAt),
			Current: ss.ID == a.auth.Session.ID})
	}
	return page, nil
}

// browserName is a short, human name for a user agent: enough to recognise a session.
func browserName(ua string) string {
	var browser, system string
	switch {
	case strings.Contains(ua, "Edg/"):
		browser = "Edge"
	case strings.Contains(ua, "Firefox/"):
		browser = "Firefox"
	case strings.Contains(ua, "Chrome/"), strings.Contains(ua, "Chromium/"):
		browser = "Chrome"
	case strings.Contains(ua, "Safari/"):
		browser = "Safari"
	}
	switch {
	case strings.Contains(ua, "iPhone"), strings.Contains(ua, "iPad"):
		system = "iOS"
	case strings.Contains(ua, "Android"):
		system = "Android"
	case strings.Contains(ua, "Mac OS X"):
		system = "macOS"
	case strings.Contains(ua, "Windows"):
		system = "Windows"
	case strings.Contains(ua, "Linux"):
		system = "Linux"
	}
	switch {
	case browser != "" && system != "":
		return browser + " on " + system
	case browser != "":
		return browser
	case system != "":
		return system
	}
	return "Unknown browser"
}

func (s *App) renderSecurity(r *pipeline.Request, page *appSecurityPage, status int, flash string, bad bool) {
	r.Out = &appPage{name: "app_settings_security", status: status, title: "Security", nav: webui.NavSettings,
		sub: "security", flash: flash, bad: bad, data: page}
}

func (s *App) handleAppSecurity(r *pipeline.Request) error {
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	s.renderSecurity(r, page, 0, "", false)
	return nil
}

// securityRefusal shows a refused security action on the page, or returns err when it
// is not the person's to fix.
func (s *App) securityRefusal(r *pipeline.Request, err error) error {
	switch kv.ErrorCode(err) {
	case kv.EINVALID, kv.ECONFLICT, kv.EFORBIDDEN, kv.EUNAUTHORIZED:
	default:
		return err
	}
	page, perr := s.securityPage(r)
	if perr != nil {
		return perr
	}
	ae := pipeline.ToAPIError(err)
	r.Info.Code = ae.Code
	page.Errors = []string{ae.Detail}
	if ae.Code == "reverify_required" {
		page.Reverify = reverifyFor(appOf(r).auth.User, appOf(r).auth.Org)
	}
	status := ae.Status
	if status == 401 {
		status = 422 // a wrong code here does not end the session
	}
	s.renderSecurity(r, page, status, "", false)
	return nil
}

func (s *App) handleAppTOTPBegin(r *pipeline.Request) error {
	setup, err := s.DB.BeginTOTP(r.Ctx, appOf(r).token)
	if err != nil {
		return s.securityRefusal(r, err)
	}
	qr, err := qrDataURI(setup.URL)
	if err != nil {
		return err
	}
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	page.Setup = &appTOTPSetup{QR: qr, Secret: setup.Secret, URL: setup.URL}
	s.renderSecurity(r, page, 0, "", false)
	return nil
}

func (s *App) handleAppTOTPConfirm(r *pipeline.Request) error {
	a := appOf(r)
	codes, err := s.DB.ConfirmTOTP(r.Ctx, a.token, formValue(r, "code"))
	if err != nil {
		setup, ok := TOTPSetupOf(formValue(r, "setup"))
		if code := kv.ErrorCode(err); ok && (code == kv.EUNAUTHORIZED || code == kv.EINVALID) {
			// The same QR code again with the problem, so the person can retry.
			page, perr := s.securityPage(r)
			if perr != nil {
				return perr
			}
			page.Setup = setup
			page.Errors = []string{"That code didn't match. Check the time on your phone and try the newest code."}
			r.Info.Code = "invalid_code"
			s.renderSecurity(r, page, 422, "", false)
			return nil
		}
		return s.securityRefusal(r, err)
	}
	a.auth.User.TOTPEnabled = true
	a.auth.User.RecoveryCodesLeft = len(codes)
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	page.RecoveryCodes = codes
	s.renderSecurity(r, page, 0, "Two-step verification is on.", false)
	return nil
}

func (s *App) handleAppRecoveryCodes(r *pipeline.Request) error {
	a := appOf(r)
	codes, err := s.DB.RegenerateRecoveryCodes(r.Ctx, a.token)
	if err != nil {
		return s.securityRefusal(r, err)
	}
	a.auth.User.RecoveryCodesLeft = len(codes)
	page, err := s.securityPage(r)
	if err != nil {
		return err
	}
	page.RecoveryCodes = codes
	s.renderSecurity(r, page, 0, "New recovery codes made. The old ones no longer work.", false)
	return nil
}

func (s *App) handleAppEmailFallback(r *pipeline.Request) error {
	on := formValue(r, "email_fallback") == "on"
	if _, err := s.DB.SetEmailFallback(r.Ctx, appOf(r).token, on); err != nil {
		return s.securityRefusal(r, err)
	}
	done := "fallback_off"
	if on {
		done = "fallback_on"
	}
	r.Out = appRedirect{to: "/app/settings/security?done=" + done}
	return nil
}

func (s *App) handleAppTOTPDisable(r *pipeline.Request) error {
	if _, err := s.DB.DisableTOTP(r.Ctx, appOf(r).token); err != nil {
		return s.securityRefusal(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/security?done=totp_off"}
	return nil
}

func (s *App) handleAppSessionRevoke(r *pipeline.Request) error {
	a := appOf(r)
	id, ok := kv.ParseID(r.PathParam("session_id"))
	if !ok {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "Session not found."}
	}
	if err := s.DB.RevokeSession(r.Ctx, a.auth.User.ID, id); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/security?done=session_revoked"}
	return nil
}

func (s *App) handleAppSessionsRevokeOthers(r *pipeline.Request) error {
	a := appOf(r)
	if _, err := s.DB.RevokeOtherSessions(r.Ctx, a.auth.User.ID, a.auth.Session.ID); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/security?done=sessions_revoked"}
	return nil
}

func (s *App) handleAppRequireMFA(r *pipeline.Request) error {
	a := appOf(r)
	on := formValue(r, "require_mfa") == "on"
	if !on && a.auth.Org.RequireMFA && !s.verifiedRecently(r) {
		return s.securityRefusal(r, kv.ErrReverifyRequired)
	}
	_, err := s.DB.SetRequireMFA(r.Ctx, kv.RequireMFAInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, On: on})
	if err != nil {
		return s.securityRefusal(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/security?done=policy_saved"}
	return nil
}

// handleAppEmailCodes sets whether the organisation accepts codes by email as a second
// step. Accepting them weakens two-step, so it needs a recent second step, as turning
// require_mfa off does.
func (s *App) handleAppEmailCodes(r *pipeline.Request) error {
	a := appOf(r)
	on := formValue(r, "email_codes") == "on"
	if on && !a.auth.Org.TwoStepEmail && !s.verifiedRecently(r) {
		return s.securityRefusal(r, kv.ErrReverifyRequired)
	}
	_, err := s.DB.SetTwoStepEmail(r.Ctx, kv.TwoStepEmailInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, On: on})
	if err != nil {
		return s.securityRefusal(r, err)
	}
	done := "email_codes_off"
	if on {
		done = "email_codes_on"
	}
	r.Out = appRedirect{to: "/app/settings/security?done=" + done}
	return nil
}
