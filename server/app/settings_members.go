package app

import (
	"net/url"
	"strings"
	"time"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Settings → Members: who belongs to the organisation, their roles, invitations by
// email, and the page an invitation's link opens. The rules (who may change whom, the
// last owner) are kv's; the page only hides what a role cannot do.

func (s *App) appMembersRoutes() []appRoute {
	return []appRoute{
		{"GET", "/settings/members", AccessMember, s.handleAppMembers},
		{"POST", "/settings/members/invitations", AccessAdmin, s.handleAppInvite},
		{"POST", "/settings/members/invitations/{invitation_id}/revoke", AccessAdmin, s.handleAppInvitationRevoke},
		{"POST", "/settings/members/{user_id}/role", AccessAdmin, s.handleAppMemberRole},
		{"POST", "/settings/members/{user_id}/remove", AccessAdmin, s.handleAppMemberRemove},
		{"GET", "/invitations/{token}", AccessPublic, s.handleAppInvitationPage},
		{"POST", "/invitations/{token}", AccessPublic, s.handleAppInvitationAccept},
		{"POST", "/invitations/{token}/switch", AccessPublic, s.handleAppInvitationSwitch},
	}
}

type appMemberRow struct {
	UserID, Email, Role  string
	RoleLabel            string // the role's name in the app ("Researcher")
	You, LastOwner       bool
	CanChange, CanRemove bool
	Roles                []roleOption // the roles the viewer may give this member
}

type appInvitationRow struct {
	ID, Email, Role, Expires string
	CanRevoke                bool // an owner's invitation is an owner's to cancel
}

type appInviteForm struct{ Email, Role string }

type appMembersPage struct {
	Members     []appMemberRow
	Invitations []appInvitationRow
	CanManage   bool
	Roles       []roleOption // the roles the viewer may invite with
	Form        appInviteForm
	// Changes is who changed whose role when, newest first (roles_history.go).
	Changes []appRoleChangeRow
	Errors  []string
	// Unsent is the invitation just made when no mail server is configured: its link,
	// shown this once to be passed on by hand.
	Unsent *appUnsentInvitation
}

type appUnsentInvitation struct{ Email, Link string }

// assignable returns the roles actor may give: owners any, admins any but owner.
func assignable(actor kv.Role) []roleOption {
	if actor == kv.RoleOwner {
		return roleOptions([]string{"viewer", "member", "admin", "owner"})
	}
	return roleOptions([]string{"viewer", "member", "admin"})
}

func (s *App) membersPage(r *pipeline.Request, form appInviteForm) (*appMembersPage, error) {
	a := appOf(r)
	members, err := s.DB.FindMembers(r.Ctx, a.auth.Org.ID)
	if err != nil {
		return nil, err
	}
	me := a.auth.Role
	page := &appMembersPage{CanManage: me.Manages(), Form: form, Roles: assignable(me)}
	owners := 0
	for _, m := range members {
		if m.Role == kv.RoleOwner {
			owners++
		}
	}
	for _, m := range members {
		row := appMemberRow{UserID: m.User.ID.String(), Email: m.User.Email, Role: string(m.Role), RoleLabel: m.Role.Label(),
			You: m.User.ID == a.auth.User.ID, LastOwner: m.Role == kv.RoleOwner && owners == 1}
		// An admin may not touch an owner; nobody may demote or remove the last owner.
		touchable := me.Manages() && (m.Role != kv.RoleOwner || me == kv.RoleOwner) && !row.LastOwner
		row.CanChange, row.CanRemove = touchable, touchable
		row.Roles = assignable(me)
		page.Members = append(page.Members, row)
	}
	if page.CanManage {
		invs, err := s.DB.FindInvitations(r.Ctx, a.auth.Org.ID)
		if err != nil {
			return nil, err
		}
		for _, inv := range invs {
			page.Invitations = append(page.Invitations, appInvitationRow{ID: inv.ID.String(), Email: inv.Email,
				Role: strings.ToLower(inv.Role.Label()), Expires: appDate(inv.ExpiresAt), CanRevoke: inv.Role != kv.RoleOwner || me == kv.RoleOwner})
		}
	}
	if page.Changes, err = s.roleChangeRows(r); err != nil {
		return nil, err
	}
	return page, nil
}

func (s *App) handleAppMembers(r *pipeline.Request) error {
	page, err := s.membersPage(r, appInviteForm{Role: "member"})
	if err != nil {
		return err
	}
	r.Out = &appPage{name: "app_settings_members", title: "Members", nav: webui.NavSettings, sub: "members", data: page}
	return nil
}

func (s *App) handleAppInvite(r *pipeline.Request) error {
	a := appOf(r)
	form := appInviteForm{Email: formValue(r, "email"), Role: formValue(r, "role")}
	inv, token, err := s.DB.CreateInvitation(r.Ctx, kv.InvitationInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID,
		Email: form.Email, Role: kv.Role(form.Role)})
	switch kv.ErrorCode(err) {
	case "":
		accept := s.BaseURL + "/app/invitations/" + url.PathEscape(token)
		s.SendMail(mail.Invitation(inv.Email, a.auth.Org.Name, a.auth.User.Email, strings.ToLower(inv.Role.Label()), accept, inv.ExpiresAt))
		flash := "No mail server is configured: the invitation is in the outbox (interviewd mail outbox). Copy the link below and send it to " + inv.Email + " yourself."
		switch s.MailWhere() {
		case pipeline.MailSent:
			r.Out = appRedirect{to: "/app/settings/members?done=invited"}
			return nil
		case pipeline.MailLogged:
			flash = "No mail server is configured: the invitation was not sent. Copy the link below and send it to " + inv.Email + " yourself."
		}
		// Not sent, so not "sent": the link is on this page, this once (never in an
		// address, which would keep it in the browser's history).
		page, err := s.membersPage(r, appInviteForm{Role: "member"})
		if err != nil {
			return err
		}
		page.Unsent = &appUnsentInvitation{Email: inv.Email, Link: accept}
		r.Out = &appPage{name: "app_settings_members", title: "Members", nav: webui.NavSettings, sub: "members", flash: flash, data: page}
		return nil
	case kv.EINVALID, kv.ECONFLICT, kv.EFORBIDDEN:
		page, perr := s.membersPage(r, form)
		if perr != nil {
			return perr
		}
		page.Errors = appFieldMessages(err, map[string]string{"email": "Email", "role": "Role"})
		ae := pipeline.ToAPIError(err)
		r.Info.Code = ae.Code
		r.Out = &appPage{name: "app_settings_members", status: ae.Status, title: "Members", nav: webui.NavSettings, sub: "members", data: page}
		return nil
	}
	return err
}

func (s *App) handleAppInvitationRevoke(r *pipeline.Request) error {
	a := appOf(r)
	id, ok := kv.ParseID(r.PathParam("invitation_id"))
	if !ok {
		return &pipeline.APIError{Status: 404, Code: "not_found", Detail: "Invitation not found."}
	}
	if err := s.DB.RevokeInvitation(r.Ctx, kv.RevokeInvitationInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, ID: id}); err != nil {
		return s.memberActionError(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/members?done=invitation_revoked"}
	return nil
}

// memberTarget is the user a member action names, or a 404.
func memberTarget(r *pipeline.Request) (kv.ID, error) {
	id, ok := kv.ParseID(r.PathParam("user_id"))
	if !ok {
		return kv.ID{}, &pipeline.APIError{Status: 404, Code: "not_found", Detail: "Member not found."}
	}
	return id, nil
}

// memberActionError shows a refused member action (last owner, owner only) on the
// members page itself, where the person can see why.
func (s *App) memberActionError(r *pipeline.Request, err error) error {
	switch kv.ErrorCode(err) {
	case kv.EINVALID, kv.ECONFLICT, kv.EFORBIDDEN:
	default:
		return err
	}
	page, perr := s.membersPage(r, appInviteForm{Role: "member"})
	if perr != nil {
		return perr
	}
	ae := pipeline.ToAPIError(err)
	r.Info.Code = ae.Code
	r.Out = &appPage{name: "app_settings_members", status: ae.Status, title: "Members", nav: webui.NavSettings,
		sub: "members", flash: ae.Detail, bad: true, data: page}
	return nil
}

func (s *App) handleAppMemberRole(r *pipeline.Request) error {
	a := appOf(r)
	user, err := memberTarget(r)
	if err != nil {
		return err
	}
	_, err = s.DB.UpdateMemberRole(r.Ctx, kv.MemberRoleInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID,
		UserID: user, Role: kv.Role(formValue(r, "role"))})
	if err != nil {
		return s.memberActionError(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/members?done=role_changed"}
	return nil
}

func (s *App) handleAppMemberRemove(r *pipeline.Request) error {
	a := appOf(r)
	user, err := memberTarget(r)
	if err != nil {
		return err
	}
	err = s.DB.RemoveMember(r.Ctx, kv.RemoveMemberInput{OrgID: a.auth.Org.ID, Actor: a.auth.User.ID, UserID: user})
	if err != nil {
		return s.memberActionError(r, err)
	}
	r.Out = appRedirect{to: "/app/settings/members?done=member_removed"}
	return nil
}

type appInvitationPage struct {
	Token, OrgName, Role, Email string
	Problem                     string
	// SignedInAs is the address this browser is signed in with when it is not the
	// invited one: the page says so and offers to sign out, never to join as it.
	SignedInAs string
}

// invitationProblem is what the accept page says about a link that cannot be used.
const invitationProblem = "The link is wrong, has expired (invitations last 7 days), was cancelled or has been used. Ask whoever invited you for a new one."

func (s *App) handleAppInvitationPage(r *pipeline.Request) error {
	token := r.PathParam("token")
	page := appInvitationPage{Token: token}
	view, err := s.DB.FindInvitation(r.Ctx, token)
	switch kv.ErrorCode(err) {
	case "":
		page.OrgName, page.Role, page.Email = view.OrgName, string(view.Role), view.Email
		if a := appOf(r); a.signed && a.auth.User.Email != view.Email {
			page.SignedInAs = a.auth.User.Email
		}
	case kv.ENOTFOUND, kv.EINVALID:
		page.Problem = invitationProblem
		r.Info.Code = "invitation_invalid"
		r.Out = &appPage{name: "app_invitation", status: 404, title: "Invitation", bare: true, data: page}
		return nil
	default:
		return err
	}
	r.Out = &appPage{name: "app_invitation", title: "Join " + view.OrgName, bare: true, data: page}
	return nil
}

// handleAppInvitationAccept spends the invitation: its address becomes a member and
// this browser is signed in as it (the link reached the address, as a sign-in code
// would), in the invitation's organisation. Two-step still applies when due. A browser
// signed in as another address is refused (kv checks the actor) and shown the page
// that offers to sign out.
func (s *App) handleAppInvitationAccept(r *pipeline.Request) error {
	a := appOf(r)
	in := kv.AcceptInput{Token: r.PathParam("token"), Previous: a.token,
		UserAgent: string(r.C.UserAgent()), IP: s.ClientIP(r.C).String()}
	if a.signed {
		in.Actor = a.auth.User.ID
	}
	acc, err := s.DB.AcceptInvitation(r.Ctx, in)
	switch kv.ErrorCode(err) {
	case "":
	case kv.EFORBIDDEN:
		if err := s.handleAppInvitationPage(r); err != nil {
			return err
		}
		if p, ok := r.Out.(*appPage); ok && p.status == 0 {
			p.status = 403
			r.Info.Code = pipeline.ToAPIError(err).Code
		}
		return nil
	case kv.ENOTFOUND, kv.EINVALID:
		r.Info.Code = "invitation_invalid"
		r.Out = &appPage{name: "app_invitation", status: 404, title: "Invitation", bare: true,
			data: appInvitationPage{Problem: invitationProblem}}
		return nil
	default:
		return err
	}
	s.setAppCookie(r, SessionCookie, acc.Token, int(kv.SessionIdleTTL/time.Second))
	if kv.NeedsTwoStep(acc.User, acc.Org) {
		r.Out = appRedirect{to: "/app/twostep"}
		return nil
	}
	r.Out = appRedirect{to: "/app/settings/members?done=joined"}
	return nil
}

// handleAppInvitationSwitch is "Sign out and continue" on an invitation opened while
// signed in as another address: it signs this browser out and sends it to sign in as
// the invited address, coming back to the invitation. Joining as the invited address
// then takes that address's own sign-in code (or, signed out, the link as always).
func (s *App) handleAppInvitationSwitch(r *pipeline.Request) error {
	token := r.PathParam("token")
	view, err := s.DB.FindInvitation(r.Ctx, token)
	switch kv.ErrorCode(err) {
	case "":
	case kv.ENOTFOUND, kv.EINVALID:
		r.Info.Code = "invitation_invalid"
		r.Out = &appPage{name: "app_invitation", status: 404, title: "Invitation", bare: true,
			data: appInvitationPage{Problem: invitationProblem}}
		return nil
	default:
		return err
	}
	if a := appOf(r); a.signed {
		if err := s.DB.SignOut(r.Ctx, a.token); err != nil {
			return err
		}
		s.setAppCookie(r, SessionCookie, "", -1)
	}
	r.Out = appRedirect{to: "/app/signin?email=" + url.QueryEscape(view.Email) +
		"&next=" + url.QueryEscape("/app/invitations/"+url.PathEscape(token))}
	return nil
}

// invitationOf is the invitation a sign-in page returns to (next), if any, so the page
// can say that a new address needs no code: the invitation's link signs it in.
func invitationOf(next string) string {
	if strings.HasPrefix(next, "/app/invitations/") {
		return next
	}
	return ""
}
