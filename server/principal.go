package server

import (
	"strings"
	"time"

	"interviewd/kv"
)

// Credential types as whoami reports them.
const (
	credentialAPIKey = "api_key"
	credentialOAuth  = "oauth"
)

// scopeSet is a bitmask of scopes, so a scope check on every request costs nothing.
type scopeSet uint16

var scopeBits = func() map[string]scopeSet {
	m := make(map[string]scopeSet, len(kv.AllScopes))
	for i, s := range kv.AllScopes {
		m[s] = 1 << i
	}
	return m
}()

func newScopeSet(scopes []string) scopeSet {
	var set scopeSet
	for _, s := range scopes {
		set |= scopeBits[s]
	}
	return set
}

func (s scopeSet) has(scope string) bool {
	if scope == "" {
		return true
	}
	bit, ok := scopeBits[scope]
	return ok && s&bit != 0
}

// Principal is who a request acts as: resolved once per request from its credential,
// and the only identity an operation sees.
type Principal struct {
	Partition      kv.Partition
	OrgName        string
	Scopes         []string // sorted
	scopes         scopeSet
	CredentialType string
	// Role is the signed-in person's role for an app session; "" for keys and OAuth,
	// which are held to their scopes (app_roles.go).
	Role      kv.Role
	KeyID     *kv.ID
	KeyName   string
	ExpiresAt *time.Time
	GrantID   *kv.ID
	ClientID  string
	// RateKey identifies the credential for rate limiting (a key id or grant id);
	// OrgKey the organisation.
	RateKey string
	OrgKey  string
}

func principalFromKey(c kv.Credential) *Principal {
	id := c.Key.ID
	return &Principal{
		Partition:      kv.Partition{Org: c.Org.ID, Env: c.Key.Environment},
		OrgName:        c.Org.Name,
		Scopes:         c.Key.Scopes,
		scopes:         newScopeSet(c.Key.Scopes),
		CredentialType: credentialAPIKey,
		KeyID:          &id,
		KeyName:        c.Key.Name,
		ExpiresAt:      c.Key.ExpiresAt,
		RateKey:        c.Key.ID.String(),
		OrgKey:         c.Org.ID.String(),
	}
}

// principalFromConnection is the principal of an OAuth access token: the connection's
// partition and granted scopes; rate limited per connection.
func principalFromConnection(c kv.OAuthCredential) *Principal {
	conn := c.Connection
	id, ends := conn.ID, conn.EndsAt
	return &Principal{
		Partition:      kv.Partition{Org: conn.OrgID, Env: conn.Environment},
		OrgName:        c.Org.Name,
		Scopes:         conn.Scopes,
		scopes:         newScopeSet(conn.Scopes),
		CredentialType: credentialOAuth,
		ExpiresAt:      &ends,
		GrantID:        &id,
		ClientID:       conn.ClientID,
		RateKey:        "oauth:" + conn.ID.String(),
		OrgKey:         conn.OrgID.String(),
	}
}

// Has reports whether the principal holds scope ("" always holds).
func (p *Principal) Has(scope string) bool { return p.scopes.has(scope) }

// require returns a 403 insufficient_scope error unless the principal holds scope.
func (p *Principal) require(scope string) error {
	if p.Has(scope) {
		return nil
	}
	return &apiError{Status: 403, Code: "insufficient_scope", Scope: scope,
		Detail: "This credential lacks the " + scope + " scope needed for this request."}
}

// bearerToken returns the token of an "Authorization: Bearer <token>" header value.
func bearerToken(h []byte) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(string(h[:len(prefix)]), prefix) {
		return "", false
	}
	tok := strings.TrimSpace(string(h[len(prefix):]))
	return tok, tok != ""
}

// roleAllows refuses what the session's role may not do whatever its scopes: any
// change for a viewer, exports for anyone but owners and admins. Keys and OAuth
// connections are held to their scopes alone.
func (p *Principal) roleAllows(o *Operation) error {
	if p.CredentialType != credentialSession {
		return nil
	}
	switch {
	case o.Write && !p.Role.Changes():
		return errViewerReadOnly
	case exportOps[o.Name] && !p.Role.Manages():
		return errExportRole
	}
	return nil
}

var (
	errViewerReadOnly = &apiError{Status: 403, Code: "role_forbidden",
		Detail: "Viewers read studies, transcripts and findings but change nothing. Ask an owner or admin for the researcher role."}
	errExportRole = &apiError{Status: 403, Code: "role_forbidden",
		Detail: "Only owners and admins can export interviews."}
)

// exportOps are the operations that take data out of the service: owners and admins
// only, in the app.
var exportOps = map[string]bool{"start_export": true, "get_export_status": true, "get_export_download": true}

// credentialSession marks a principal built from an app session.
const credentialSession = "session"
