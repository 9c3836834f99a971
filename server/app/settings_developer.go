package app

import (
	"strconv"
	"strings"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Settings → Developer: API keys. Owners and admins see and revoke every key of the
// organisation, members only their own (DECISIONS §3). A key's scopes are limited by
// its creator's role, and its secret is shown once, on the page that created it.

func (s *App) appDeveloperRoutes() []appRoute {
	return []appRoute{
		{"GET", "/settings/developer", AccessMember, s.handleAppDeveloper},
		{"POST", "/settings/developer/keys", AccessMember, s.handleAppKeyCreate},
		{"POST", "/settings/developer/keys/{key_id}/revoke", AccessMember, s.handleAppKeyRevoke},
	}
}

// appScopeDescs say what each scope allows, in the words of the API contract.
var appScopeDescs = map[string]string{
	kv.ScopeStudiesRead:   "read studies, study jobs and simulations",
	kv.ScopeStudiesWrite:  "create and update studies, run simulations, pause and close",
	kv.ScopeStudiesGoLive: "take a study live",
	kv.ScopeLinksRead:     "read a study's invite link",
	kv.ScopeLinksWrite:    "create participant links with context",
	kv.ScopeExportRead:    "list interviews, read transcripts and exports",
	kv.ScopeAgentRun:      "send agent-to-agent (A2A) messages",
}

type appScopeOption struct {
	Name, Desc string
	Allowed    bool
}

type appExpiryOption struct{ Value, Label string }

type appKeyRow struct {
	ID, Name, Env, Hint, Owner string
	Scopes                     []string
	Expires, Revoked           string
	CanRevoke                  bool
}

type appKeyForm struct {
	Name, Env, Expiry string
	Scopes            []string
}

type appCreatedKey struct{ Name, Secret string }

type appDeveloperPage struct {
	Keys         []appKeyRow
	SeesAll      bool
	Scopes       []appScopeOption
	Expiry       []appExpiryOption
	Form         appKeyForm
	Errors       []string
	Created      *appCreatedKey
	NeedsTwoStep bool // the organisation requires two-step and this session has not passed it
}

// appDate formats a time for a page: the date, in UTC, as people read it.
func appDate(t time.Time) string { return t.UTC().Format("2 Jan 2006") }

// developerPage builds the page for the session: its keys and the create form.
func (s *App) developerPage(r *pipeline.Request, form appKeyForm) (appDeveloperPage, error) {
	a := appOf(r)
	keys, err := s.DB.FindKeysFor(r.Ctx, a.auth.Org.ID, a.auth.User.ID)
	if err != nil {
		return appDeveloperPage{}, err
	}
	page := appDeveloperPage{SeesAll: a.auth.Role.Manages(), Form: form}
	emails := map[kv.ID]string{}
	if page.SeesAll {
		members, err := s.DB.FindMembers(r.Ctx, a.auth.Org.ID)
		if err != nil {
			return appDeveloperPage{}, err
		}
		for _, m := range members {
			emails[m.User.ID] = m.User.Email
		}
	}
	// Newest first: the key just made is at the top.
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		row := appKeyRow{ID: k.ID.String(), Name: k.Name, Env: string(k.Environment), Hint: k.Hint,
			Scopes: k.Scopes, Owner: pipeline.OrDefault(emails[k.UserID], "former member"), CanRevoke: true}
		if k.ExpiresAt != nil {
			row.Expires = appDate(*k.ExpiresAt)
		}
		if k.RevokedAt != nil {
			row.Revoked = appDate(*k.RevokedAt)
		}
		page.Keys = append(page.Keys, row)
	}
	for _, sc := range kv.AllScopes {
		page.Scopes = append(page.Scopes, appScopeOption{Name: sc, Desc: appScopeDescs[sc], Allowed: a.auth.Role.MayHoldScope(sc)})
	}
	page.Expiry = []appExpiryOption{{"90", "In 90 days"}, {"30", "In 30 days"}, {"180", "In 180 days"}, {"365", "In a year"}, {"0", "Never"}}
	page.NeedsTwoStep = a.auth.Org.RequireMFA && !a.auth.Session.PassedTwoStepFor(a.auth.Org)
	return page, nil
}

func (s *App) handleAppDeveloper(r *pipeline.Request) error {
	page, err := s.developerPage(r, appKeyForm{Env: string(appOf(r).auth.Session.Environment), Expiry: "90"})
	if err != nil {
		return err
	}
	r.Out = &appPage{name: "app_settings_developer", title: "Developer", nav: webui.NavSettings, sub: "developer", data: page}
	return nil
}

func (s *App) handleAppKeyCreate(r *pipeline.Request) error {
	a := appOf(r)
	form := appKeyForm{Name: formValue(r, "name"), Env: formValue(r, "environment"),
		Expiry: formValue(r, "expires_in_days"), Scopes: formValues(r, "scopes")}
	days, err := strconv.Atoi(pipeline.OrDefault(form.Expiry, "0"))
	if err != nil {
		days = -1 // kv names the rule
	}
	key, secret, err := s.DB.CreateKey(r.Ctx, kv.KeyInput{OrgID: a.auth.Org.ID, UserID: a.auth.User.ID,
		Name: form.Name, Environment: kv.Environment(form.Env), Scopes: form.Scopes, ExpiresDays: days,
		TwoStepPassed: a.auth.Session.PassedTwoStepFor(a.auth.Org)})
	page, perr := s.developerPage(r, form)
	if perr != nil {
		return perr
	}
	out := &appPage{name: "app_settings_developer", title: "Developer", nav: webui.NavSettings, sub: "developer", data: &page}
	switch code := kv.ErrorCode(err); code {
	case "":
		page.Created = &appCreatedKey{Name: key.Name, Secret: secret}
		page.Form = appKeyForm{Env: form.Env, Expiry: "90"}
		out.status = 201
	case kv.EINVALID, kv.EFORBIDDEN:
		page.Errors = appFieldMessages(err, appKeyFields)
		out.status = pipeline.ToAPIError(err).Status
		r.Info.Code = pipeline.ToAPIError(err).Code
	default:
		return err
	}
	r.Out = out
	return nil
}

// appKeyFields names the key form's fields for error messages.
var appKeyFields = map[string]string{"name": "Name", "environment": "Environment", "scopes": "Scopes", "expires_days": "Expires"}

// appFieldMessages turns a kv error into sentences for a form: "Name: Key name must be
// 1 to 100 characters." Fields the form does not name are given as kv wrote them.
func appFieldMessages(err error, fields map[string]string) []string {
	ae := pipeline.ToAPIError(err)
	if len(ae.Fields) == 0 {
		return []string{ae.Detail}
	}
	var out []string
	for _, f := range ae.Fields {
		label := ""
		for _, l := range f.Loc {
			if name, ok := l.(string); ok && fields[name] != "" {
				label = fields[name]
			}
		}
		msg := f.Msg
		if label != "" && !strings.HasPrefix(msg, label) {
			msg = label + ": " + msg
		}
		out = append(out, msg)
	}
	return out
}

func (s *App) handleAppKeyRevoke(r *pipeline.Request) error {
	a := appOf(r)
	id, ok := kv.ParseID(r.PathParam("key_id"))
	if !ok {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "Key not found."}
	}
	// Members revoke only their own keys; any other is not found, as is another
	// organisation's.
	if _, err := s.DB.RevokeKeyAs(r.Ctx, kv.RevokeKeyInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, KeyID: id}); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/developer?done=key_revoked"}
	return nil
}
