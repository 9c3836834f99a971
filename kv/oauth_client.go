package kv

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth clients (RFC 7591 registration). A client is registered once with its redirect
// URIs; a confidential one also gets a secret, of which only the SHA-256 is kept.
// Clients named by a metadata document URL (the MCP client ID metadata flow) are never
// stored: the server fetches and caches their documents and hands kv the client as a
// value.

// Token endpoint authentication methods.
const (
	AuthMethodNone   = "none"
	AuthMethodBasic  = "client_secret_basic"
	AuthMethodPost   = "client_secret_post"
	GrantAuthCode    = "authorization_code"
	GrantRefresh     = "refresh_token"
	clientIDPrefix   = "svcc_"
	clientSecretPref = "svcs_"
	maxRedirectURIs  = 10
	maxURILen        = 2000
	maxClientNameLen = 200
)

// OAuthScopes are the scopes an OAuth client may be granted: every scope but agent:run.
var OAuthScopes = []string{ScopeStudiesRead, ScopeStudiesWrite, ScopeStudiesGoLive, ScopeLinksRead, ScopeLinksWrite, ScopeExportRead}

// OAuthClient is a registered (or metadata-document) client.
type OAuthClient struct {
	ID            string   `json:"client_id"`
	Name          string   `json:"client_name"`
	URI           string   `json:"client_uri,omitempty"`
	RedirectURIs  []string `json:"redirect_uris"`
	GrantTypes    []string `json:"grant_types"`
	ResponseTypes []string `json:"response_types"`
	AuthMethod    string   `json:"token_endpoint_auth_method"`
	// Scopes are the registered scopes (grantable ones only), sorted: what an
	// authorization request without a scope asks for.
	Scopes     []string  `json:"scopes"`
	SecretHash []byte    `json:"secret_hash,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// Document says the client is a metadata document (its ID is the document's URL).
	Document bool `json:"-"`
}

// Public reports whether the client authenticates with no secret.
func (c OAuthClient) Public() bool { return c.AuthMethod == AuthMethodNone }

// AllowsGrant reports whether the client registered grant type g.
func (c OAuthClient) AllowsGrant(g string) bool { return slices.Contains(c.GrantTypes, g) }

// ClientInput is a registration request (or a metadata document), already decoded.
type ClientInput struct {
	Name          string
	URI           string
	RedirectURIs  []string
	GrantTypes    []string
	ResponseTypes []string
	AuthMethod    string
	Scope         string // space-separated
}

// clientMetadataError is the RFC 7591 refusal of a registration.
func clientMetadataError(reason, msg string) *Error {
	return Errorf(EINVALID, reason, msg)
}

// NewClient validates in and returns the client it describes, with id (and no
// secret). EINVALID with reason invalid_redirect_uri or invalid_client_metadata.
func NewClient(id string, in ClientInput, now time.Time) (OAuthClient, error) {
	c := OAuthClient{ID: id, Name: strings.TrimSpace(in.Name), URI: strings.TrimSpace(in.URI), CreatedAt: now}
	if len(in.RedirectURIs) == 0 {
		return c, clientMetadataError("invalid_redirect_uri", "redirect_uris must list at least one redirect URI.")
	}
	if len(in.RedirectURIs) > maxRedirectURIs {
		return c, clientMetadataError("invalid_redirect_uri", "At most 10 redirect URIs may be registered.")
	}
	for _, u := range in.RedirectURIs {
		if msg := CheckRedirectURI(u); msg != "" {
			return c, clientMetadataError("invalid_redirect_uri", msg)
		}
	}
	c.RedirectURIs = slices.Clone(in.RedirectURIs)
	if len([]rune(c.Name)) > maxClientNameLen {
		return c, clientMetadataError("invalid_client_metadata", "client_name must be at most 200 characters.")
	}
	if c.Name == "" {
		c.Name = defaultClientName(c.RedirectURIs[0])
	}
	if c.URI != "" {
		if u, err := url.Parse(c.URI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(c.URI) > maxURILen {
			return c, clientMetadataError("invalid_client_metadata", "client_uri must be an http or https URL.")
		}
	}
	c.GrantTypes = in.GrantTypes
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{GrantAuthCode, GrantRefresh}
	}
	for _, g := range c.GrantTypes {
		if g != GrantAuthCode && g != GrantRefresh {
			return c, clientMetadataError("invalid_client_metadata", "grant_types may hold only authorization_code and refresh_token.")
		}
	}
	if !slices.Contains(c.GrantTypes, GrantAuthCode) {
		return c, clientMetadataError("invalid_client_metadata", "grant_types must include authorization_code.")
	}
	c.GrantTypes = dedupe(c.GrantTypes)
	c.ResponseTypes = in.ResponseTypes
	if len(c.ResponseTypes) == 0 {
		c.ResponseTypes = []string{"code"}
	}
	for _, t := range c.ResponseTypes {
		if t != "code" {
			return c, clientMetadataError("invalid_client_metadata", "response_types may hold only code.")
		}
	}
	c.ResponseTypes = dedupe(c.ResponseTypes)
	c.AuthMethod = in.AuthMethod
	if c.AuthMethod == "" {
		c.AuthMethod = AuthMethodBasic // RFC 7591's default
	}
	if c.AuthMethod != AuthMethodNone && c.AuthMethod != AuthMethodBasic && c.AuthMethod != AuthMethodPost {
		return c, clientMetadataError("invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.")
	}
	for _, s := range strings.Fields(in.Scope) {
		if s == ScopeAgentRun {
			return c, clientMetadataError("invalid_client_metadata", "agent:run cannot be granted to an OAuth client.")
		}
	}
	c.Scopes = GrantableScopes(in.Scope)
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(OAuthScopes)
		slices.Sort(c.Scopes)
	}
	return c, nil
}

// GrantableScopes returns the grantable scopes among the space-separated list s,
// sorted and without repeats; anything else (offline_access, openid, agent:run) is
// left out.
func GrantableScopes(s string) []string {
	var out []string
	for _, sc := range strings.Fields(s) {
		if slices.Contains(OAuthScopes, sc) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	slices.Sort(out)
	return out
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func defaultClientName(redirect string) string {
	if u, err := url.Parse(redirect); err == nil && u.Host != "" {
		return u.Hostname()
	}
	return "Unnamed app"
}

// schemes a redirect URI may never use: they run code or read files in the browser,
// or are the web's own schemes (http and https follow their own rules).
var forbiddenSchemes = []string{"javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss", "mailto", "tel"}

// CheckRedirectURI returns why u cannot be a redirect URI, or "" when it can: https,
// http on a loopback host (RFC 8252), or a private-use scheme (com.example.app:/cb).
// No fragment, no user info, at most 2000 characters.
func CheckRedirectURI(u string) string {
	if len(u) > maxURILen {
		return "A redirect URI must be at most 2000 characters."
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" {
		return "A redirect URI must be an absolute URI."
	}
	if p.Fragment != "" || strings.Contains(u, "#") {
		return "A redirect URI must not contain a fragment."
	}
	if p.User != nil {
		return "A redirect URI must not contain user information."
	}
	if strings.Contains(rawAuthority(u, p.Scheme), "%") {
		// The host names the app on the consent page and becomes its default name, and
		// parsing decodes escapes in it: one could put any byte there.
		return "A redirect URI's host must not be percent-encoded."
	}
	scheme := strings.ToLower(p.Scheme)
	switch {
	case scheme == "https":
		if p.Host == "" {
			return "An https redirect URI needs a host."
		}
	case scheme == "http":
		if !IsLoopbackHost(p.Hostname()) {
			return "An http redirect URI is only allowed on a loopback host (127.0.0.1, [::1] or localhost); use https."
		}
	case slices.Contains(forbiddenSchemes, scheme):
		return "The " + scheme + " scheme cannot be a redirect URI."
	}
	return ""
}

// rawAuthority returns the authority of URI u with the given scheme as written,
// escapes undecoded, or "" when it has none.
func rawAuthority(u, scheme string) string {
	rest, ok := strings.CutPrefix(u[len(scheme)+1:], "//")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// IsLoopbackHost reports whether host names the local machine as RFC 8252 allows.
func IsLoopbackHost(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// MatchRedirectURI reports whether presented is one of the registered URIs: an exact
// match, or for a loopback http URI the same URI on any port (RFC 8252 §7.3).
func MatchRedirectURI(registered []string, presented string) bool {
	if slices.Contains(registered, presented) {
		return true
	}
	p, err := url.Parse(presented)
	if err != nil || p.Scheme != "http" || !IsLoopbackHost(p.Hostname()) {
		return false
	}
	for _, r := range registered {
		q, err := url.Parse(r)
		if err != nil || q.Scheme != "http" || !IsLoopbackHost(q.Hostname()) {
			continue
		}
		if q.Hostname() == p.Hostname() && q.EscapedPath() == p.EscapedPath() && q.RawQuery == p.RawQuery && p.Fragment == "" {
			return true
		}
	}
	return false
}

// RegisterClient stores a new client and returns it with its secret ("" for a public
// client): the only time the secret exists outside the caller. EINVALID as NewClient.
func (db *DB) RegisterClient(ctx context.Context, in ClientInput) (OAuthClient, string, error) {
	id := clientIDPrefix + randomBase62(24)
	c, err := NewClient(id, in, db.Now())
	if err != nil {
		return OAuthClient{}, "", err
	}
	secret := ""
	if !c.Public() {
		var hash [32]byte
		secret, hash = newCheckedToken(clientSecretPref)
		c.SecretHash = hash[:]
	}
	err = db.update(ctx, func(tx Tx) error {
		return putJSON(tx.Bucket(bucketOAuthClients), []byte(c.ID), c)
	})
	if err != nil {
		return OAuthClient{}, "", err
	}
	return c, secret, nil
}

var errNoClient = Errorf(ENOTFOUND, "invalid_client", "No such client.")

// FindClient returns a registered client, or ENOTFOUND invalid_client.
func (db *DB) FindClient(ctx context.Context, id string) (OAuthClient, error) {
	var c OAuthClient
	if !strings.HasPrefix(id, clientIDPrefix) || len(id) > 64 {
		return c, errNoClient
	}
	err := db.view(ctx, func(tx Tx) error {
		ok, err := getJSON(tx.Bucket(bucketOAuthClients), []byte(id), &c)
		if err == nil && !ok {
			err = errNoClient
		}
		return err
	})
	return c, err
}

// CheckClientSecret reports, in constant time, whether secret is c's secret. A public
// client has none, so nothing matches.
func CheckClientSecret(c OAuthClient, secret string) bool {
	if c.Public() || len(c.SecretHash) == 0 || !parseCheckedToken(secret, clientSecretPref) {
		return false
	}
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], c.SecretHash) == 1
}

// randomBase62 returns n random base62 characters.
func randomBase62(n int) string {
	tok, _ := newCheckedToken("")
	return tok[:n]
}
