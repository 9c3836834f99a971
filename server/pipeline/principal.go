package pipeline

import (
	"slices"
	"strings"
	"time"

	"interviewd/kv"
)

// Credential types as whoami reports them.
const (
	CredentialAPIKey = "api_key"
	CredentialOAuth  = "oauth"
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
	// which are held to their scopes (app/roles.go).
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

func PrincipalFromKey(c kv.Credential) *Principal {
	id := c.Key.ID
	return &Principal{
		Partition:      kv.Partition{Org: c.Org.ID, Env: c.Key.Environment},
		OrgName:        c.Org.Name,
		Scopes:         c.Key.Scopes,
		scopes:         newScopeSet(c.Key.Scopes),
		CredentialType: CredentialAPIKey,
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
		CredentialType: CredentialOAuth,
		ExpiresAt:      &ends,
		GrantID:        &id,
		ClientID:       conn.ClientID,
		RateKey:        "oauth:" + conn.ID.String(),
		OrgKey:         conn.OrgID.String(),
	}
}

// Has reports whether the principal holds scope ("" always holds).
func (p *Principal) Has(scope string) bool { return p.scopes.has(scope) }

// Require returns a 403 insufficient_scope error unless the principal holds scope.
func (p *Principal) Require(scope string) error {
	if p.Has(scope) {
		return nil
	}
	return &APIError{Status: 403, Code: "insufficient_scope", Scope: scope,
		Detail: "This credential lacks the " + scope + " scope needed for this request."}
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header value.
func BearerToken(h []byte) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(string(h[:len(prefix)]), prefix) {
		return "", false
	}
	tok := strings.TrimSpace(string(h[len(prefix):]))
	return tok, tok != ""
}

// RoleAllows refuses what the session's role may not do whatever its scopes: any
// change for a viewer, exports for anyone but owners and admins. Keys and OAuth
// connections are held to their scopes alone.
func (p *Principal) RoleAllows(o *Operation) error {
	if p.CredentialType != credentialSession {
		return nil
	}
	switch {
	case o.Write && !p.Role.Changes():
		return errViewerReadOnly
	case ExportOps[o.Name] && !p.Role.Manages():
		return errExportRole
	}
	return nil
}

var (
	errViewerReadOnly = &APIError{Status: 403, Code: "role_forbidden",
		Detail: "Viewers read studies, transcripts and findings but change nothing. Ask an owner or admin for the researcher role."}
	errExportRole = &APIError{Status: 403, Code: "role_forbidden",
		Detail: "Only owners and admins can export interviews."}
)

// ExportOps are the operations that take data out of the service: owners and admins
// only, in the app.
var ExportOps = map[string]bool{"start_export": true, "get_export_status": true, "get_export_download": true}

// credentialSession marks a principal built from an app session.
const credentialSession = "session"

// MayChangeMode reports whether the principal may pause, close or return a study to
// test: studies:write, and in the app an owner's or admin's session (what becomes of
// collection is theirs, as going live is).
func (p *Principal) MayChangeMode() bool {
	return p.Has(kv.ScopeStudiesWrite) && (p.CredentialType != credentialSession || p.Role.Manages())
}

// MayExport reports whether the principal may export: export:read, and in the app an
// owner's or admin's session.
func (p *Principal) MayExport() bool {
	return p.Has(kv.ScopeExportRead) && (p.CredentialType != credentialSession || p.Role.Manages())
}

// MayChangeResearch reports whether the principal may change research at all: a key or
// grant by its scopes, a session unless it is a viewer's.
func (p *Principal) MayChangeResearch() bool {
	return p.CredentialType != credentialSession || p.Role.Changes()
}

// appSessionScopes returns the research scopes a role works with in the app, sorted.
// A researcher and a viewer read transcripts and findings here (export:read), which a
// member's key or grant can never carry; what export:read also allows, exports, the
// routes and roleAllows keep to owners and admins.
func appSessionScopes(role kv.Role) []string {
	var out []string
	for _, sc := range kv.AllScopes {
		switch {
		case sc == kv.ScopeAgentRun:
		case role.MayHoldScope(sc), sc == kv.ScopeExportRead && role.Valid():
			out = append(out, sc)
		}
	}
	slices.Sort(out)
	return out
}

// AppPrincipal is the research principal of a session with a chosen workspace: the
// scopes its role works with in the app (appSessionScopes) and the role itself, in the
// chosen organisation and data environment.
func AppPrincipal(a kv.SessionAuth) *Principal {
	scopes := appSessionScopes(a.Role)
	return &Principal{
		Partition:      kv.Partition{Org: a.Org.ID, Env: a.Session.Environment},
		OrgName:        a.Org.Name,
		Scopes:         scopes,
		scopes:         newScopeSet(scopes),
		CredentialType: credentialSession,
		Role:           a.Role,
		RateKey:        "session:" + a.Session.ID.String(),
		OrgKey:         a.Org.ID.String(),
	}
}

// SetScopes replaces the scopes the principal holds.
func (p *Principal) SetScopes(scopes []string) {
	p.Scopes, p.scopes = scopes, newScopeSet(scopes)
}
