package kv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"time"
)

// OAuth connections: what a person's approval creates. A connection ties a client to
// one organisation, data environment and resource with the scopes the person granted;
// it lasts 30 days from approval and every code and token of it dies with it. Codes and
// tokens are stored only as SHA-256 hashes, each pointing at its connection; an index
// from connection to hashes lets ending a connection delete them all in the same
// transaction.
//
// Replay of a spent authorization code or a rotated refresh token ends the whole
// connection (RFC 9700 §4.14, §2.1.1): one of the two parties holding it is not the
// client.

// Lifetimes.
const (
	CodeTTL           = 5 * time.Minute
	AccessTokenTTL    = 10 * time.Minute
	ConnectionTTL     = 30 * 24 * time.Hour
	ConnectionTouchAt = 5 * time.Minute // LastUsedAt is written at most this often

	codePrefix    = "svco_"
	accessPrefix  = "svca_"
	refreshPrefix = "svcr_"
)

// Token kinds as stored.
const (
	tokenCode    = "code"
	tokenAccess  = "access"
	tokenRefresh = "refresh"
)

// Connection is a person's approval of a client.
type Connection struct {
	ID          ID          `json:"id"`
	OrgID       ID          `json:"org_id"`
	Environment Environment `json:"environment"`
	UserID      ID          `json:"user_id"` // the approver
	ClientID    string      `json:"client_id"`
	ClientName  string      `json:"client_name"`
	Scopes      []string    `json:"scopes"` // sorted
	// Resource is the protected resource's path ("/v1/mcp" or "/v1/api"): tokens work
	// there only.
	Resource   string     `json:"resource"`
	ApprovedAt time.Time  `json:"approved_at"`
	EndsAt     time.Time  `json:"ends_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// Active is set once the code was exchanged: an approval whose client never came
	// back is not a connection anyone lists.
	Active    bool       `json:"active"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// RevokedWhy: "approver", "client", "code_reuse", "refresh_reuse", "member_left".
	RevokedWhy string `json:"revoked_why,omitempty"`
}

// Live reports whether the connection still works at now.
func (c Connection) Live(now time.Time) bool { return c.RevokedAt == nil && now.Before(c.EndsAt) }

// tokenRecord is what a code's or token's hash leads to.
type tokenRecord struct {
	Kind      string    `json:"kind"`
	OrgID     ID        `json:"org_id"`
	ConnID    ID        `json:"conn_id"`
	ClientID  string    `json:"client_id"`
	ExpiresAt time.Time `json:"expires_at"`
	// Spent: a code exchanged or a refresh token rotated; presenting it again ends the
	// connection.
	Spent bool `json:"spent,omitempty"`
	// Codes only: the redirect URI the code was issued for and the PKCE challenge.
	RedirectURI string `json:"redirect_uri,omitempty"`
	Challenge   string `json:"challenge,omitempty"`
}

// ApproveInput is a person's approval on the consent page.
type ApproveInput struct {
	UserID        ID
	TwoStepPassed bool // the approver's session passed a two-step check
	// TwoStepByEmail: it passed with a code by email, which counts only where the
	// organisation accepts them (Session.PassedTwoStepFor).
	TwoStepByEmail bool
	OrgID          ID
	Environment    Environment
	Client         OAuthClient
	Scopes         []string
	Resource       string
	RedirectURI    string
	Challenge      string // the S256 code challenge
}

// Approve creates a connection and its authorization code, returned in the clear only
// here. ENOTFOUND when the user is not a member of the organisation; EFORBIDDEN
// role_forbids_scope when the role rules out a scope; EFORBIDDEN two_step_required
// when the organisation requires two-step and the session has not passed it; EINVALID
// for an empty or ungrantable scope list or a bad environment.
func (db *DB) Approve(ctx context.Context, in ApproveInput) (Connection, string, error) {
	scopes := GrantableScopes(joinFields(in.Scopes))
	if len(scopes) == 0 || len(scopes) != len(dedupe(in.Scopes)) {
		return Connection{}, "", Invalid(FieldError{Loc: []any{"scopes"}, Msg: "Grant at least one of the offered permissions.", Type: "enum"})
	}
	if !in.Environment.Valid() {
		return Connection{}, "", Invalid(FieldError{Loc: []any{"environment"}, Msg: "Environment must be 'test' or 'live'.", Type: "enum"})
	}
	code, hash := newCheckedToken(codePrefix)
	var conn Connection
	err := db.update(ctx, func(tx Tx) error {
		org, err := orgByID(tx, in.OrgID)
		if err != nil {
			return err
		}
		m, err := memberFor(tx, in.OrgID, in.UserID)
		if err != nil || in.UserID.IsZero() {
			return notFound("Organisation")
		}
		for _, s := range scopes {
			if !m.Role.MayHoldScope(s) {
				return Errorf(EFORBIDDEN, "role_forbids_scope", "A member cannot grant "+s+".")
			}
		}
		passed := Session{TwoStepPassed: in.TwoStepPassed, TwoStepByEmail: in.TwoStepByEmail}
		if org.RequireMFA && !passed.PassedTwoStepFor(org) {
			return errTwoStepRequired
		}
		now := db.Now()
		conn = Connection{ID: db.ids.newV7(now), OrgID: in.OrgID, Environment: in.Environment, UserID: in.UserID,
			ClientID: in.Client.ID, ClientName: in.Client.Name, Scopes: scopes, Resource: in.Resource,
			ApprovedAt: now, EndsAt: now.Add(ConnectionTTL)}
		if err := putConnection(tx, conn); err != nil {
			return err
		}
		return putToken(tx, hash[:], tokenRecord{Kind: tokenCode, OrgID: conn.OrgID, ConnID: conn.ID, ClientID: conn.ClientID,
			ExpiresAt: now.Add(CodeTTL), RedirectURI: in.RedirectURI, Challenge: in.Challenge})
	})
	if err != nil {
		return Connection{}, "", err
	}
	return conn, code, nil
}

// TokenPair is what the token endpoint hands out.
type TokenPair struct {
	Access, Refresh string
	ExpiresIn       int // seconds the access token lives
	Connection      Connection
}

// ExchangeInput redeems an authorization code.
type ExchangeInput struct {
	Code        string
	Client      OAuthClient
	RedirectURI string
	Verifier    string
	// Resource, when not "", must be the connection's resource (RFC 8707).
	Resource string
}

var errTarget = Errorf(EINVALID, "invalid_target", "The resource is not the one this grant was issued for.")

// errGrant is RFC 6749's invalid_grant: one answer for an unknown, expired, spent or
// mismatched code or refresh token, so a caller learns nothing about which.
var errGrant = Errorf(EUNAUTHORIZED, "invalid_grant", "The authorization code or refresh token is invalid, expired, revoked, or was issued to another client.")

// ExchangeCode redeems a code for a token pair. EUNAUTHORIZED invalid_grant for a code
// that is unknown, expired, for another client or redirect URI, fails PKCE, or whose
// connection has ended; a code presented again after it was redeemed ends its
// connection (and is invalid_grant too).
func (db *DB) ExchangeCode(ctx context.Context, in ExchangeInput) (TokenPair, error) {
	if !parseCheckedToken(in.Code, codePrefix) {
		return TokenPair{}, errGrant
	}
	hash := sha256.Sum256([]byte(in.Code))
	access, accessHash := newCheckedToken(accessPrefix)
	refresh, refreshHash := newCheckedToken(refreshPrefix)
	var pair TokenPair
	var reused bool
	err := db.update(ctx, func(tx Tx) error {
		pair, reused = TokenPair{}, false
		now := db.Now()
		rec, ok, err := tokenByHash(tx, hash[:])
		if err != nil || !ok || rec.Kind != tokenCode || rec.ClientID != in.Client.ID {
			return err
		}
		if rec.Spent {
			reused = true
			return db.endConnection(tx, rec.OrgID, rec.ConnID, "code_reuse")
		}
		if !now.Before(rec.ExpiresAt) || rec.RedirectURI != in.RedirectURI || !verifyPKCE(rec.Challenge, in.Verifier) {
			return nil
		}
		conn, ok, err := connectionByID(tx, rec.OrgID, rec.ConnID)
		if err != nil || !ok || !conn.Live(now) {
			return err
		}
		if in.Resource != "" && in.Resource != conn.Resource {
			return errTarget
		}
		rec.Spent = true
		if err := putToken(tx, hash[:], rec); err != nil {
			return err
		}
		conn.Active = true
		conn.LastUsedAt = &now
		pair, err = issuePair(tx, conn, now, access, accessHash, refresh, refreshHash)
		return err
	})
	if err != nil {
		return TokenPair{}, err
	}
	if pair.Access == "" || reused {
		return TokenPair{}, errGrant
	}
	return pair, nil
}

// RefreshInput rotates a refresh token.
type RefreshInput struct {
	Token  string
	Client OAuthClient
	// Resource, when not "", must be the connection's resource (RFC 8707).
	Resource string
	// Scopes, when not empty, are the grantable scopes the client asked for: each must
	// have been granted (RFC 6749 §6). The new tokens carry the connection's scopes.
	Scopes []string
}

var errScopeNotGranted = Errorf(EINVALID, "invalid_scope", "The refresh asks for a scope this connection was not granted.")

// Refresh spends a refresh token for a new pair. EUNAUTHORIZED invalid_grant as
// ExchangeCode; a refresh token presented again after it was rotated ends its
// connection.
func (db *DB) Refresh(ctx context.Context, in RefreshInput) (TokenPair, error) {
	if !parseCheckedToken(in.Token, refreshPrefix) {
		return TokenPair{}, errGrant
	}
	hash := sha256.Sum256([]byte(in.Token))
	access, accessHash := newCheckedToken(accessPrefix)
	refresh, refreshHash := newCheckedToken(refreshPrefix)
	var pair TokenPair
	var reused bool
	err := db.update(ctx, func(tx Tx) error {
		pair, reused = TokenPair{}, false
		now := db.Now()
		rec, ok, err := tokenByHash(tx, hash[:])
		if err != nil || !ok || rec.Kind != tokenRefresh || rec.ClientID != in.Client.ID {
			return err
		}
		if rec.Spent {
			reused = true
			return db.endConnection(tx, rec.OrgID, rec.ConnID, "refresh_reuse")
		}
		conn, ok, err := connectionByID(tx, rec.OrgID, rec.ConnID)
		if err != nil || !ok || !conn.Live(now) || !now.Before(rec.ExpiresAt) {
			return err
		}
		if in.Resource != "" && in.Resource != conn.Resource {
			return errTarget
		}
		for _, sc := range in.Scopes {
			if !slices.Contains(conn.Scopes, sc) {
				return errScopeNotGranted // before anything is spent: the token still works
			}
		}
		if _, err := memberFor(tx, conn.OrgID, conn.UserID); err != nil {
			return db.endConnection(tx, conn.OrgID, conn.ID, "member_left")
		}
		rec.Spent = true
		if err := putToken(tx, hash[:], rec); err != nil {
			return err
		}
		conn.LastUsedAt = &now
		pair, err = issuePair(tx, conn, now, access, accessHash, refresh, refreshHash)
		return err
	})
	if err != nil {
		return TokenPair{}, err
	}
	if pair.Access == "" || reused {
		return TokenPair{}, errGrant
	}
	return pair, nil
}

// issuePair stores conn and a new access and refresh token for it; neither outlives
// the connection.
func issuePair(tx Tx, conn Connection, now time.Time, access string, accessHash [32]byte, refresh string, refreshHash [32]byte) (TokenPair, error) {
	if err := putConnection(tx, conn); err != nil {
		return TokenPair{}, err
	}
	accessEnd := now.Add(AccessTokenTTL)
	if conn.EndsAt.Before(accessEnd) {
		accessEnd = conn.EndsAt
	}
	base := tokenRecord{OrgID: conn.OrgID, ConnID: conn.ID, ClientID: conn.ClientID}
	a, r := base, base
	a.Kind, a.ExpiresAt = tokenAccess, accessEnd
	r.Kind, r.ExpiresAt = tokenRefresh, conn.EndsAt
	if err := putToken(tx, accessHash[:], a); err != nil {
		return TokenPair{}, err
	}
	if err := putToken(tx, refreshHash[:], r); err != nil {
		return TokenPair{}, err
	}
	return TokenPair{Access: access, Refresh: refresh, ExpiresIn: max(1, int(accessEnd.Sub(now)/time.Second)), Connection: conn}, nil
}

// verifyPKCE checks an S256 verifier (RFC 7636: 43 to 128 unreserved characters)
// against the challenge, in constant time.
func verifyPKCE(challenge, verifier string) bool {
	if len(verifier) < 43 || len(verifier) > 128 || challenge == "" {
		return false
	}
	for i := 0; i < len(verifier); i++ {
		c := verifier[i]
		if !(isBase62(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge))
}

func joinFields(s []string) string {
	out := ""
	for i, f := range s {
		if i > 0 {
			out += " "
		}
		out += f
	}
	return out
}
