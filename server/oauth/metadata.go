package oauth

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// authServerMetadata is the authorization server's discovery document (RFC 8414), which
// MCP clients read after the protected-resource document names this server.
type authServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	AuthorizationResponseIssParameter bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}

// routeAuthServerMetadata serves RFC 8414's document at its well-known address. The
// OpenID Connect address is left alone: this is no OpenID provider (no ID tokens), and
// MCP clients try RFC 8414's address first.
func (s *AuthServer) routeAuthServerMetadata(r *router.Router) {
	methods := []string{kv.AuthMethodNone, kv.AuthMethodBasic, kv.AuthMethodPost}
	doc := func(base string) any {
		return authServerMetadata{
			Issuer:                            base,
			AuthorizationEndpoint:             base + "/v1/oauth/authorize",
			TokenEndpoint:                     base + "/v1/oauth/token",
			RegistrationEndpoint:              base + "/v1/oauth/register",
			RevocationEndpoint:                base + "/v1/oauth/revoke",
			ResponseTypesSupported:            []string{"code"},
			ResponseModesSupported:            []string{"query"},
			GrantTypesSupported:               []string{kv.GrantAuthCode, kv.GrantRefresh},
			CodeChallengeMethodsSupported:     []string{"S256"},
			TokenEndpointAuthMethodsSupported: methods,
			RevocationEndpointAuthMethods:     methods,
			ScopesSupported:                   pipeline.OAuthScopes(),
			AuthorizationResponseIssParameter: true,
			ClientIDMetadataDocumentSupported: s.clients.FetchesMetadata(),
		}
	}
	// Encoded on the first request, not at start-up (the encoder is built on first use).
	raw := pipeline.LazyJSON(func() any { return doc(s.BaseURL) })
	// The issuer is the base URL discovery answers the request with (discovery.go), so
	// a client that found the server at a loopback origin finds its issuer there too.
	pipeline.HandlePlain(r, "GET", "/.well-known/oauth-authorization-server", func(c *fasthttp.RequestCtx) {
		pipeline.ServeDiscoveryDoc(c, s.BaseFor(c), s.BaseURL, raw, doc)
	})
}
