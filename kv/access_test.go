package kv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func newProof(tb testing.TB) string {
	tb.Helper()
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "jmg_" + base64.RawURLEncoding.EncodeToString(b[:])
}

func mustStartAccess(tb testing.TB, db *DB, email, proof string) AccessStarted {
	tb.Helper()
	st, err := db.StartAccess(context.Background(), AccessStartInput{Email: email, ClientName: "agent", Proof: proof})
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func TestParseAccessProof(t *testing.T) {
	good := newProof(t)
	if !ParseAccessProof(good) {
		t.Fatalf("%s refused", good)
	}
	for _, bad := range []string{"", "jmg_", good[:len(good)-1], good + "A", "jsk" + good[3:], "jmg_" + strings.Repeat("+", 43),
		"jmg_" + strings.Repeat("A", 42) + "=",
		// 43 characters carry 258 bits: the last character's two spare bits must be zero.
		"jmg_" + strings.Repeat("A", 42) + "B"} {
		if ParseAccessProof(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
	if !ParseAccessProof("jmg_" + strings.Repeat("A", 42) + "E") {
		t.Error("a canonical proof refused")
	}
}

// TestAccessWholeFlowInStore: a new address gets an account only at verification,
// creates a workspace, issues a key that authenticates, and a replay returns it again
// without a secret.
func TestAccessWholeFlowInStore(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, nil)
	proof := newProof(t)
	st := mustStartAccess(t, db, "New@Example.com", proof)
	if st.Access.State != AccessAwaitingEmail || st.Access.State.NextAction() != "verify_email" || len(st.Code) != 6 {
		t.Fatalf("start: %+v", st)
	}
	if _, err := db.FindUserByEmail(ctx, "new@example.com"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("an account exists before the code was read back: %v", err)
	}
	a, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code)
	if err != nil || a.State != AccessAwaitingWorkspace {
		t.Fatalf("verify: %+v %v", a, err)
	}
	u, err := db.FindUserByEmail(ctx, "new@example.com")
	if err != nil || !u.Verified || u.ID != a.UserID {
		t.Fatalf("user %+v %v", u, err)
	}
	ch, err := db.CreateAccessWorkspace(ctx, st.Access.ID, proof, "Starter")
	if err != nil || ch.Access.State != AccessAwaitingKey || ch.Workspace.Role != RoleOwner {
		t.Fatalf("create: %+v %v", ch, err)
	}
	if _, err := db.CreateAccessWorkspace(ctx, st.Access.ID, proof, "Another"); ErrorCode(err) != ECONFLICT {
		t.Fatalf("a second workspace from one transaction: %v", err)
	}
	idem := AccessIdem{Key: NewV4().String(), Fingerprint: [32]byte{1}}
	in := AccessKeyInput{ID: st.Access.ID, Proof: proof, Name: "agent", Scopes: []string{ScopeStudiesRead, ScopeAgentRun},
		Environment: EnvTest, ExpiresDays: 30, Idem: idem}
	k, err := db.IssueAccessKey(ctx, in)
	if err != nil || k.Secret == "" || k.Access.State != AccessCompleted || k.Key.ExpiresAt == nil {
		t.Fatalf("issue: %+v %v", k, err)
	}
	cred, err := db.Authenticate(ctx, k.Secret)
	if err != nil || cred.Key.UserID != u.ID || cred.Org.ID != ch.Workspace.Org.ID {
		t.Fatalf("authenticate: %+v %v", cred, err)
	}
	again, err := db.IssueAccessKey(ctx, in)
	if err != nil || again.Secret != "" || !again.Replayed || again.Key.KeyID != k.Key.KeyID {
		t.Fatalf("replay: %+v %v", again, err)
	}
	other := in
	other.Idem.Fingerprint = [32]byte{2}
	if _, err := db.IssueAccessKey(ctx, other); ErrorCode(err) != ECONFLICT {
		t.Fatalf("same key, other request: %v", err)
	}
	other.Idem = AccessIdem{Key: NewV4().String()}
	if _, err := db.IssueAccessKey(ctx, other); ErrorCode(err) != ECONFLICT {
		t.Fatalf("a second key from one transaction: %v", err)
	}
	keys, _ := db.FindKeys(ctx, ch.Workspace.Org.ID)
	if len(keys) != 1 {
		t.Fatalf("%d keys", len(keys))
	}
}

// TestAccessProofMismatchDisturbsNothing: another proof is refused and the transaction
// carries on for its own.
func TestAccessProofMismatchDisturbsNothing(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, nil)
	proof := newProof(t)
	st := mustStartAccess(t, db, "p@example.com", proof)
	for i := 0; i < AccessAttempts+1; i++ {
		if _, err := db.VerifyAccessEmail(ctx, st.Access.ID, newProof(t), st.Code); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("other proof: %v", err)
		}
	}
	if _, err := db.VerifyAccessEmail(ctx, NewV4(), proof, st.Code); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("unknown transaction: %v", err)
	}
	if a, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code); err != nil || a.State != AccessAwaitingWorkspace {
		t.Fatalf("own proof: %+v %v", a, err)
	}
}

// TestAccessFiveWrongCodesFail: four wrong codes leave tries, the fifth fails the
// transaction for good (the right code too is then refused).
func TestAccessFiveWrongCodesFail(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, nil)
	proof := newProof(t)
	st := mustStartAccess(t, db, "p@example.com", proof)
	wrong := "000000"
	if st.Code == wrong {
		wrong = "111111"
	}
	for i := 1; i < AccessAttempts; i++ {
		a, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, wrong)
		if ErrorCode(err) != EINVALID || a.State != AccessAwaitingEmail {
			t.Fatalf("wrong code %d: %+v %v", i, a, err)
		}
	}
	a, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, wrong)
	if ErrorCode(err) != EGONE || a.State != AccessFailed {
		t.Fatalf("fifth wrong code: %+v %v", a, err)
	}
	if _, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code); ErrorCode(err) != EGONE {
		t.Fatalf("right code after failure: %v", err)
	}
}

// TestAccessExpiresAfter30Minutes: a step a moment before expiry works, one at expiry
// is EGONE, and the sweep removes the transaction.
func TestAccessExpiresAfter30Minutes(t *testing.T) {
	ctx := context.Background()
	c := newClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	proof := newProof(t)
	st := mustStartAccess(t, db, "p@example.com", proof)
	if !st.Access.ExpiresAt.Equal(c.now().Add(30 * time.Minute)) {
		t.Fatalf("expires %v", st.Access.ExpiresAt)
	}
	c.add(30*time.Minute - time.Second)
	if _, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code); err != nil {
		t.Fatal(err)
	}
	c.add(time.Second)
	if a, err := db.ListAccessWorkspaces(ctx, st.Access.ID, proof); ErrorCode(err) != EGONE || a.Access.State != AccessExpired {
		t.Fatalf("at expiry: %+v %v", a.Access, err)
	}
	if n, err := db.SweepAccess(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d %v", n, err)
	}
	if _, err := db.FindAccess(ctx, st.Access.ID, proof); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("after the sweep: %v", err)
	}
}

// TestAccessOutOfOrder: a step the transaction is not waiting for is ECONFLICT and
// the answer names the step due.
func TestAccessOutOfOrder(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, nil)
	proof := newProof(t)
	st := mustStartAccess(t, db, "p@example.com", proof)
	a, err := db.CreateAccessWorkspace(ctx, st.Access.ID, proof, "W")
	if ErrorCode(err) != ECONFLICT || a.Access.State.NextAction() != "verify_email" {
		t.Fatalf("workspace before email: %+v %v", a, err)
	}
	k, err := db.IssueAccessKey(ctx, AccessKeyInput{ID: st.Access.ID, Proof: proof, Name: "k", Scopes: []string{ScopeStudiesRead}, Environment: EnvTest})
	if ErrorCode(err) != ECONFLICT || k.Secret != "" {
		t.Fatalf("key before email: %+v %v", k, err)
	}
}

// TestAccessTOTPAndRequireMFA: a person with an authenticator passes by TOTP (a code
// once only); a person without one whose workspace requires two-step is sent back to
// verify_mfa after choosing it, and passes by email.
func TestAccessTOTPAndRequireMFA(t *testing.T) {
	ctx := context.Background()
	c := newClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	org := mustOrg(t, db, "acme")
	u, _ := db.FindUserByEmail(ctx, "acme@example.com")
	secret := newTOTPSecret()
	if err := db.update(ctx, func(tx Tx) error {
		u.TOTPEnabled = true
		if err := putUser(tx, u); err != nil {
			return err
		}
		return putTwoStep(tx, u.ID, twoStepRecord{TOTPSecret: secret})
	}); err != nil {
		t.Fatal(err)
	}
	proof := newProof(t)
	st := mustStartAccess(t, db, u.Email, proof)
	a, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code)
	if err != nil || a.State != AccessAwaitingMFA {
		t.Fatalf("verify: %+v %v", a, err)
	}
	if _, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: a.ID, Proof: proof, Method: MethodSMS}); ErrorCode(err) != EINVALID {
		t.Fatalf("sms without a provider: %v", err)
	}
	ch, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: a.ID, Proof: proof, Method: MethodTOTP})
	if err != nil || ch.Code != "" {
		t.Fatalf("totp challenge: %+v %v", ch, err)
	}
	code := otpCode(t, secret, c.now())
	if a, err = db.VerifyAccessChallenge(ctx, a.ID, proof, ch.ChallengeID, code); err != nil || a.State != AccessAwaitingWorkspace || !a.MFAPassed {
		t.Fatalf("totp: %+v %v", a, err)
	}
	if sel, err := db.SelectAccessWorkspace(ctx, a.ID, proof, org.ID); err != nil || sel.Access.State != AccessAwaitingKey {
		t.Fatalf("select: %+v %v", sel, err)
	}

	// The same code again, in a new transaction, is refused: each step is used once.
	proof2 := newProof(t)
	st2 := mustStartAccess(t, db, u.Email, proof2)
	_, _ = db.VerifyAccessEmail(ctx, st2.Access.ID, proof2, st2.Code)
	ch2, _ := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: st2.Access.ID, Proof: proof2, Method: MethodTOTP})
	if _, err := db.VerifyAccessChallenge(ctx, st2.Access.ID, proof2, ch2.ChallengeID, code); ErrorCode(err) != EINVALID {
		t.Fatalf("a TOTP code twice: %v", err)
	}

	// A member without an authenticator in a workspace requiring two-step.
	if _, err := db.AddMember(ctx, org.ID, "m@example.com", RoleMember); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: u.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	proof3 := newProof(t)
	st3 := mustStartAccess(t, db, "m@example.com", proof3)
	if a, err = db.VerifyAccessEmail(ctx, st3.Access.ID, proof3, st3.Code); err != nil || a.State != AccessAwaitingMFA {
		t.Fatalf("verify, workspace requires two-step: %+v %v", a, err)
	}
	// The code that signed in came from the mailbox: a second code from it is no
	// second step unless the workspace accepts codes by email.
	if _, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: a.ID, Proof: proof3, Method: MethodEmail}); ErrorCode(err) != EINVALID ||
		!strings.Contains(err.Error(), "no second step the access API can use") {
		t.Fatalf("email challenge, workspace not accepting codes by email: %v", err)
	}
	if ms, err := db.FindAccessMethods(ctx, a.ID, proof3, true); err != nil || len(ms) != 0 {
		t.Fatalf("methods, workspace not accepting codes by email: %v %v", ms, err)
	}
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: org.ID, Actor: u.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	mail, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: a.ID, Proof: proof3, Method: MethodEmail})
	if err != nil || mail.To != "m@example.com" || len(mail.Code) != 6 {
		t.Fatalf("email challenge: %+v %v", mail, err)
	}
	if a, err = db.VerifyAccessChallenge(ctx, a.ID, proof3, mail.ChallengeID, mail.Code); err != nil || a.State != AccessAwaitingWorkspace {
		t.Fatalf("email code: %+v %v", a, err)
	}
	sel, err := db.SelectAccessWorkspace(ctx, a.ID, proof3, org.ID)
	if err != nil || sel.Access.State != AccessAwaitingKey || sel.Workspace.Role != RoleMember {
		t.Fatalf("select: %+v %v", sel, err)
	}
	k, err := db.IssueAccessKey(ctx, AccessKeyInput{ID: a.ID, Proof: proof3, Name: "k", Scopes: []string{ScopeExportRead}, Environment: EnvLive})
	if ErrorCode(err) != EFORBIDDEN || k.Secret != "" {
		t.Fatalf("a member asking for export:read: %+v %v", k, err)
	}
}

// TestAccessMethods: the methods the access API offers follow the person's second steps,
// the server's text-message provider, and whether an organisation of theirs accepts
// codes by email as a second step.
func TestAccessMethods(t *testing.T) {
	phone := User{Phone: "+447700900123", EmailFallback: true}
	if got := AccessMethods(phone, true, true); len(got) != 2 || got[0] != MethodSMS || got[1] != MethodEmail {
		t.Fatalf("phone, provider: %v", got)
	}
	if got := AccessMethods(phone, false, true); len(got) != 1 || got[0] != MethodEmail {
		t.Fatalf("phone, no provider: %v", got)
	}
	if got := AccessMethods(phone, true, false); len(got) != 1 || got[0] != MethodSMS {
		t.Fatalf("phone, provider, email not accepted: %v", got)
	}
	phone.EmailFallback = false
	if got := AccessMethods(phone, true, true); len(got) != 1 || got[0] != MethodSMS {
		t.Fatalf("phone, fallback off: %v", got)
	}
	if got := AccessMethods(User{TOTPEnabled: true}, true, true); len(got) != 1 || got[0] != MethodTOTP {
		t.Fatalf("authenticator, fallback off: %v", got)
	}
	if got := AccessMethods(User{}, true, true); len(got) != 1 || got[0] != MethodEmail {
		t.Fatalf("no second step: %v", got)
	}
	if got := AccessMethods(User{}, true, false); len(got) != 0 {
		t.Fatalf("no second step, email not accepted: %v", got)
	}
}

// TestAccessChallengeLimit: five challenges per transaction, each replacing the last;
// the sixth is refused, and a replaced challenge's code no longer works.
func TestAccessChallengeLimit(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "acme")
	u, _ := db.FindUserByEmail(ctx, "acme@example.com")
	if _, err := db.SetRequireMFA(ctx, RequireMFAInput{OrgID: org.ID, Actor: u.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetTwoStepEmail(ctx, TwoStepEmailInput{OrgID: org.ID, Actor: u.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	proof := newProof(t)
	st := mustStartAccess(t, db, u.Email, proof)
	if _, err := db.VerifyAccessEmail(ctx, st.Access.ID, proof, st.Code); err != nil {
		t.Fatal(err)
	}
	var first AccessChallengeIssued
	for i := 0; i < AccessChallenges; i++ {
		ch, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: st.Access.ID, Proof: proof, Method: MethodEmail})
		if err != nil {
			t.Fatalf("challenge %d: %v", i+1, err)
		}
		if i == 0 {
			first = ch
		}
	}
	if _, err := db.RequestAccessChallenge(ctx, AccessChallengeInput{ID: st.Access.ID, Proof: proof, Method: MethodEmail}); ErrorCode(err) != ECONFLICT {
		t.Fatalf("challenge %d: %v", AccessChallenges+1, err)
	}
	if _, err := db.VerifyAccessChallenge(ctx, st.Access.ID, proof, first.ChallengeID, first.Code); ErrorCode(err) != EINVALID {
		t.Fatalf("a replaced challenge: %v", err)
	}
}
