package app

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// What participants see, in the app: a study's Participant pages (its consent, texts
// and completion, saved through update_participant_settings as the API saves them) and
// Settings → Participant pages (the organisation's name, colour, contact and logo).
// Every member reads both; a study's settings change with studies:write, as the
// operation requires, and the organisation's brand only by owners and admins.

func (s *App) appParticipantRoutes() []appRoute {
	return []appRoute{
		{"GET", "/studies/{study_id}/participants", AccessMember, s.handleAppStudyParticipants},
		{"POST", "/studies/{study_id}/participants", AccessMember, s.handleAppStudyParticipantsSave},
		{"GET", "/settings/brand", AccessMember, s.handleAppBrand},
		{"POST", "/settings/brand", AccessAdmin, s.handleAppBrandSave},
		{"GET", "/settings/brand/logo", AccessMember, s.handleAppBrandLogo},
		{"POST", "/settings/brand/logo", AccessAdmin, s.handleAppBrandLogoUpload},
		{"POST", "/settings/brand/logo/remove", AccessAdmin, s.handleAppBrandLogoRemove},
	}
}

// buildStudyParticipantsPage reads the study's settings through the operation.
func (s *App) buildStudyParticipantsPage(ctx context.Context, p *pipeline.Principal, study kv.ID) (webui.StudyParticipantsPage, error) {
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.StudyParticipantsPage{}, err
	}
	ps, err := Call[research.ParticipantSettingsOut](ctx, s, p, "get_participant_settings", &research.GetParticipantSettingsInput{StudyID: study})
	if err != nil {
		return webui.StudyParticipantsPage{}, err
	}
	page := webui.StudyParticipantsPage{Tabs: studyTabs(p, study, webui.TabStudy), ID: d.ID.String(), Name: d.Name, Mode: string(d.Mode),
		CompletionCode: ps.CompletionCode, CanEdit: p.Has(kv.ScopeStudiesWrite), Errors: webui.FieldErrors{},
		MaxConsent: kv.MaxConsentText, MaxWelcome: kv.MaxWelcomeText, MaxThankYou: kv.MaxThankYouText, MaxRedirect: kv.MaxRedirectURL}
	page.Consent, page.Welcome, page.ThankYou, page.Redirect = deref(ps.ConsentText), deref(ps.WelcomeText), deref(ps.ThankYouText), deref(ps.CompletionRedirectURL)
	if p.Has(kv.ScopeLinksRead) {
		if l, err := Call[research.InviteLink](ctx, s, p, "get_interview_link", &research.StudyIDInput{StudyID: study}); err == nil {
			page.InviteURL = l.URL
		}
	}
	return page, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *App) handleAppStudyParticipants(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildStudyParticipantsPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	if query(r, "done") == "saved" {
		page.Notice = "Saved. Interviews from now on follow these settings."
	}
	r.Out = studyPage("Participant pages", 0, page, webui.PageStudyParticipants)
	return nil
}

// participantFormFields are the form's fields in its order, with their controls' ids.
var participantFormFields = []struct{ field, id string }{
	{"consent_text", "consent-text"}, {"welcome_text", "welcome-text"}, {"thank_you_text", "thank-you-text"},
	{"completion_redirect_url", "redirect-url"},
}

func (s *App) handleAppStudyParticipantsSave(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	// Browsers send a textarea's line breaks as CR LF; the settings keep LF, as the API takes them.
	text := func(name string) *string {
		v := strings.ReplaceAll(formValue(r, name), "\r\n", "\n")
		return &v
	}
	code := formValue(r, "completion_code") == "on"
	in := &research.UpdateParticipantSettingsInput{StudyID: id, ConsentText: text("consent_text"), WelcomeText: text("welcome_text"),
		ThankYouText: text("thank_you_text"), CompletionCode: &code, CompletionRedirectURL: text("completion_redirect_url")}
	_, err = Call[research.ParticipantSettingsOut](r.Ctx, s, r.P, "update_participant_settings", in)
	if fe := briefFormErrors(err); fe != nil {
		page, perr := s.buildStudyParticipantsPage(r.Ctx, r.P, id)
		if perr != nil {
			return perr
		}
		page.Consent, page.Welcome, page.ThankYou, page.Redirect, page.CompletionCode = *in.ConsentText, *in.WelcomeText, *in.ThankYouText, *in.CompletionRedirectURL, code
		page.Errors = fe
		page.Problems = problemsIn(fe, participantFormFields)
		r.Out = studyPage("Participant pages", 422, page, webui.PageStudyParticipants)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "/participants?done=saved"}
	return nil
}

// problemsIn lists a form's refusals in its order, each linked to its control.
func problemsIn(fe webui.FieldErrors, fields []struct{ field, id string }) []webui.Problem {
	var out []webui.Problem
	if msg := fe[""]; msg != "" {
		out = append(out, webui.Problem{Message: msg})
	}
	for _, f := range fields {
		if msg := fe[f.field]; msg != "" {
			out = append(out, webui.Problem{Target: f.id, Message: msg})
		}
	}
	return out
}

func brandAppPage(status int, data webui.BrandPage) *appPage {
	return &appPage{name: webui.PageSettingsBrand, status: status, title: "Participant pages", nav: webui.NavSettings, sub: "brand", data: data}
}

// brandNotices are the outcomes a redirect may name with ?done=.
var brandNotices = map[string]string{
	"saved":        "Saved. Participant pages show it from now on.",
	"logo":         "Logo saved.",
	"logo_removed": "Logo removed.",
}

func (s *App) buildBrandPage(ctx context.Context, p *pipeline.Principal, canEdit bool) (webui.BrandPage, error) {
	org, err := s.DB.FindOrgByID(ctx, p.Partition.Org)
	if err != nil {
		return webui.BrandPage{}, err
	}
	b := org.BrandOrZero()
	page := webui.BrandPage{OrgName: org.Name, DisplayName: b.DisplayName, Accent: b.AccentColor, ContactEmail: b.ContactEmail,
		CanEdit: canEdit, Errors: webui.FieldErrors{}, MaxName: kv.MaxDisplayName}
	if l := b.Logo; l != nil {
		page.LogoURL = "/app/settings/brand/logo?v=" + l.Version
		page.LogoInfo = strings.ToUpper(strings.TrimPrefix(l.MediaType, "image/")) + ", " + strconv.Itoa(l.Width) + " × " + strconv.Itoa(l.Height) +
			" px, " + strconv.Itoa((l.Size+1023)/1024) + " KB"
	}
	return page, nil
}

func (s *App) handleAppBrand(r *pipeline.Request) error {
	page, err := s.buildBrandPage(r.Ctx, r.P, appOf(r).auth.Role.Manages())
	if err != nil {
		return err
	}
	page.Notice = brandNotices[query(r, "done")]
	r.Out = brandAppPage(0, page)
	return nil
}

var brandFormFields = []struct{ field, id string }{
	{"display_name", "brand-name"}, {"accent_color", "brand-accent"}, {"contact_email", "brand-contact"}, {"logo", "logo-file"},
}

func (s *App) handleAppBrandSave(r *pipeline.Request) error {
	b := kv.Brand{DisplayName: formValue(r, "display_name"), AccentColor: formValue(r, "accent_color"), ContactEmail: formValue(r, "contact_email")}
	_, err := s.DB.SetBrand(r.Ctx, r.P.Partition.Org, b)
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildBrandPage(r.Ctx, r.P, true)
		if perr != nil {
			return perr
		}
		page.DisplayName, page.Accent, page.ContactEmail = b.DisplayName, b.AccentColor, b.ContactEmail
		page.Errors, page.Problems = fe, problemsIn(fe, brandFormFields)
		r.Out = brandAppPage(422, page)
		return nil
	}
	if err != nil {
		return err
	}
	s.Log.Info().Str("org_id", r.P.Partition.Org.String()).Msg("participant page brand changed")
	r.Out = appRedirect{to: "/app/settings/brand?done=saved"}
	return nil
}

// handleAppBrandLogo shows the logo to the app's own pages (the participant pages
// serve it under their link's path).
func (s *App) handleAppBrandLogo(r *pipeline.Request) error {
	logo, err := s.DB.FindLogo(r.Ctx, r.P.Partition.Org)
	if err != nil {
		return err
	}
	r.C.Response.Header.Set("X-Content-Type-Options", "nosniff")
	r.C.SetContentType(logo.MediaType)
	r.C.SetBody(logo.Data)
	r.Written = true
	return nil
}

// errLogoMissing is an upload without a logo part.
var errLogoMissing = kv.Invalid(kv.FieldError{Loc: []any{"logo"}, Type: "missing", Msg: "Choose a PNG or JPEG image to upload."})

// readLogoUpload reads the "logo" part of a multipart body, at most kv.MaxLogoBytes.
func readLogoUpload(r *pipeline.Request) ([]byte, error) {
	mediaType, params, err := mime.ParseMediaType(string(r.C.Request.Header.ContentType()))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, errLogoMissing
	}
	body := io.LimitReader(pipeline.BodyStream(r.C), kv.MaxLogoBytes+research.MaxFormOverhead)
	mr := multipart.NewReader(body, params["boundary"])
	unreadable := kv.Invalid(kv.FieldError{Loc: []any{"logo"}, Type: "multipart_invalid", Msg: "The upload could not be read; try again."})
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errLogoMissing
		}
		if err != nil {
			r.C.SetConnectionClose()
			return nil, unreadable
		}
		if part.FormName() != "logo" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, kv.MaxLogoBytes+1))
		if err != nil {
			r.C.SetConnectionClose()
			return nil, unreadable
		}
		if _, err := io.Copy(io.Discard, body); err != nil { // leave the connection at the next request
			r.C.SetConnectionClose()
		}
		if len(data) == 0 {
			return nil, errLogoMissing
		}
		return data, nil // kv.CheckLogo refuses one over the limit
	}
}

func (s *App) handleAppBrandLogoUpload(r *pipeline.Request) error {
	data, err := readLogoUpload(r)
	if err == nil {
		_, err = s.DB.SetLogo(r.Ctx, r.P.Partition.Org, data)
	}
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildBrandPage(r.Ctx, r.P, true)
		if perr != nil {
			return perr
		}
		if _, ok := fe["logo"]; !ok {
			fe = webui.FieldErrors{"logo": fe.List()[0]}
		}
		page.Errors, page.Problems = fe, problemsIn(fe, brandFormFields)
		r.Out = brandAppPage(422, page)
		return nil
	}
	if err != nil {
		return err
	}
	s.Log.Info().Str("org_id", r.P.Partition.Org.String()).Msg("participant page logo changed")
	r.Out = appRedirect{to: "/app/settings/brand?done=logo"}
	return nil
}

func (s *App) handleAppBrandLogoRemove(r *pipeline.Request) error {
	if err := s.DB.RemoveLogo(r.Ctx, r.P.Partition.Org); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/brand?done=logo_removed"}
	return nil
}
