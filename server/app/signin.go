package app

import (
	"net/url"
	"strings"
	"time"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
)

// Sign-in: an emailed six-digit code, no passwords. The pages answer the same whether
// or not the address has an account; mail goes out off the request path, so neither
// the page nor its timing says which.
//
// A code belongs to the browser that asked for it (its pre-session token): someone else
// asking for a code for your address, or typing wrong codes for it, neither replaces nor
// spends yours. The limits follow the same line: code requests and code attempts are
// counted per address and client address together, so a stranger cannot use up yours;
// only the mail sent to one address has a cap of its own (a stranger can delay a new
// code, never void the one you hold).

func (s *App) appSignInRoutes() []appRoute {
	return []appRoute{
		{"GET", "/signin", AccessPublic, s.handleAppSignInPage},
		{"POST", "/signin", AccessPublic, s.handleAppSignInRequest},
		{"POST", "/signin/code", AccessPublic, s.handleAppSignInCode},
		{"POST", "/signout", accessTwoStep, s.handleAppSignOut},
		{"GET", "/workspace", accessSession, s.handleAppWorkspacePage},
		{"POST", "/workspace", accessSession, s.handleAppWorkspaceChoose},
	}
}

// appSignInPage is the data of app_signin and app_signin_code.
type appSignInPage struct {
	Email      string
	Next       string
	Invitation string // Next when it is an invitation's page (invitationOf), else ""
	// Mail is where codes go when no mail server is configured (mailOutbox, mailLogged):
	// the pages say so, for the operator trying their own server.
	Mail   string
	Errors []string
}

func (s *App) newAppSignInPage(email, next string) appSignInPage {
	return appSignInPage{Email: email, Next: next, Invitation: invitationOf(next), Mail: s.MailWhere()}
}

func (s *App) handleAppSignInPage(r *pipeline.Request) error {
	next := SafeNext(string(r.C.QueryArgs().Peek("next")))
	if a := appOf(r); a.signed && !a.auth.TwoStepDue() {
		r.Out = appRedirect{to: pipeline.OrDefault(next, "/app")}
		return nil
	}
	email := string(r.C.QueryArgs().Peek("email")) // an accepted invitation's address
	r.Out = &appPage{name: "app_signin", title: "Sign in", bare: true, data: s.newAppSignInPage(email, next)}
	return nil
}

func (s *App) handleAppSignInRequest(r *pipeline.Request) error {
	page := s.newAppSignInPage(formValue(r, "email"), SafeNext(formValue(r, "next")))
	email, ok := kv.NormalizeEmail(page.Email)
	if !ok {
		page.Errors = []string{"Enter an email address like name@example.com."}
		r.Out = &appPage{name: "app_signin", status: 422, title: "Sign in", bare: true, data: page}
		return nil
	}
	if err := s.AdmitSignIn(r, email, true); err != nil {
		return err
	}
	code, err := s.DB.RequestSignInCode(r.Ctx, email, appOf(r).browser())
	if err != nil {
		return err
	}
	if code.Send {
		s.SendMail(mail.SignInCode(code.Email, code.Code, s.BaseURL))
	}
	page.Email = email
	r.Out = &appPage{name: "app_signin_code", title: "Enter your code", bare: true, data: page}
	return nil
}

func (s *App) handleAppSignInCode(r *pipeline.Request) error {
	page := s.newAppSignInPage(formValue(r, "email"), SafeNext(formValue(r, "next")))
	email, ok := kv.NormalizeEmail(page.Email)
	if !ok {
		r.Out = appRedirect{to: "/app/signin"}
		return nil
	}
	if err := s.AdmitSignIn(r, email, false); err != nil {
		return err
	}
	a := appOf(r)
	start, err := s.DB.SignIn(r.Ctx, kv.SignInInput{Email: email, Code: formValue(r, "code"), Browser: a.browser(),
		Previous: a.token, UserAgent: string(r.C.UserAgent()), IP: s.ClientIP(r.C).String(), OnlyWorkspace: true})
	if kv.ErrorCode(err) == kv.EUNAUTHORIZED {
		// The same words for a wrong code and an unknown address.
		page.Errors = []string{pipeline.ToAPIError(err).Detail}
		r.Info.Code = "invalid_code"
		r.Out = &appPage{name: "app_signin_code", status: 401, title: "Enter your code", bare: true, data: page}
		return nil
	}
	if err != nil {
		return err
	}
	s.setAppCookie(r, SessionCookie, start.Token, int(kv.SessionIdleTTL/time.Second))
	switch {
	case page.Invitation != "":
		// Accepting an invitation chooses its workspace; none need be chosen first.
		r.Out = appRedirect{to: page.Next}
	case !start.Session.OrgID.IsZero():
		// The person's only workspace is open already: straight in (by way of the
		// two-step check when one is due, which the page's access step asks for).
		r.Out = appRedirect{to: pipeline.OrDefault(page.Next, "/app")}
	default:
		r.Out = appRedirect{to: "/app/workspace" + nextQuery(page.Next)}
	}
	return nil
}

// nextQuery is "?next=…" for a non-empty return path. The workspace chooser is never
// a return path: it is where a sign-in goes anyway, and returning to it would loop.
func nextQuery(next string) string {
	if next == "" || strings.HasPrefix(next, "/app/workspace") {
		return ""
	}
	return "?next=" + url.QueryEscape(next)
}

func (s *App) handleAppSignOut(r *pipeline.Request) error {
	a := appOf(r)
	if err := s.DB.SignOut(r.Ctx, a.token); err != nil {
		return err
	}
	s.setAppCookie(r, SessionCookie, "", -1)
	r.Out = appRedirect{to: "/app/signin"}
	return nil
}

// appWorkspaceChoice is one organisation the user may work in.
type appWorkspaceChoice struct {
	OrgID   string
	Name    string
	Role    string
	Credits int
	Current bool
}

type appWorkspacePage struct {
	Choices []appWorkspaceChoice
	Next    string
	Errors  []string
}

func (s *App) handleAppWorkspacePage(r *pipeline.Request) error {
	a := appOf(r)
	orgs, err := s.DB.FindUserOrgs(r.Ctx, a.auth.User.ID)
	if err != nil {
		return err
	}
	page := appWorkspacePage{Next: SafeNext(string(r.C.QueryArgs().Peek("next")))}
	for _, o := range orgs {
		page.Choices = append(page.Choices, appWorkspaceChoice{OrgID: o.Org.ID.String(), Name: o.Org.Name,
			Role: string(o.Role), Credits: o.Org.Credits, Current: o.Org.ID == a.auth.Org.ID})
	}
	r.Out = &appPage{name: "app_workspace", title: "Choose a workspace", bare: true, data: page}
	return nil
}

func (s *App) handleAppWorkspaceChoose(r *pipeline.Request) error {
	a := appOf(r)
	org, ok := kv.ParseID(formValue(r, "org"))
	if !ok {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "No such workspace."}
	}
	auth, err := s.DB.ChooseWorkspace(r.Ctx, kv.WorkspaceInput{Token: a.token, OrgID: org,
		Environment: kv.Environment(formValue(r, "env"))})
	if err != nil {
		return err
	}
	a.auth = auth
	next := SafeNext(formValue(r, "next"))
	if strings.HasPrefix(next, "/app/workspace") {
		next = ""
	}
	if auth.TwoStepDue() {
		r.Out = appRedirect{to: "/app/twostep" + nextQuery(next)}
		return nil
	}
	r.Out = appRedirect{to: pipeline.OrDefault(next, "/app")}
	return nil
}
