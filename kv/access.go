package kv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"
)

// Account access transactions: how an agent gets an API key for its person without a
// browser. The agent makes a secret proof (jmg_ + 32 random bytes) and starts a
// transaction with the person's email; every later step must present the same proof
// (only its SHA-256 is stored). The person reads back the emailed code, passes a
// two-step check when their account or the chosen workspace requires one, and the
// agent picks a workspace and issues one key. Each step is one bbolt transaction, so
// the proof check, the state check and the change commit together.
const (
	AccessTTL          = 30 * time.Minute // a transaction's whole life
	AccessAttempts     = 5                // wrong codes (email or two-step, together) before it fails
	AccessChallengeTTL = 10 * time.Minute // a two-step challenge's code
	AccessChallenges   = 5                // two-step challenges one transaction may ask for
	AccessClientMax    = 100              // characters of client_name

	accessProofPrefix = "jmg_"
	accessProofLen    = len(accessProofPrefix) + 43 // 32 bytes base64url, no padding
)

// AccessState is where a transaction stands.
type AccessState string

// The states. Expired is never stored: a transaction past its expiry reads as expired.
const (
	AccessAwaitingEmail     AccessState = "awaiting_email"
	AccessAwaitingMFA       AccessState = "awaiting_mfa"
	AccessAwaitingWorkspace AccessState = "awaiting_workspace"
	AccessAwaitingKey       AccessState = "awaiting_key"
	AccessCompleted         AccessState = "completed"
	AccessFailed            AccessState = "failed"
	AccessExpired           AccessState = "expired"
)

// AccessStates lists every state, in the order a transaction passes them.
var AccessStates = []AccessState{AccessAwaitingEmail, AccessAwaitingMFA, AccessAwaitingWorkspace,
	AccessAwaitingKey, AccessCompleted, AccessFailed, AccessExpired}

// NextAction names the step the state is waiting for: verify_email, verify_mfa,
// select_workspace, issue_key, or none once the transaction is over.
func (s AccessState) NextAction() string {
	switch s {
	case AccessAwaitingEmail:
		return "verify_email"
	case AccessAwaitingMFA:
		return "verify_mfa"
	case AccessAwaitingWorkspace:
		return "select_workspace"
	case AccessAwaitingKey:
		return "issue_key"
	}
	return "none"
}

// Access is what a step may tell the transaction's own caller about it.
type Access struct {
	ID         ID          `json:"id"`
	ClientName string      `json:"client_name"`
	Email      string      `json:"email"`
	State      AccessState `json:"state"`
	CreatedAt  time.Time   `json:"created_at"`
	ExpiresAt  time.Time   `json:"expires_at"`
	UserID     ID          `json:"user_id"`
	OrgID      ID          `json:"org_id"`
	MFAPassed  bool        `json:"mfa_passed"`
}

// accessRecord is the stored transaction with its secrets' hashes.
type accessRecord struct {
	Access
	ProofHash  []byte           `json:"proof_hash"`
	CodeHash   []byte           `json:"code_hash,omitempty"` // the emailed code, until verified
	Failures   int              `json:"failures"`
	Challenge  *accessChallenge `json:"challenge,omitempty"`
	Challenges int              `json:"challenges"`
	// Created is the workspace the transaction created: one per transaction, so a loop
	// cannot fill the instance with organisations.
	Created ID `json:"created,omitempty"`
	// The one key the transaction issued or replaced, and the request that did it: a
	// replay of that request (same Idempotency-Key, same fingerprint) returns Issued.
	Issued  *AccessKey `json:"issued,omitempty"`
	IdemKey string     `json:"idem_key,omitempty"`
	IdemFP  []byte     `json:"idem_fp,omitempty"`
}

// accessChallenge is the pending two-step challenge: for email and sms the keyed hash
// of the code sent; for totp none (the authenticator makes the code).
type accessChallenge struct {
	ID        ID            `json:"id"`
	Method    TwoStepMethod `json:"method"`
	Hash      []byte        `json:"hash,omitempty"`
	ExpiresAt time.Time     `json:"expires_at"`
}

// Errors of the access steps.
var (
	errAccessProof   = Errorf(EUNAUTHORIZED, "invalid_token", "The access proof does not match a transaction: send the Bearer jmg_ proof the transaction was started with.")
	errAccessExpired = Errorf(EGONE, "transaction_expired", "This transaction has expired (they last 30 minutes): start a new one.")
	errAccessFailed  = Errorf(EGONE, "transaction_failed", "This transaction ended after too many wrong codes: start a new one.")
)

// ParseAccessProof reports whether s is shaped as an access proof: jmg_ and 43
// base64url characters that decode to exactly 32 bytes.
func ParseAccessProof(s string) bool {
	if len(s) != accessProofLen || !strings.HasPrefix(s, accessProofPrefix) {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s[len(accessProofPrefix):])
	return err == nil && len(raw) == 32
}

func hashAccessProof(proof string) []byte {
	h := sha256.Sum256([]byte(proof))
	return h[:]
}

// AccessStartInput starts a transaction.
type AccessStartInput struct {
	Email      string
	ClientName string
	Proof      string
}

// AccessStarted is a new transaction and the code to email to its address. The code
// is made and mailed whether or not the address has an account (an account is made
// only once the code is read back), so nothing tells the caller which.
type AccessStarted struct {
	Access Access
	Code   string
}

// StartAccess starts a transaction bound to the proof, valid AccessTTL. EINVALID for a
// malformed email or a client name that is empty, longer than 100 characters or not
// one line; EUNAUTHORIZED for a malformed proof.
func (db *DB) StartAccess(ctx context.Context, in AccessStartInput) (AccessStarted, error) {
	if !ParseAccessProof(in.Proof) {
		return AccessStarted{}, errAccessProof
	}
	email, ok := NormalizeEmail(in.Email)
	var fields []FieldError
	if !ok {
		fields = append(fields, errEmail)
	}
	client := strings.TrimSpace(in.ClientName)
	if n := utf8.RuneCountInString(client); n == 0 || n > AccessClientMax || strings.ContainsAny(client, "\x00\r\n") {
		fields = append(fields, FieldError{Loc: []any{"client_name"}, Msg: "client_name must be 1 to 100 characters on one line.",
			Type: "string_length", Ctx: map[string]any{"max_length": AccessClientMax}})
	}
	if len(fields) > 0 {
		return AccessStarted{}, Invalid(fields...)
	}
	now := db.Now()
	code := newDigits(SignInCodeDigits)
	rec := accessRecord{Access: Access{ID: NewV4(), ClientName: client, Email: email, State: AccessAwaitingEmail,
		CreatedAt: now, ExpiresAt: now.Add(AccessTTL)}, ProofHash: hashAccessProof(in.Proof)}
	rec.CodeHash = db.peopleMAC("access-email", rec.ID.String(), code)
	err := db.update(ctx, func(tx Tx) error { return putAccess(tx, rec) })
	if err != nil {
		return AccessStarted{}, err
	}
	return AccessStarted{Access: rec.view(now), Code: code}, nil
}

// FindAccess returns the transaction the proof opens. EUNAUTHORIZED when there is no
// such transaction or the proof is another's (one answer for both).
func (db *DB) FindAccess(ctx context.Context, id ID, proof string) (Access, error) {
	var out Access
	err := db.view(ctx, func(tx Tx) error {
		rec, err := accessByProof(tx, id, proof)
		if err != nil {
			return err
		}
		out = rec.view(db.Now())
		return nil
	})
	return out, err
}

// accessStep runs fn on the transaction id opened by proof, in one update, after the
// checks every step shares: the proof matches (EUNAUTHORIZED otherwise, and nothing is
// written), the transaction has not expired or failed (EGONE), and it is in one of the
// states fn accepts (ECONFLICT wrong_step naming the next action due). fn returns a
// refusal to commit along with the record (a wrong code's count) as kept, and err to
// roll everything back. The returned Access is the transaction as it stands after the
// step, for every outcome but EUNAUTHORIZED.
func (db *DB) accessStep(ctx context.Context, id ID, proof string, states []AccessState,
	fn func(tx Tx, rec *accessRecord, now time.Time) (kept, err error)) (Access, error) {
	var out Access
	var kept error
	err := db.update(ctx, func(tx Tx) error {
		out, kept = Access{}, nil
		rec, err := accessByProof(tx, id, proof)
		if err != nil {
			return err
		}
		now := db.Now()
		out = rec.view(now)
		switch {
		case out.State == AccessExpired:
			return errAccessExpired
		case out.State == AccessFailed:
			return errAccessFailed
		}
		if !containsState(states, rec.State) {
			return wrongStep(rec.State)
		}
		if kept, err = fn(tx, &rec, now); err != nil {
			return err // out stays the transaction as it was: nothing is written
		}
		out = rec.view(now)
		return putAccess(tx, rec)
	})
	if err != nil {
		return out, err
	}
	return out, kept
}

// wrongStep is the refusal of a step the transaction is not waiting for.
func wrongStep(s AccessState) error {
	if s == AccessCompleted {
		return Errorf(ECONFLICT, "wrong_step", "This transaction has issued its key; start a new transaction for another.")
	}
	return Errorf(ECONFLICT, "wrong_step", "This transaction is waiting for "+s.NextAction()+" first.")
}

// wrongAccessCode counts a wrong code against rec; the AccessAttempts-th fails the
// transaction. It returns the refusal to commit with the count.
func wrongAccessCode(rec *accessRecord, field string) error {
	rec.Failures++
	if rec.Failures >= AccessAttempts {
		rec.State, rec.Challenge, rec.CodeHash = AccessFailed, nil, nil
		return errAccessFailed
	}
	left := AccessAttempts - rec.Failures
	return Invalid(FieldError{Loc: []any{field}, Msg: "That code is not right; " + itoa(left) + " " + plural(left, "try", "tries") + " left.",
		Type: "invalid_code", Ctx: map[string]any{"attempts_left": left}})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// VerifyAccessEmail checks the emailed code. Right, it makes the account if the
// address has none, marks the address verified, and moves on to verify_mfa when the
// person has an authenticator or a workspace of theirs requires two-step, else to
// select_workspace. A wrong code is EINVALID invalid_code at ["token"]; the fifth
// wrong code (of either kind) fails the transaction (EGONE transaction_failed).
func (db *DB) VerifyAccessEmail(ctx context.Context, id ID, proof, token string) (Access, error) {
	code, okCode := ParseSignInCode(token)
	return db.accessStep(ctx, id, proof, []AccessState{AccessAwaitingEmail},
		func(tx Tx, rec *accessRecord, now time.Time) (error, error) {
			if !okCode || !hmac.Equal(rec.CodeHash, db.peopleMAC("access-email", rec.ID.String(), code)) {
				return wrongAccessCode(rec, "token"), nil
			}
			u, err := db.userForEmail(tx, rec.Email)
			if err != nil {
				return nil, err
			}
			u.Verified = true
			u.LastSignInAt = &now
			if err := putUser(tx, u); err != nil {
				return nil, err
			}
			rec.UserID, rec.CodeHash = u.ID, nil
			need, err := twoStepDue(tx, u)
			if err != nil {
				return nil, err
			}
			rec.State = AccessAwaitingWorkspace
			if need {
				rec.State = AccessAwaitingMFA
			}
			return nil, nil
		})
}

// twoStepDue reports whether u must pass two-step before choosing a workspace: they
// have an authenticator, or one of their workspaces requires two-step.
func twoStepDue(tx Tx, u User) (bool, error) {
	if NeedsTwoStep(u, Org{}) {
		return true, nil
	}
	c := tx.Bucket(bucketUserOrgs).Cursor()
	for k, _ := c.Seek(u.ID[:]); k != nil && string(k[:16]) == string(u.ID[:]); k, _ = c.Next() {
		var orgID ID
		copy(orgID[:], k[16:])
		if org, err := orgByID(tx, orgID); err == nil && NeedsTwoStep(u, org) {
			return true, nil
		}
	}
	return false, nil
}

// accessByProof loads transaction id and checks the proof in constant time.
func accessByProof(tx Tx, id ID, proof string) (accessRecord, error) {
	if !ParseAccessProof(proof) {
		return accessRecord{}, errAccessProof
	}
	var rec accessRecord
	ok, err := getJSON(tx.Bucket(bucketAccess), id[:], &rec)
	if err != nil {
		return accessRecord{}, err
	}
	if !ok || !hmac.Equal(rec.ProofHash, hashAccessProof(proof)) {
		return accessRecord{}, errAccessProof
	}
	return rec, nil
}

// view is the record as its caller may see it at now.
func (rec accessRecord) view(now time.Time) Access {
	a := rec.Access
	if !now.Before(a.ExpiresAt) && a.State != AccessFailed {
		a.State = AccessExpired
	}
	return a
}

func putAccess(tx Tx, rec accessRecord) error {
	return putJSON(tx.Bucket(bucketAccess), rec.ID[:], rec)
}

func containsState(list []AccessState, s AccessState) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SweepAccess deletes transactions that expired, and returns how many went. Nothing
// depends on it for correctness (every step checks expiry itself).
func (db *DB) SweepAccess(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx Tx) error {
		n = 0
		now := db.Now()
		b := tx.Bucket(bucketAccess)
		var dead [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			var rec accessRecord
			if err := jsonUnmarshal(v, &rec); err != nil || !now.Before(rec.ExpiresAt) {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, err
}
