package oauth

import (
	"bytes"
	"strings"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
)

// MaxRegistrationBody bounds a registration request: ten redirect URIs of 2000
// characters and the rest fit well inside.
const MaxRegistrationBody = 32 << 10

// registrationIn is the part of RFC 7591 client metadata interviewd uses. Every other
// member (logo_uri, application_type, contacts, software_id, ...) is ignored, as the
// RFC requires of metadata a server does not understand, once the body has passed the
// text rule (checkClientText).
type registrationIn struct {
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// registrationOut is RFC 7591's client information response.
type registrationOut struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// decodeRegistration reads a registration body: a JSON object whose known members have
// the RFC's types. Anything else is invalid_client_metadata.
func decodeRegistration(body []byte) (kv.ClientInput, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return kv.ClientInput{}, authz.OAuthRefusal(400, "invalid_client_metadata", "The body must be a JSON object of client metadata.")
	}
	var in registrationIn
	if err := json.Unmarshal(body, &in); err != nil {
		return kv.ClientInput{}, authz.OAuthRefusal(400, "invalid_client_metadata",
			"The client metadata is not valid JSON, or a member has the wrong type (redirect_uris, grant_types and response_types are arrays of strings; the others are strings).")
	}
	if code, desc := authz.CheckClientText(body); code != "" {
		return kv.ClientInput{}, authz.OAuthRefusal(400, code, desc)
	}
	return kv.ClientInput{Name: in.ClientName, URI: in.ClientURI, RedirectURIs: in.RedirectURIs, GrantTypes: in.GrantTypes,
		ResponseTypes: in.ResponseTypes, AuthMethod: in.TokenEndpointAuthMethod, Scope: in.Scope}, nil
}

// handleOAuthRegister is POST /v1/oauth/register (RFC 7591): no credential, limited
// per client address (registerAdmit, spendRegistration).
func (s *AuthServer) handleOAuthRegister(r *pipeline.Request) error {
	body, err := pipeline.ReadBody(r.C, MaxRegistrationBody)
	if err != nil {
		return err
	}
	in, err := decodeRegistration(body)
	if err != nil {
		return err
	}
	// Checked before it is counted: a refused registration spends no registration.
	if _, err := kv.NewClient("", in, s.Now()); err != nil {
		return err
	}
	if err := s.spendRegistration(r); err != nil {
		return err
	}
	c, secret, err := s.DB.RegisterClient(r.Ctx, in)
	if err != nil {
		return err
	}
	out := registrationOut{ClientID: c.ID, ClientSecret: secret, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name,
		ClientURI: c.URI, RedirectURIs: c.RedirectURIs, GrantTypes: c.GrantTypes, ResponseTypes: c.ResponseTypes,
		TokenEndpointAuthMethod: c.AuthMethod, Scope: strings.Join(c.Scopes, " ")}
	if secret != "" {
		never := int64(0)
		out.ClientSecretExpiresAt = &never
	}
	r.Out, r.Status = out, 201
	return nil
}
