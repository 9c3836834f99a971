package app

import (
	"strconv"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Settings → Credits: the organisation's balance, its history (each interview that
// spent a credit, with its study, and each grant), and the low-credit warning an owner
// sets. Every role reads it; only an owner changes the warning.

func (s *App) appCreditsRoutes() []appRoute {
	return []appRoute{
		{"GET", "/settings/credits", AccessMember, s.handleAppCredits},
		{"POST", "/settings/credits/alert", AccessOwner, s.handleAppCreditAlert},
	}
}

// appCreditRow is one line of the credit history.
type appCreditRow struct {
	At, When string
	Grant    bool
	Amount   string // "+5", "−1"
	Balance  int
	// For a spend: the study and interview, linked when the page is in the live
	// environment (where they are).
	StudyName, StudyURL, InterviewURL string
}

type appCreditsPage struct {
	Balance    int
	AlertBelow int
	Low        bool
	// CanSetAlert: an owner's page carries the warning's form.
	CanSetAlert bool
	// MailWhere is where the low-credit mail goes ("" a mail server, "outbox", "log").
	MailWhere string
	Rows      []appCreditRow
	// Next is the address of the older page; First marks a later page (a link back).
	Next   string
	Later  bool
	Form   string // the threshold as typed, kept on a refusal
	Errors []string
}

// creditRowsShown is a history page's length.
const creditRowsShown = 50

func (s *App) creditsPage(r *pipeline.Request, form string) (*appCreditsPage, error) {
	a := appOf(r)
	org, err := s.DB.FindOrgByID(r.Ctx, a.auth.Org.ID)
	if err != nil {
		return nil, err
	}
	cursor := query(r, "after")
	hist, err := s.DB.FindCreditEntries(r.Ctx, kv.CreditFilter{OrgID: org.ID, Limit: creditRowsShown, Cursor: cursor})
	if err != nil {
		return nil, err
	}
	page := &appCreditsPage{Balance: org.Credits, AlertBelow: org.CreditAlertBelow, Low: org.LowCredits(),
		CanSetAlert: a.auth.Role == kv.RoleOwner, MailWhere: s.MailWhere(), Later: cursor != "", Form: form}
	if form == "" {
		page.Form = strconv.Itoa(org.CreditAlertBelow)
	}
	if hist.Next != "" {
		page.Next = "/app/settings/credits?after=" + hist.Next
	}
	live := a.auth.Session.Environment == kv.EnvLive
	for _, e := range hist.Items {
		row := appCreditRow{At: e.At.UTC().Format(time.RFC3339), When: appDateTime(e.At), Grant: e.Kind == kv.CreditGrant,
			Amount: signed(e.Amount), Balance: e.Balance, StudyName: e.StudyName}
		if live && e.StudyID != nil {
			row.StudyURL = "/app/studies/" + e.StudyID.String()
		}
		if live && e.InterviewID != nil {
			row.InterviewURL = "/app/interviews/" + e.InterviewID.String()
		}
		page.Rows = append(page.Rows, row)
	}
	return page, nil
}

// signed writes n with its sign, a true minus for negatives.
func signed(n int) string {
	if n < 0 {
		return "−" + strconv.Itoa(-n)
	}
	return "+" + strconv.Itoa(n)
}

func (s *App) handleAppCredits(r *pipeline.Request) error {
	page, err := s.creditsPage(r, "")
	if err != nil {
		return err
	}
	r.Out = &appPage{name: "app_settings_credits", title: "Credits", nav: webui.NavSettings, sub: "credits", data: page}
	return nil
}

// handleAppCreditAlert sets the balance under which owners are mailed and every page
// warns (0: never).
func (s *App) handleAppCreditAlert(r *pipeline.Request) error {
	a := appOf(r)
	raw := formValue(r, "below")
	below, convErr := strconv.Atoi(raw)
	if convErr != nil {
		below = -1 // not a whole number: the store's range message says what is wanted
	}
	_, err := s.DB.SetCreditAlert(r.Ctx, kv.CreditAlertInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, Below: below})
	if kv.ErrorCode(err) == kv.EINVALID {
		page, perr := s.creditsPage(r, raw)
		if perr != nil {
			return perr
		}
		page.Errors = appFieldMessages(err, map[string]string{"below": "Warn below"})
		r.Out = &appPage{name: "app_settings_credits", status: 422, title: "Credits", nav: webui.NavSettings, sub: "credits", data: page}
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/credits?done=credit_alert_saved"}
	return nil
}
