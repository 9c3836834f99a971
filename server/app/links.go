package app

import (
	"context"
	"io"
	"strconv"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The recruitment page (/app/studies/{id}/links): a study's participant links with
// their labels, status and counts, disabling and enabling them, a CSV of people made
// into person links (optionally mailed), the links as CSV with their URLs, and the
// study's quota. Every action is a research operation (appCall), so each role may do
// here exactly what its scopes allow over the API.

func (s *App) appLinksRoutes() []appRoute {
	return []appRoute{
		{"GET", "/studies/{study_id}/links", AccessMember, s.handleAppLinks},
		{"GET", "/studies/{study_id}/links/csv", AccessMember, s.handleAppLinksCSV},
		{"POST", "/studies/{study_id}/links/batch", AccessMember, s.handleAppLinksBatch},
		{"POST", "/studies/{study_id}/links/{link_id}", AccessMember, s.handleAppLinkUpdate},
		{"POST", "/studies/{study_id}/quota", AccessMember, s.handleAppQuota},
	}
}

// linksNotices are the outcomes a redirect may name with ?done=.
var linksNotices = map[string]string{
	"disable": "Link disabled: its page now says the study is closed. Interviews under way continue.",
	"enable":  "Link enabled: it offers interviews again.",
	"label":   "Label saved.",
	"quota":   "Quota saved.",
}

func (s *App) buildLinksPage(ctx context.Context, p *pipeline.Principal, study kv.ID) (webui.LinksPage, error) {
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.LinksPage{}, err
	}
	page := webui.LinksPage{Tabs: studyTabs(p, study, webui.TabLinks), ID: d.ID.String(), Name: d.Name, Mode: string(d.Mode),
		CanLinks: p.Has(kv.ScopeLinksWrite), CanQuota: p.Has(kv.ScopeStudiesWrite), MailReady: s.MailWhere() == pipeline.MailSent}
	q, err := Call[research.StudyQuota](ctx, s, p, "get_study_quota", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return page, err
	}
	page.Quota, page.QuotaDone, page.QuotaReached, page.ReachedAt = q.Quota, q.Completed, q.Reached, wireStampPtr(q.ReachedAt)
	if !p.Has(kv.ScopeLinksRead) {
		return page, nil
	}
	links, err := Call[pipeline.List[research.ParticipantLinkStatus]](ctx, s, p, "list_participant_links", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return page, err
	}
	page.Links = make([]webui.LinkStatusRow, len(links.Items))
	for i, l := range links.Items {
		page.Links[i] = webui.LinkStatusRow{ID: l.ID.String(), Label: l.Label, URL: l.URL, Audience: l.Audience, Status: l.Status,
			StatusText: webui.StatusWords(l.Status, l.Disabled), Disabled: l.Disabled, Opened: l.Opened, Started: l.Started, Completed: l.Completed,
			Last: wireStampPtr(l.LastActivityAt), Created: wireStamp(l.CreatedAt), Context: sortedPairs(l.Context)}
		page.Opened += l.Opened
		page.Started += l.Started
		page.Completed += l.Completed
	}
	return page, nil
}

func linksPage(page webui.LinksPage, status int) *appPage {
	return &appPage{name: webui.PageStudyLinks, status: status, title: "Recruitment", nav: webui.NavStudies, data: page}
}

func (s *App) handleAppLinks(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildLinksPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	page.Notice = linksNotices[query(r, "done")]
	if n, err := strconv.Atoi(query(r, "created")); err == nil && n > 0 {
		page.Notice = strconv.Itoa(n) + " links created. Download them with their URLs below."
		if m, err := strconv.Atoi(query(r, "emailed")); err == nil && m > 0 {
			page.Notice = strconv.Itoa(n) + " links created; " + strconv.Itoa(m) + " invitations are on their way through the mail server."
		}
	}
	r.Out = linksPage(page, 0)
	return nil
}

// handleAppLinksCSV downloads the study's links with their URLs, labels, context and
// counts, under list_participant_links' scope.
func (s *App) handleAppLinksCSV(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	links, err := Call[pipeline.List[research.ParticipantLinkStatus]](r.Ctx, s, r.P, "list_participant_links", &research.StudyIDInput{StudyID: id})
	if err != nil {
		return err
	}
	r.C.SetStatusCode(200)
	r.C.Response.Header.Set("Content-Type", "text/csv; charset=utf-8")
	r.C.Response.Header.Set("Content-Disposition", `attachment; filename="links-`+id.String()[:8]+`.csv"`)
	r.C.Response.Header.Set("Cache-Control", "no-store") // the URLs are the links' secrets
	r.C.SetBody(research.LinksCSV(links.Items))
	r.Written = true
	return nil
}

// handleAppLinksBatch takes the CSV form (multipart: a file, or pasted text) through
// create_participant_links. A refused CSV comes back as the page with every problem
// listed by row and column, and the pasted text kept.
func (s *App) handleAppLinksBatch(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	in := &research.CreateParticipantLinksInput{StudyID: id}
	form, ferr := r.C.MultipartForm()
	if ferr != nil {
		return kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "multipart_expected", Msg: "Send the form with a CSV file or pasted text."})
	}
	pasted := firstValue(form.Value["csv"])
	in.CSV = pasted
	in.SendEmail = firstValue(form.Value["send_email"]) == "yes"
	in.SenderName = firstValue(form.Value["sender_name"])
	if files := form.File["file"]; len(files) > 0 && files[0].Size > 0 {
		if files[0].Size > research.LinksCSVMaxBytes {
			in.CSV = string(make([]byte, research.LinksCSVMaxBytes+1)) // refused by the operation, in its words
		} else {
			f, err := files[0].Open()
			if err != nil {
				return err
			}
			raw, err := io.ReadAll(io.LimitReader(f, research.LinksCSVMaxBytes+1))
			_ = f.Close()
			if err != nil {
				return err
			}
			in.CSV = string(raw)
		}
	}
	out, err := Call[research.ParticipantLinksBatch](r.Ctx, s, r.P, "create_participant_links", in)
	if ae := pipeline.ToAPIError(err); err != nil && (ae.Status == 422 || ae.Status == 409) {
		page, perr := s.buildLinksPage(r.Ctx, r.P, id)
		if perr != nil {
			return perr
		}
		page.CSV, page.SendEmail, page.SenderName = pasted, in.SendEmail, in.SenderName
		for _, f := range ae.Fields {
			page.Problems = append(page.Problems, f.Msg)
		}
		if len(ae.Fields) == 0 {
			page.Problems = []string{ae.Detail}
		}
		r.Out = linksPage(page, ae.Status)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "/links?created=" + strconv.Itoa(len(out.Links)) + "&emailed=" + strconv.Itoa(out.Emailed)}
	return nil
}

func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// handleAppLinkUpdate serves a link's buttons: disable, enable, and save its label.
func (s *App) handleAppLinkUpdate(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	link, err := pathID(r, "link_id")
	if err != nil {
		return err
	}
	in := &research.UpdateParticipantLinkInput{StudyID: id, LinkID: link}
	op := formValue(r, "op")
	switch op {
	case "disable", "enable":
		v := op == "disable"
		in.Disabled = &v
	case "label":
		label := formValue(r, "label")
		in.Label = &label
	default:
		return kv.Invalid(kv.FieldError{Loc: []any{"op"}, Type: "enum", Msg: "Choose disable, enable or save label."})
	}
	_, err = Call[research.ParticipantLinkStatus](r.Ctx, s, r.P, "update_participant_link", in)
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildLinksPage(r.Ctx, r.P, id)
		if perr != nil {
			return perr
		}
		page.Problems = fe.List()
		r.Out = linksPage(page, 422)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "/links?done=" + op}
	return nil
}

func (s *App) handleAppQuota(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	n, convErr := strconv.Atoi(formValue(r, "quota"))
	if convErr == nil {
		_, err = Call[research.StudyQuota](r.Ctx, s, r.P, "set_study_quota", &research.StudyQuotaInput{StudyID: id, Quota: &n})
	}
	fe := formErrors(err)
	if convErr != nil {
		fe = webui.FieldErrors{"quota": "The quota is a whole number from 0 to 100000."}
	}
	if fe != nil {
		page, perr := s.buildLinksPage(r.Ctx, r.P, id)
		if perr != nil {
			return perr
		}
		page.Errors = fe
		r.Out = linksPage(page, 422)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "/links?done=quota"}
	return nil
}
