package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/url"
	"strings"

	"interviewd/kv"
	"interviewd/server/authz"
	"interviewd/server/pipeline"
)

// MaxTokenForm bounds a token or revocation request body.
const MaxTokenForm = 16 << 10

// tokenForm is a decoded token or revocation request: its form fields and the client
// credentials of an Authorization: Basic header.
type tokenForm struct {
	GrantType, Code, RedirectURI, Verifier, RefreshToken string
	Resource, Scope                                      string
	Token                                                string // revocation
	ClientID, ClientSecret                               string
	// basic says the credentials came in an Authorization: Basic header.
	basic bool
}

// decodeTokenForm reads an urlencoded token or revocation request (RFC 6749 §3.2: no
// parameter may be sent twice) and its Basic credentials, if any.
func decodeTokenForm(contentType, body, authorization []byte) (tokenForm, error) {
	var f tokenForm
	if !bytes.HasPrefix(bytes.ToLower(bytes.TrimSpace(contentType)), []byte("application/x-www-form-urlencoded")) {
		return f, authz.OAuthRefusal(400, "invalid_request", "Send the request as application/x-www-form-urlencoded.")
	}
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return f, authz.OAuthRefusal(400, "invalid_request", "The form is not valid application/x-www-form-urlencoded.")
	}
	for name, v := range vals {
		if len(v) > 1 {
			return f, authz.OAuthRefusal(400, "invalid_request", "The parameter "+clipName(name)+" is sent more than once.")
		}
	}
	get := vals.Get
	f = tokenForm{GrantType: get("grant_type"), Code: get("code"), RedirectURI: get("redirect_uri"), Verifier: get("code_verifier"),
		RefreshToken: get("refresh_token"), Resource: get("resource"), Scope: get("scope"), Token: get("token"),
		ClientID: get("client_id"), ClientSecret: get("client_secret")}
	if len(authorization) == 0 {
		return f, nil
	}
	const prefix = "basic "
	if len(authorization) <= len(prefix) || !strings.EqualFold(string(authorization[:len(prefix)]), prefix) {
		return f, &authz.OAuthError{Status: 401, Code: "invalid_client", Description: "The Authorization header must be Basic client credentials."}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(authorization[len(prefix):])))
	id, secret, ok := strings.Cut(string(raw), ":")
	if err != nil || !ok {
		return f, &authz.OAuthError{Status: 401, Code: "invalid_client", Basic: true, Description: "The Basic credentials are not base64 of client_id:client_secret."}
	}
	// RFC 6749 §2.3.1: both halves are form-urlencoded before they are joined.
	if id, err = url.QueryUnescape(id); err == nil {
		secret, err = url.QueryUnescape(secret)
	}
	if err != nil {
		return f, &authz.OAuthError{Status: 401, Code: "invalid_client", Basic: true, Description: "The Basic credentials are not validly encoded."}
	}
	if f.ClientID != "" && f.ClientID != id {
		return f, authz.OAuthRefusal(400, "invalid_request", "client_id in the form differs from the Basic credentials.")
	}
	if f.ClientSecret != "" {
		return f, authz.OAuthRefusal(400, "invalid_request", "Send the client secret once: in the Basic header or the form, not both.")
	}
	f.ClientID, f.ClientSecret, f.basic = id, secret, true
	return f, nil
}

func clipName(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.ToValidUTF8(s, "")
}

// authenticateClient resolves the request's client: a public client by its client_id,
// a confidential one only with its secret (Basic or form). invalid_client otherwise.
func (s *AuthServer) authenticateClient(ctx context.Context, f tokenForm) (kv.OAuthClient, error) {
	refuse := *authz.ErrOAuthClient
	refuse.Basic = f.basic
	if f.ClientID == "" {
		return kv.OAuthClient{}, &refuse
	}
	c, err := s.clients.FindOAuthClient(ctx, f.ClientID)
	if kv.ErrorCode(err) == kv.ENOTFOUND {
		return kv.OAuthClient{}, &refuse
	}
	if err != nil {
		return kv.OAuthClient{}, err
	}
	if !c.Public() && !kv.CheckClientSecret(c, f.ClientSecret) {
		return kv.OAuthClient{}, &refuse
	}
	return c, nil
}

// tokenOut is RFC 6749 §5.1's answer.
type tokenOut struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

func (s *AuthServer) readTokenForm(r *pipeline.Request) (tokenForm, error) {
	body, err := pipeline.ReadBody(r.C, MaxTokenForm)
	if err != nil {
		return tokenForm{}, err
	}
	return decodeTokenForm(r.C.Request.Header.ContentType(), body, r.C.Request.Header.Peek("Authorization"))
}

// handleOAuthToken is POST /v1/oauth/token: the authorization_code and refresh_token
// grants.
func (s *AuthServer) handleOAuthToken(r *pipeline.Request) error {
	f, err := s.readTokenForm(r)
	if err != nil {
		return err
	}
	if f.GrantType == "" {
		return authz.OAuthRefusal(400, "invalid_request", "grant_type is required.")
	}
	if f.GrantType != kv.GrantAuthCode && f.GrantType != kv.GrantRefresh {
		return authz.OAuthRefusal(400, "unsupported_grant_type", "Only the authorization_code and refresh_token grants are supported.")
	}
	client, err := s.authenticateClient(r.Ctx, f)
	if err != nil {
		return err
	}
	if !client.AllowsGrant(f.GrantType) {
		return authz.OAuthRefusal(400, "unauthorized_client", "This client did not register the "+f.GrantType+" grant.")
	}
	resource := ""
	if f.Resource != "" {
		if resource = s.clients.ResourcePath(f.Resource); resource == "" {
			return errInvalidTarget(s.BaseFor(r.C))
		}
	}
	var pair kv.TokenPair
	switch f.GrantType {
	case kv.GrantAuthCode:
		for _, p := range [][2]string{{"code", f.Code}, {"redirect_uri", f.RedirectURI}, {"code_verifier", f.Verifier}} {
			if p[1] == "" {
				return authz.OAuthRefusal(400, "invalid_request", p[0]+" is required for the authorization_code grant.")
			}
		}
		pair, err = s.DB.ExchangeCode(r.Ctx, kv.ExchangeInput{Code: f.Code, Client: client, RedirectURI: f.RedirectURI,
			Verifier: f.Verifier, Resource: resource})
	case kv.GrantRefresh:
		if f.RefreshToken == "" {
			return authz.OAuthRefusal(400, "invalid_request", "refresh_token is required for the refresh_token grant.")
		}
		// A refresh may not widen the grant (RFC 6749 §6); scopes this server does not
		// offer (offline_access) are dropped as at the authorization endpoint.
		pair, err = s.DB.Refresh(r.Ctx, kv.RefreshInput{Token: f.RefreshToken, Client: client, Resource: resource,
			Scopes: kv.GrantableScopes(f.Scope)})
	}
	if err != nil {
		return err
	}
	refresh := pair.Refresh
	if !client.AllowsGrant(kv.GrantRefresh) {
		refresh = "" // the client said it will not refresh; the token is never handed out
	}
	r.Out = tokenOut{AccessToken: pair.Access, TokenType: "Bearer", ExpiresIn: pair.ExpiresIn, RefreshToken: refresh,
		Scope: strings.Join(pair.Connection.Scopes, " ")}
	return nil
}

func errInvalidTarget(base string) error {
	return authz.OAuthRefusal(400, "invalid_target", "resource must be "+base+pipeline.ResourceMCP+" (the MCP server) or "+base+pipeline.ResourceAPI+" (the REST API).")
}

// handleOAuthRevoke is POST /v1/oauth/revoke (RFC 7009): any code or token of a
// connection ends the whole connection. Unknown tokens get 200 too.
func (s *AuthServer) handleOAuthRevoke(r *pipeline.Request) error {
	f, err := s.readTokenForm(r)
	if err != nil {
		return err
	}
	client, err := s.authenticateClient(r.Ctx, f)
	if err != nil {
		return err
	}
	if f.Token == "" {
		return authz.OAuthRefusal(400, "invalid_request", "token is required.")
	}
	return s.DB.RevokeToken(r.Ctx, f.Token, client.ID)
}
