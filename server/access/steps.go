package access

import (
	"errors"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
)

// The handlers of the account access steps: each binds, applies the sign-in limits
// where a code is asked for or tried, runs its one kv step and shapes the answer. Mail
// and text messages go out off the request path, so an answer takes as long whether
// or not anything was sent.

func (a *API) handleStart(r *pipeline.Request) error {
	in := r.In.(*accessStartIn)
	// A transaction start is a code request, limited as the app's sign-in (per address
	// and client address, per client address, and mail per address).
	if email, ok := kv.NormalizeEmail(in.Email); ok {
		if err := a.AdmitSignIn(r, email, true); err != nil {
			return err
		}
	}
	st, err := a.DB.StartAccess(r.Ctx, kv.AccessStartInput{Email: in.Email, ClientName: in.ClientName, Proof: accessOf(r).proof})
	if err != nil {
		return err
	}
	a.SendMail(mail.AccessCode(st.Access.Email, st.Code, st.Access.ClientName))
	acc := st.Access
	r.Out = AccessStartOut{TransactionID: acc.ID, ClientName: acc.ClientName, State: string(acc.State),
		NextAction: acc.State.NextAction(), ExpiresAt: pipeline.WireTime(acc.ExpiresAt)}
	r.Status = 201
	return nil
}

// admit opens transaction id with the request's proof (401 when it does not) and
// applies the sign-in limits to the code request (request true) or attempt it is.
func (a *API) admit(r *pipeline.Request, id kv.ID, request bool) error {
	call := accessOf(r)
	acc, err := a.DB.FindAccess(r.Ctx, id, call.proof)
	if err != nil {
		return err
	}
	call.opened(acc)
	return a.AdmitSignIn(r, acc.Email, request)
}

// methods lists the two-step methods open to the transaction's person while
// verify_mfa is due (nil otherwise).
func (a *API) methods(r *pipeline.Request, acc kv.Access) ([]kv.TwoStepMethod, error) {
	if acc.State != kv.AccessAwaitingMFA {
		return nil, nil
	}
	return a.DB.FindAccessMethods(r.Ctx, acc.ID, accessOf(r).proof, a.sms != nil)
}

func (a *API) handleVerifyEmail(r *pipeline.Request) error {
	in := r.In.(*accessVerifyEmailIn)
	if err := a.admit(r, in.TransactionID, false); err != nil {
		return err
	}
	acc, err := a.DB.VerifyAccessEmail(r.Ctx, in.TransactionID, accessOf(r).proof, in.Token)
	accessOf(r).opened(acc)
	if err != nil {
		return err
	}
	methods, err := a.methods(r, acc)
	if err != nil {
		return err
	}
	r.Out = accessStep(acc, methods)
	return nil
}

func (a *API) handleMFA(r *pipeline.Request) error {
	in := r.In.(*accessMFAIn)
	call := accessOf(r)
	if in.Method == "" {
		if err := a.admit(r, in.TransactionID, false); err != nil {
			return err
		}
		acc, err := a.DB.VerifyAccessChallenge(r.Ctx, in.TransactionID, call.proof, *in.ChallengeID, in.Code)
		call.opened(acc)
		if err != nil {
			return err
		}
		r.Out = accessMFAOut{TransactionID: acc.ID, State: string(acc.State), NextAction: acc.State.NextAction(), ExpiresAt: pipeline.WireTime(acc.ExpiresAt)}
		return nil
	}
	// A challenge by email or text message sends a code: a code request. A TOTP
	// challenge sends nothing; its code is counted when it is submitted.
	if in.Method != string(kv.MethodTOTP) {
		if err := a.admit(r, in.TransactionID, true); err != nil {
			return err
		}
	}
	ch, err := a.DB.RequestAccessChallenge(r.Ctx, kv.AccessChallengeInput{ID: in.TransactionID, Proof: call.proof,
		Method: kv.TwoStepMethod(in.Method), SMS: a.sms != nil})
	call.opened(ch.Access)
	if err != nil {
		return err
	}
	switch ch.Method {
	case kv.MethodEmail:
		a.SendMail(mail.TwoStepCode(ch.To, ch.Code))
	case kv.MethodSMS:
		a.sendSMS(ch.To, "Your interviewd verification code: "+ch.Code+". It works once, for 10 minutes. Do not share it with anyone you did not ask to sign in for you.")
	}
	exp := pipeline.WireTime(ch.ExpiresAt)
	acc := ch.Access
	r.Out = accessMFAOut{TransactionID: acc.ID, State: string(acc.State), NextAction: acc.State.NextAction(), ExpiresAt: pipeline.WireTime(acc.ExpiresAt),
		MFAMethods: methodStrings(ch.Methods), ChallengeID: &ch.ChallengeID, Method: string(ch.Method), ChallengeExpiresAt: &exp}
	return nil
}

func (a *API) handleWorkspace(r *pipeline.Request) error {
	in := r.In.(*accessWorkspaceIn)
	call := accessOf(r)
	var (
		chosen kv.AccessChosen
		err    error
	)
	switch in.Action {
	case "list":
		list, err := a.DB.ListAccessWorkspaces(r.Ctx, in.TransactionID, call.proof)
		call.opened(list.Access)
		if err != nil {
			return err
		}
		out := accessWorkspaceOut{TransactionID: list.Access.ID, State: string(list.Access.State),
			NextAction: list.Access.State.NextAction(), ExpiresAt: pipeline.WireTime(list.Access.ExpiresAt)}
		ws := make([]accessWorkspace, 0, len(list.Workspaces))
		for _, uo := range list.Workspaces {
			ws = append(ws, accessWorkspaceOf(uo))
		}
		invs := make([]accessInvitation, 0, len(list.Invitations))
		for _, inv := range list.Invitations {
			invs = append(invs, accessInvitation{InvitationID: inv.ID, OrgID: inv.OrgID, OrgName: inv.OrgName,
				Role: string(inv.Role), ExpiresAt: pipeline.WireTime(inv.ExpiresAt)})
		}
		out.Workspaces, out.Invitations = &ws, &invs
		r.Out = out
		return nil
	case "select":
		chosen, err = a.DB.SelectAccessWorkspace(r.Ctx, in.TransactionID, call.proof, *in.OrgID)
	case "accept_invitation":
		chosen, err = a.DB.AcceptAccessInvitation(r.Ctx, in.TransactionID, call.proof, *in.InvitationID)
	case "create":
		chosen, err = a.DB.CreateAccessWorkspace(r.Ctx, in.TransactionID, call.proof, in.Name)
	}
	call.opened(chosen.Access)
	if err != nil {
		return err
	}
	methods, err := a.methods(r, chosen.Access)
	if err != nil {
		return err
	}
	acc := chosen.Access
	ws := accessWorkspaceOf(chosen.Workspace)
	out := accessWorkspaceOut{TransactionID: acc.ID, State: string(acc.State), NextAction: acc.State.NextAction(),
		ExpiresAt: pipeline.WireTime(acc.ExpiresAt), Workspace: &ws}
	if methods != nil {
		out.MFAMethods = methodStrings(methods)
	}
	r.Out = out
	return nil
}

func (a *API) handleKey(r *pipeline.Request) error {
	in := r.In.(*accessKeyIn)
	idem, err := accessIdem(r)
	if err != nil {
		return err
	}
	days := 0 // null: no expiry
	if in.ExpiresInDays != nil {
		// An explicit 0 is not "none" (that is null): -1 makes kv refuse it with the
		// choices.
		days = *in.ExpiresInDays
		if days == 0 {
			days = -1
		}
	}
	k, err := a.DB.IssueAccessKey(r.Ctx, kv.AccessKeyInput{ID: in.TransactionID, Proof: accessOf(r).proof, Name: in.Name,
		Scopes: in.Scopes, Environment: kv.Environment(in.Environment), ExpiresDays: days, Idem: idem})
	return a.keyAnswer(r, k, renameField(err, "expires_days", "expires_in_days"), 201)
}

func (a *API) handleReplace(r *pipeline.Request) error {
	in := r.In.(*accessReplaceIn)
	idem, err := accessIdem(r)
	if err != nil {
		return err
	}
	keyID, _ := kv.ParseID(r.PathParam("key_id")) // checked by accessBind
	k, err := a.DB.ReplaceAccessKey(r.Ctx, kv.AccessReplaceInput{ID: in.TransactionID, Proof: accessOf(r).proof, KeyID: keyID, Idem: idem})
	return a.keyAnswer(r, k, err, 200)
}

// keyAnswer answers a key step: the key with its secret, or a replay without it.
func (a *API) keyAnswer(r *pipeline.Request, k kv.AccessKeyIssued, err error, status int) error {
	call := accessOf(r)
	call.opened(k.Access)
	if err != nil {
		return err
	}
	call.replayed = k.Replayed
	r.Out, r.Status = accessKeyOutOf(k), status
	return nil
}

// renameField returns err with validation failures at kv's name from reported at the
// wire's name to.
func renameField(err error, from, to string) error {
	var ke *kv.Error
	if !errors.As(err, &ke) || ke.Code != kv.EINVALID {
		return err
	}
	out := *ke
	out.Fields = make([]kv.FieldError, len(ke.Fields))
	for i, f := range ke.Fields {
		if name, ok := pipeline.FirstName(f.Loc); ok && name == from {
			f.Loc = append([]any{to}, f.Loc[1:]...)
		}
		out.Fields[i] = f
	}
	return &out
}
