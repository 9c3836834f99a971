package kv

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"sort"
	"time"
)

// Web app sessions: server-side records found by the SHA-256 of a random token that
// only the browser's cookie holds.
const (
	SessionIdleTTL = 14 * 24 * time.Hour
	// SessionTouchEvery bounds how stale LastSeenAt may be: a session is written at
	// most this often, not on every request.
	SessionTouchEvery = 5 * time.Minute

	sessionPrefix   = "ivs_"
	sessionTokenLen = len(sessionPrefix) + keyBodyLen + keyChecksumLen
)

// Session is a signed-in browser. OrgID and Environment are the chosen workspace (zero
// until chosen). The token is never stored; ID names the session in lists and revocation.
type Session struct {
	ID            ID          `json:"id"`
	UserID        ID          `json:"user_id"`
	OrgID         ID          `json:"org_id"`
	Environment   Environment `json:"environment,omitempty"`
	TwoStepPassed bool        `json:"two_step_passed"`
	// TwoStepByEmail: the check was passed with a code by email, which counts only in
	// an organisation that accepts them (PassedTwoStepFor).
	TwoStepByEmail bool `json:"two_step_by_email,omitempty"`
	// VerifiedAt is when the session last proved its second step again (a
	// re-verification or an authenticator just confirmed); sign-in and a passed two-step
	// check start a new session, so CreatedAt counts too (VerifiedRecently).
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastSeenAt time.Time  `json:"last_seen_at"`
	UserAgent  string     `json:"user_agent,omitempty"`
	IP         string     `json:"ip,omitempty"`
	// CSRF is the session's anti-forgery secret: every form carries it and the server
	// compares with CheckCSRF.
	CSRF string `json:"csrf"`
}

// CheckCSRF reports, in constant time, whether presented is the session's CSRF secret.
func (s Session) CheckCSRF(presented string) bool {
	return s.CSRF != "" && hmac.Equal([]byte(s.CSRF), []byte(presented))
}

// sessionRecord is what is stored: the session, its token's hash and the state of a
// two-step check in progress.
type sessionRecord struct {
	Session
	Hash             []byte     `json:"hash"`
	TwoStepFailures  int        `json:"two_step_failures,omitempty"`
	EmailCodeHash    []byte     `json:"email_code_hash,omitempty"`
	EmailCodeExpires *time.Time `json:"email_code_expires,omitempty"`
	// SMSCode is the two-step code last texted, PhoneEnrolment the code texted to a
	// number being added (user_phone.go).
	SMSCode        *phoneCode `json:"sms_code,omitempty"`
	PhoneEnrolment *phoneCode `json:"phone_enrolment,omitempty"`
}

// SessionAuth is a session resolved for a request.
type SessionAuth struct {
	Session Session
	User    User
	Org     Org  // zero when no workspace is chosen (or the membership has ended)
	Role    Role // "" likewise
}

// TwoStepDue reports whether the session must pass a two-step check before it may do
// anything but that check: the user or the chosen organisation requires one and the
// session has not passed it in a way the organisation accepts (PassedTwoStepFor).
func (a SessionAuth) TwoStepDue() bool {
	return NeedsTwoStep(a.User, a.Org) && !a.Session.PassedTwoStepFor(a.Org)
}

var errSession = Errorf(EUNAUTHORIZED, "session_invalid", "Sign in to continue.")

// AuthenticateSession resolves a session token. It returns EUNAUTHORIZED session_invalid
// for a malformed, unknown, revoked or idle-expired (14 days) token. LastSeenAt (and the
// user agent and address) are written at most every SessionTouchEvery. When the chosen
// organisation no longer counts the user as a member, the choice is dropped.
func (db *DB) AuthenticateSession(ctx context.Context, token, userAgent, ip string) (SessionAuth, error) {
	if !ParseSessionToken(token) {
		return SessionAuth{}, errSession
	}
	hash := sha256.Sum256([]byte(token))
	var auth SessionAuth
	var rec sessionRecord
	stale := false
	err := db.view(ctx, func(tx Tx) error {
		var err error
		rec, err = sessionByHash(tx, hash[:])
		if err != nil {
			return err
		}
		now := db.Now()
		if !now.Before(rec.LastSeenAt.Add(SessionIdleTTL)) {
			return errSession
		}
		auth, stale, err = resolveSession(tx, rec)
		if err != nil {
			return err
		}
		stale = stale || now.Sub(rec.LastSeenAt) >= SessionTouchEvery
		return nil
	})
	if err != nil {
		return SessionAuth{}, err
	}
	if stale {
		err := db.update(ctx, func(tx Tx) error {
			r, err := sessionByHash(tx, hash[:])
			if err != nil {
				return nil // revoked meanwhile: the next request finds out
			}
			r.LastSeenAt = db.Now()
			if userAgent != "" {
				r.UserAgent = clip(userAgent, 300)
			}
			if ip != "" {
				r.IP = clip(ip, 64)
			}
			if _, err := memberFor(tx, r.OrgID, r.UserID); r.OrgID.IsZero() || err != nil {
				r.OrgID, r.Environment = ID{}, ""
			}
			return putSession(tx, r)
		})
		if err != nil {
			return SessionAuth{}, err
		}
		auth.Session.LastSeenAt = db.Now()
	}
	return auth, nil
}

// resolveSession loads the session's user and chosen organisation; changed reports that
// the stored choice is no longer valid.
func resolveSession(tx Tx, rec sessionRecord) (SessionAuth, bool, error) {
	u, err := userByID(tx, rec.UserID)
	if err != nil {
		return SessionAuth{}, false, errSession
	}
	auth := SessionAuth{Session: rec.Session, User: u}
	if rec.OrgID.IsZero() {
		return auth, false, nil
	}
	m, err := memberFor(tx, rec.OrgID, rec.UserID)
	if err != nil {
		auth.Session.OrgID, auth.Session.Environment = ID{}, ""
		return auth, true, nil
	}
	org, err := orgByID(tx, rec.OrgID)
	if err != nil {
		auth.Session.OrgID, auth.Session.Environment = ID{}, ""
		return auth, true, nil
	}
	auth.Org, auth.Role = org, m.Role
	return auth, false, nil
}

// WorkspaceInput chooses the session's organisation and data environment.
type WorkspaceInput struct {
	Token       string
	OrgID       ID
	Environment Environment
}

// ChooseWorkspace sets the session's organisation and environment and returns the
// session resolved again. The choice is stored even when the organisation requires a
// two-step check the session has not passed: the answer's TwoStepDue then says so and
// the server sends the person to the check. EUNAUTHORIZED for a bad token; EINVALID for
// a bad environment; ENOTFOUND when the user is not a member of the organisation.
func (db *DB) ChooseWorkspace(ctx context.Context, in WorkspaceInput) (SessionAuth, error) {
	if !in.Environment.Valid() {
		return SessionAuth{}, Invalid(FieldError{Loc: []any{"environment"}, Msg: "Environment must be 'test' or 'live'.", Type: "enum"})
	}
	if !ParseSessionToken(in.Token) {
		return SessionAuth{}, errSession
	}
	hash := sha256.Sum256([]byte(in.Token))
	var auth SessionAuth
	err := db.update(ctx, func(tx Tx) error {
		rec, err := liveSession(tx, hash[:], db.Now())
		if err != nil {
			return err
		}
		if in.OrgID.IsZero() {
			return notFound("Organisation")
		}
		if _, err := memberFor(tx, in.OrgID, rec.UserID); err != nil {
			return notFound("Organisation")
		}
		rec.OrgID, rec.Environment = in.OrgID, in.Environment
		rec.LastSeenAt = db.Now()
		if err := putSession(tx, rec); err != nil {
			return err
		}
		auth, _, err = resolveSession(tx, rec)
		return err
	})
	return auth, err
}

// SignOut deletes the session the token names. An unknown token is not an error.
func (db *DB) SignOut(ctx context.Context, token string) error {
	return db.update(ctx, func(tx Tx) error { return db.dropSessionToken(tx, token) })
}

// FindSessions returns the user's live sessions, most recently seen first, without their
// CSRF secrets (a list is for showing).
func (db *DB) FindSessions(ctx context.Context, user ID) ([]Session, error) {
	var out []Session
	err := db.view(ctx, func(tx Tx) error {
		out = nil
		now := db.Now()
		return eachUserSession(tx, user, func(r sessionRecord) error {
			if now.Before(r.LastSeenAt.Add(SessionIdleTTL)) {
				r.Session.CSRF = ""
				out = append(out, r.Session)
			}
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastSeenAt.After(out[j].LastSeenAt) })
	return out, err
}

// RevokeSession ends one of the user's sessions by id. ENOTFOUND when the user has no
// such session.
func (db *DB) RevokeSession(ctx context.Context, user, id ID) error {
	return db.update(ctx, func(tx Tx) error {
		var rec sessionRecord
		ok, err := getJSON(tx.Bucket(bucketAppSessions), id[:], &rec)
		if err != nil {
			return err
		}
		if !ok || rec.UserID != user {
			return notFound("Session")
		}
		return deleteSession(tx, rec)
	})
}

// RevokeOtherSessions ends every session of the user except keep (the one asking) and
// returns how many it ended.
func (db *DB) RevokeOtherSessions(ctx context.Context, user, keep ID) (int, error) {
	n := 0
	err := db.update(ctx, func(tx Tx) error {
		n = 0
		var drop []sessionRecord
		if err := eachUserSession(tx, user, func(r sessionRecord) error {
			if r.ID != keep {
				drop = append(drop, r)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, r := range drop {
			if err := deleteSession(tx, r); err != nil {
				return err
			}
		}
		n = len(drop)
		return nil
	})
	return n, err
}

// ParseSessionToken reports whether s is shaped as a session token (ivs_, 43 base62
// characters, a 6-character checksum), so a mistyped or invented cookie costs no lookup.
func ParseSessionToken(s string) bool {
	return parseCheckedToken(s, sessionPrefix)
}

// parseCheckedToken checks prefix + 43 base62 + checksum of what precedes it.
func parseCheckedToken(s, prefix string) bool {
	if len(s) != len(prefix)+keyBodyLen+keyChecksumLen || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if !isBase62(s[i]) {
			return false
		}
	}
	split := len(s) - keyChecksumLen
	return checksumFast(s[:split]) == s[split:]
}

// newCheckedToken returns prefix + 32 random bytes in base62 + checksum, and its SHA-256.
func newCheckedToken(prefix string) (string, [32]byte) {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	head := prefix + toBase62(new(big.Int).SetBytes(raw[:]), keyBodyLen)
	tok := head + checksumFast(head)
	return tok, sha256.Sum256([]byte(tok))
}

func newSessionToken() (string, [32]byte) { return newCheckedToken(sessionPrefix) }

func newCSRFSecret() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func sessionByHash(tx Tx, hash []byte) (sessionRecord, error) {
	id := tx.Bucket(bucketAppSessionHash).Get(hash)
	if id == nil {
		return sessionRecord{}, errSession
	}
	var rec sessionRecord
	if ok, err := getJSON(tx.Bucket(bucketAppSessions), id, &rec); err != nil || !ok {
		return sessionRecord{}, errSession
	}
	if !hmac.Equal(rec.Hash, hash) {
		return sessionRecord{}, errSession
	}
	return rec, nil
}

// liveSession is sessionByHash that also refuses an idle-expired session.
func liveSession(tx Tx, hash []byte, now time.Time) (sessionRecord, error) {
	rec, err := sessionByHash(tx, hash)
	if err != nil {
		return sessionRecord{}, err
	}
	if !now.Before(rec.LastSeenAt.Add(SessionIdleTTL)) {
		return sessionRecord{}, errSession
	}
	return rec, nil
}

func putSession(tx Tx, r sessionRecord) error {
	if err := putJSON(tx.Bucket(bucketAppSessions), r.ID[:], r); err != nil {
		return err
	}
	if err := tx.Bucket(bucketAppSessionHash).Put(r.Hash, r.ID[:]); err != nil {
		return err
	}
	return tx.Bucket(bucketUserSessions).Put(append(r.UserID[:], r.ID[:]...), []byte{})
}

func deleteSession(tx Tx, r sessionRecord) error {
	if err := tx.Bucket(bucketAppSessions).Delete(r.ID[:]); err != nil {
		return err
	}
	if err := tx.Bucket(bucketAppSessionHash).Delete(r.Hash); err != nil {
		return err
	}
	return tx.Bucket(bucketUserSessions).Delete(append(r.UserID[:], r.ID[:]...))
}

// dropSessionToken deletes the session token names, if it is one.
func (db *DB) dropSessionToken(tx Tx, token string) error {
	if !ParseSessionToken(token) {
		return nil
	}
	hash := sha256.Sum256([]byte(token))
	rec, err := sessionByHash(tx, hash[:])
	if err != nil {
		return nil
	}
	return deleteSession(tx, rec)
}

func eachUserSession(tx Tx, user ID, fn func(sessionRecord) error) error {
	c := tx.Bucket(bucketUserSessions).Cursor()
	sessions := tx.Bucket(bucketAppSessions)
	for k, _ := c.Seek(user[:]); k != nil && string(k[:16]) == string(user[:]); k, _ = c.Next() {
		var r sessionRecord
		ok, err := getJSON(sessions, k[16:], &r)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}
