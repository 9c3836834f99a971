package server

import (
	"errors"

	"interviewd/kv"
	"interviewd/mail"
)

// The handlers of the account access steps: each binds, applies the sign-in limits
// where a code is asked for or tried, runs its one kv step and shapes the answer. Mail
// and text messages go out off the request path, so an answer takes as long whether
// or not anything was sent.

func (a *accessSide) handleStart(r *request) error {
	in := r.in.(*accessStartIn)
	// A transaction start is a code request, limited as the app's sign-in (per address
	// and client address, per client address, and mail per address).
	if email, ok := kv.NormalizeEmail(in.Email); ok {
		if err := a.s.admitSignIn(r, email, true); err != nil {
			return err
		}
	}
	st, err := a.s.db.StartAccess(r.ctx, kv.AccessStartInput{Email: in.Email, ClientName: in.ClientName, Proof: r.access().proof})
	if err != nil {
		return err
	}
	a.s.sendMail(mail.AccessCode(st.Access.Email, st.Code, st.Access.ClientName))
	acc := st.Access
	r.out = accessStartOut{TransactionID: acc.ID, ClientName: acc.ClientName, State: string(acc.State),
		NextAction: acc.State.NextAction(), ExpiresAt: wireTime(acc.ExpiresAt)}
	r.status = 201
	return nil
}

// admit opens transaction id with the request's proof (401 when it does not) and
// applies the sign-in limits to the code request (request true) or attempt it is.
func (a *accessSide) admit(r *request, id kv.ID, request bool) error {
	call := r.access()
	acc, err := a.s.db.FindAccess(r.ctx, id, call.proof)
	if err != nil {
		return err
	}
	call.opened(acc)
	return a.s.admitSignIn(r, acc.Email, request)
}

// methods lists the two-step methods open to the transaction's person while
// verify_mfa is due (nil otherwise).
func (a *accessSide) methods(r *request, acc kv.Access) ([]kv.TwoStepMethod, error) {
	if acc.State != kv.AccessAwaitingMFA {
		return nil, nil
	}
	return a.s.db.FindAccessMethods(r.ctx, acc.ID, r.access().proof, a.sms != nil)
}

func (a *accessSide) handleVerifyEmail(r *request) error {
	in := r.in.(*accessVerifyEmailIn)
	if err := a.admit(r, in.TransactionID, false); err != nil {
		return err
	}
	acc, err := a.s.db.VerifyAccessEmail(r.ctx, in.TransactionID, r.access().proof, in.Token)
	r.access().opened(acc)
	if err != nil {
		return err
	}
	methods, err := a.methods(r, acc)
	if err != nil {
		return err
	}
	r.out = accessStep(acc, methods)
	return nil
}

func (a *accessSide) handleMFA(r *request) error {
	in := r.in.(*accessMFAIn)
	call := r.access()
	if in.Method == "" {
		if err := a.admit(r, in.TransactionID, false); err != nil {
			return err
		}
		acc, err := a.s.db.VerifyAccessChallenge(r.ctx, in.TransactionID, call.proof, *in.ChallengeID, in.Code)
		call.opened(acc)
		if err != nil {
			return err
		}
		r.out = accessMFAOut{TransactionID: acc.ID, State: string(acc.State), NextAction: acc.State.NextAction(), ExpiresAt: wireTime(acc.ExpiresAt)}
		return nil
	}
	// A challenge by email or text message sends a code: a code request. A TOTP
	// challenge sends nothing; its code is counted when it is submitted.
	if in.Method != string(kv.MethodTOTP) {
		if err := a.admit(r, in.TransactionID, true); err != nil {
			return err
		}
	}
	ch, err := a.s.db.RequestAccessChallenge(r.ctx, kv.AccessChallengeInput{ID: in.TransactionID, Proof: call.proof,
		Method: kv.TwoStepMethod(in.Method), SMS: a.sms != nil})
	call.opened(ch.Access)
	if err != nil {
		return err
	}
	switch ch.Method {
	case kv.MethodEmail:
		a.s.sendMail(mail.TwoStepCode(ch.To, ch.Code))
	case kv.MethodSMS:
		a.sendSMS(ch.To, "Your interviewd verification code: "+ch.Code+". It works once, for 10 minutes. Do not share it with anyone you did not ask to sign in for you.")
	}
	exp := wireTime(ch.ExpiresAt)
	acc := ch.Access
	r.out = accessMFAOut{TransactionID: acc.ID, State: string(acc.State), NextAction: acc.State.NextAction(), ExpiresAt: wireTime(acc.ExpiresAt),
		MFAMethods: methodStrings(ch.Methods), ChallengeID: &ch.ChallengeID, Method: string(ch.Method), ChallengeExpiresAt: &exp}
	return nil
}

func (a *accessSide) handleWorkspace(r *request) error {
	in := r.in.(*accessWorkspaceIn)
	call := r.access()
	var (
		chosen kv.AccessChosen
		err    error
	)
	switch in.Action {
	case "list":
		list, err := a.s.db.ListAccessWorkspaces(r.ctx, in.TransactionID, call.proof)
		call.opened(list.Access)
		if err != nil {
			return err
		}
		out := accessWorkspaceOut{TransactionID: list.Access.ID, State: string(list.Access.State),
			NextAction: list.Access.State.NextAction(), ExpiresAt: wireTime(list.Access.ExpiresAt)}
		ws := make([]accessWorkspace, 0, len(list.Workspaces))
		for _, uo := range list.Workspaces {
			ws = append(ws, accessWorkspaceOf(uo))
		}
		invs := make([]accessInvitation, 0, len(list.Invitations))
		for _, inv := range list.Invitations {
			invs = append(invs, accessInvitation{InvitationID: inv.ID, OrgID: inv.OrgID, OrgName: inv.OrgName,
				Role: string(inv.Role), ExpiresAt: wireTime(inv.ExpiresAt)})
		}
		out.Workspaces, out.Invitations = &ws, &invs
		r.out = out
		return nil
	case "select":
		chosen, err = a.s.db.SelectAccessWorkspace(r.ctx, in.TransactionID, call.proof, *in.OrgID)
	case "accept_invitation":
		chosen, err = a.s.db.AcceptAccessInvitation(r.ctx, in.TransactionID, call.proof, *in.InvitationID)
	case "create":
		chosen, err = a.s.db.CreateAccessWorkspace(r.ctx, in.TransactionID, call.proof, in.Name)
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
		ExpiresAt: wireTime(acc.ExpiresAt), Workspace: &ws}
	if methods != nil {
		out.MFAMethods = methodStrings(methods)
	}
	r.out = out
	return nil
}

func (a *accessSide) handleKey(r *request) error {
	in := r.in.(*accessKeyIn)
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
	k, err := a.s.db.IssueAccessKey(r.ctx, kv.AccessKeyInput{ID: in.TransactionID, Proof: r.access().proof, Name: in.Name,
		Scopes: in.Scopes, Environment: kv.Environment(in.Environment), ExpiresDays: days, Idem: idem})
	return a.keyAnswer(r, k, renameField(err, "expires_days", "expires_in_days"), 201)
}

func (a *accessSide) handleReplace(r *request) error {
	in := r.in.(*accessReplaceIn)
	idem, err := accessIdem(r)
	if err != nil {
		return err
	}
	keyID, _ := kv.ParseID(r.pathParam("key_id")) // checked by accessBind
	k, err := a.s.db.ReplaceAccessKey(r.ctx, kv.AccessReplaceInput{ID: in.TransactionID, Proof: r.access().proof, KeyID: keyID, Idem: idem})
	return a.keyAnswer(r, k, err, 200)
}

// keyAnswer answers a key step: the key with its secret, or a replay without it.
func (a *accessSide) keyAnswer(r *request, k kv.AccessKeyIssued, err error, status int) error {
	call := r.access()
	call.opened(k.Access)
	if err != nil {
		return err
	}
	call.replayed = k.Replayed
	r.out, r.status = accessKeyOutOf(k), status
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
		if name, ok := firstName(f.Loc); ok && name == from {
			f.Loc = append([]any{to}, f.Loc[1:]...)
		}
		out.Fields[i] = f
	}
	return &out
}
