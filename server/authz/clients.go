// Package authz is what the OAuth authorization server and the web app's consent
// page share: finding a client (a registered one, or one a client ID metadata document
// describes, fetched and cached under SSRF rules) and checking an authorization
// request by DECISIONS §15. It is not a surface; it depends on the shared pipeline.
package authz

import (
	"context"
	"interviewd/kv"
	"interviewd/server/pipeline"
	"strings"
)

// Clients finds OAuth clients (registered ones, and those a client ID metadata
// document describes) and checks authorization requests: what the authorization
// server's endpoints and the app's consent page share.
type Clients struct {
	*pipeline.Core
	// Metadata fetches client ID metadata documents; nil when they are turned off.
	Metadata *ClientMetadata
}

// FetchesMetadata says client ID metadata documents are on.
func (s *Clients) FetchesMetadata() bool { return s.Metadata != nil }

// ResourcePath returns the protected resource a resource parameter names ("/v1/mcp"
// or "/v1/api" at an origin discovery names; a trailing slash is dropped), or "" when
// it names neither.
func (s *Clients) ResourcePath(resource string) string {
	resource = strings.TrimSuffix(resource, "/")
	for _, path := range []string{pipeline.ResourceMCP, pipeline.ResourceAPI} {
		if origin, ok := strings.CutSuffix(resource, path); ok && s.OwnsOrigin(origin) {
			return path
		}
	}
	return ""
}

// FindOAuthClient returns the client id names: a registered svcc_ client, or when
// client ID metadata documents are on, the client an https URL's document describes.
// ENOTFOUND invalid_client otherwise; a document that cannot be used is an
// oauthError naming why.
func (s *Clients) FindOAuthClient(ctx context.Context, id string) (kv.OAuthClient, error) {
	if strings.HasPrefix(id, "https://") && s.Metadata != nil {
		return s.Metadata.Client(ctx, id, s.Now())
	}
	return s.DB.FindClient(ctx, id)
}

var ErrOAuthClient = &OAuthError{Status: 401, Code: "invalid_client",
	Description: "Client authentication failed: unknown client_id, or a confidential client without its secret."}

func OAuthRefusal(status int, code, desc string) *OAuthError {
	return &OAuthError{Status: status, Code: code, Description: desc}
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// oauthError is a refusal in RFC 6749 §5.2's shape: {"error", "error_description"}.
type OAuthError struct {
	Status      int
	Code        string
	Description string
	RetryAfter  int
	// Basic says the client tried HTTP Basic authentication: a 401 then names it in
	// WWW-Authenticate (RFC 6749 §5.2).
	Basic bool
}
