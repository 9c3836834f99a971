package access

import (
	"fmt"
	"sort"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// The account access API's request and response bodies. Requests bind through the
// same binder as the research API (unknown members, wrong types and bad text are 422);
// the OpenAPI document is generated from these types.

type accessStartIn struct {
	Email      string `json:"email" required:"true" maxLength:"254" doc:"The person's email address; the code goes there. An account is made only once the code is read back."`
	ClientName string `json:"client_name" required:"true" minLength:"1" maxLength:"100" doc:"Your application's name, quoted in the email to the person."`
}

type AccessStartOut struct {
	TransactionID kv.ID         `json:"transaction_id"`
	ClientName    string        `json:"client_name"`
	State         string        `json:"state" enum:"awaiting_email"`
	NextAction    string        `json:"next_action" enum:"verify_email"`
	ExpiresAt     pipeline.Time `json:"expires_at" doc:"The transaction's end: 30 minutes after it started."`
}

type accessVerifyEmailIn struct {
	TransactionID kv.ID  `json:"transaction_id" required:"true"`
	Token         string `json:"token" required:"true" maxLength:"64" doc:"The 6-digit code emailed to the person."`
}

// accessStepOut is the answer of a step that moves the transaction on.
type accessStepOut struct {
	TransactionID kv.ID         `json:"transaction_id"`
	State         string        `json:"state" enum:"awaiting_email,awaiting_mfa,awaiting_workspace,awaiting_key,completed,failed,expired"`
	NextAction    string        `json:"next_action" enum:"verify_email,verify_mfa,select_workspace,issue_key,none"`
	ExpiresAt     pipeline.Time `json:"expires_at"`
	// MFAMethods are the two-step methods the person can use, while verify_mfa is due.
	MFAMethods []string `json:"mfa_methods,omitempty" doc:"While next_action is verify_mfa: the two-step methods this person can use (totp, sms, email)."`
}

type accessMFAIn struct {
	TransactionID kv.ID  `json:"transaction_id" required:"true"`
	Method        string `json:"method,omitempty" enum:"totp,sms,email" doc:"Request a challenge by this method (send alone). sms only when the server has a text-message provider and the person a verified number."`
	ChallengeID   *kv.ID `json:"challenge_id,omitempty" doc:"Submit the code of this challenge (with code)."`
	Code          string `json:"code,omitempty" maxLength:"64" doc:"The 6-digit code from the authenticator app, the email or the text message."`
}

// Validate: a body either requests a challenge or submits a code.
func (in *accessMFAIn) Validate() []kv.FieldError {
	switch {
	case in.Method != "" && (in.ChallengeID != nil || in.Code != ""):
		return []kv.FieldError{{Loc: []any{"method"}, Type: "value_error",
			Msg: "Send either {method} to request a challenge or {challenge_id, code} to submit one, not both."}}
	case in.Method != "":
		return nil
	case in.ChallengeID == nil && in.Code == "":
		return []kv.FieldError{{Loc: []any{"method"}, Type: "missing",
			Msg: "Send {method} to request a challenge, or {challenge_id, code} to submit one."}}
	case in.ChallengeID == nil:
		return []kv.FieldError{pipeline.Missing([]any{"challenge_id"})}
	case in.Code == "":
		return []kv.FieldError{pipeline.Missing([]any{"code"})}
	}
	return nil
}

type accessMFAOut struct {
	TransactionID      kv.ID          `json:"transaction_id"`
	State              string         `json:"state" enum:"awaiting_email,awaiting_mfa,awaiting_workspace,awaiting_key,completed,failed,expired"`
	NextAction         string         `json:"next_action" enum:"verify_email,verify_mfa,select_workspace,issue_key,none"`
	ExpiresAt          pipeline.Time  `json:"expires_at"`
	MFAMethods         []string       `json:"mfa_methods,omitempty" doc:"While next_action is verify_mfa: the two-step methods this person can use."`
	ChallengeID        *kv.ID         `json:"challenge_id,omitempty" doc:"A requested challenge: submit its code with it."`
	Method             string         `json:"method,omitempty" doc:"A requested challenge's method."`
	ChallengeExpiresAt *pipeline.Time `json:"challenge_expires_at,omitempty" doc:"A requested challenge's code works until then (10 minutes)."`
}

type accessWorkspaceIn struct {
	TransactionID kv.ID  `json:"transaction_id" required:"true"`
	Action        string `json:"action" required:"true" enum:"list,select,accept_invitation,create"`
	OrgID         *kv.ID `json:"org_id,omitempty" doc:"select: one of the listed workspaces."`
	InvitationID  *kv.ID `json:"invitation_id,omitempty" doc:"accept_invitation: one of the listed invitations."`
	Name          string `json:"name,omitempty" maxLength:"200" doc:"create: the new workspace's name."`
}

// Validate: each action takes exactly its own member.
func (in *accessWorkspaceIn) Validate() []kv.FieldError {
	need := map[string]string{"select": "org_id", "accept_invitation": "invitation_id", "create": "name"}[in.Action]
	var errs []kv.FieldError
	for name, set := range map[string]bool{"org_id": in.OrgID != nil, "invitation_id": in.InvitationID != nil, "name": in.Name != ""} {
		switch {
		case name == need && !set:
			errs = append(errs, pipeline.Missing([]any{name}))
		case name != need && set:
			errs = append(errs, kv.FieldError{Loc: []any{name}, Type: "extra_forbidden", Msg: "Not used by action " + in.Action + "."})
		}
	}
	sortFieldErrors(errs)
	return errs
}

type accessWorkspace struct {
	OrgID      kv.ID  `json:"org_id"`
	Name       string `json:"name"`
	Role       string `json:"role" enum:"owner,admin,member,viewer"`
	RequireMFA bool   `json:"require_mfa" doc:"The workspace requires a passed two-step check before a key is issued."`
}

type accessInvitation struct {
	InvitationID kv.ID         `json:"invitation_id"`
	OrgID        kv.ID         `json:"org_id"`
	OrgName      string        `json:"org_name"`
	Role         string        `json:"role" enum:"owner,admin,member,viewer"`
	ExpiresAt    pipeline.Time `json:"expires_at"`
}

type accessWorkspaceOut struct {
	TransactionID kv.ID               `json:"transaction_id"`
	State         string              `json:"state" enum:"awaiting_email,awaiting_mfa,awaiting_workspace,awaiting_key,completed,failed,expired"`
	NextAction    string              `json:"next_action" enum:"verify_email,verify_mfa,select_workspace,issue_key,none"`
	ExpiresAt     pipeline.Time       `json:"expires_at"`
	MFAMethods    []string            `json:"mfa_methods,omitempty" doc:"When the chosen workspace requires two-step first: the methods this person can use."`
	Workspace     *accessWorkspace    `json:"workspace,omitempty" doc:"select, accept_invitation, create: the chosen workspace."`
	Workspaces    *[]accessWorkspace  `json:"workspaces,omitempty" doc:"list: the person's workspaces."`
	Invitations   *[]accessInvitation `json:"invitations,omitempty" doc:"list: pending invitations to the person's address."`
}

type accessKeyIn struct {
	TransactionID kv.ID    `json:"transaction_id" required:"true"`
	Name          string   `json:"name" required:"true" minLength:"1" maxLength:"100"`
	Scopes        []string `json:"scopes" required:"true" doc:"At least one of studies:read, studies:write, studies:golive, links:read, links:write, export:read, agent:run; a member cannot hold studies:golive or export:read."`
	Environment   string   `json:"environment" required:"true" enum:"test,live"`
	ExpiresInDays *int     `json:"expires_in_days" required:"true" doc:"30, 90, 180 or 365 days, or null for a key that does not expire."`
}

type accessReplaceIn struct {
	TransactionID kv.ID `json:"transaction_id" required:"true"`
}

type accessKeyOut struct {
	TransactionID kv.ID          `json:"transaction_id"`
	State         string         `json:"state" enum:"completed"`
	NextAction    string         `json:"next_action" enum:"none"`
	KeyID         kv.ID          `json:"key_id"`
	Name          string         `json:"name"`
	Scopes        []string       `json:"scopes"`
	Environment   string         `json:"environment" enum:"test,live"`
	ExpiresAt     *pipeline.Time `json:"expires_at" doc:"The key's expiry; null for none."`
	Secret        *string        `json:"secret" doc:"The key's secret, in this answer only; null when the request is replayed."`
}

func accessStep(a kv.Access, methods []kv.TwoStepMethod) accessStepOut {
	out := accessStepOut{TransactionID: a.ID, State: string(a.State), NextAction: a.State.NextAction(), ExpiresAt: pipeline.WireTime(a.ExpiresAt)}
	if a.State == kv.AccessAwaitingMFA {
		out.MFAMethods = methodStrings(methods)
	}
	return out
}

func methodStrings(methods []kv.TwoStepMethod) []string {
	out := make([]string, len(methods))
	for i, m := range methods {
		out[i] = string(m)
	}
	return out
}

func accessWorkspaceOf(uo kv.UserOrg) accessWorkspace {
	return accessWorkspace{OrgID: uo.Org.ID, Name: uo.Org.Name, Role: string(uo.Role), RequireMFA: uo.Org.RequireMFA}
}

func accessKeyOutOf(k kv.AccessKeyIssued) accessKeyOut {
	out := accessKeyOut{TransactionID: k.Access.ID, State: string(k.Access.State), NextAction: k.Access.State.NextAction(),
		KeyID: k.Key.KeyID, Name: k.Key.Name, Scopes: k.Key.Scopes, Environment: string(k.Key.Environment),
		ExpiresAt: pipeline.WireTimePtr(k.Key.ExpiresAt)}
	if k.Secret != "" {
		secret := k.Secret
		out.Secret = &secret
	}
	return out
}

// sortFieldErrors orders failures by where they are, so an answer is the same every
// time.
func sortFieldErrors(errs []kv.FieldError) {
	sort.Slice(errs, func(i, j int) bool { return fmt.Sprint(errs[i].Loc) < fmt.Sprint(errs[j].Loc) })
}
