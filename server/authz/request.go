package authz

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// The authorization endpoint. GET /v1/oauth/authorize checks the request (DECISIONS
// §15) and hands the browser to the app's consent page with the same parameters; the
// consent page checks them again on every view and post, so nothing about a pending
// request is stored until the person approves.
//
// Refusals come in two kinds (RFC 6749 §4.1.2.1): until the client and its redirect
// URI are known good, an error page (redirecting to an unchecked address would make
// this an open redirector); after that, a redirect back to the client with error,
// error_description, state and iss.

// AuthorizeParams are the parameters of an authorization request, in the order the
// consent forms carry them.
var AuthorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "resource",
	"code_challenge", "code_challenge_method", "state"}

// authzQuery is a decoded authorization request.
type authzQuery struct {
	ResponseType, ClientID, RedirectURI, Scope, Resource string
	Challenge, Method, State                             string
	// Dup names a parameter sent more than once (RFC 6749 §3.1 forbids it).
	Dup string
}

// DecodeAuthorize reads an authorization request's query. Only a query that is not
// urlencoded at all is an error; every rule about the values is checkAuthorize's.
func DecodeAuthorize(raw string) (authzQuery, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return authzQuery{}, err
	}
	return QueryFromValues(vals), nil
}

func QueryFromValues(vals url.Values) authzQuery {
	q := authzQuery{ResponseType: vals.Get("response_type"), ClientID: vals.Get("client_id"), RedirectURI: vals.Get("redirect_uri"),
		Scope: vals.Get("scope"), Resource: vals.Get("resource"), Challenge: vals.Get("code_challenge"),
		Method: vals.Get("code_challenge_method"), State: vals.Get("state")}
	for _, name := range AuthorizeParams {
		if len(vals[name]) > 1 {
			q.Dup = name
			break
		}
	}
	return q
}

// Values returns the request's parameters as the consent forms carry them.
func (q authzQuery) Values() []FormParam {
	vals := []string{q.ResponseType, q.ClientID, q.RedirectURI, q.Scope, q.Resource, q.Challenge, q.Method, q.State}
	var out []FormParam
	for i, name := range AuthorizeParams {
		if vals[i] != "" {
			out = append(out, FormParam{Name: name, Value: vals[i]})
		}
	}
	return out
}

// Encode returns the request as a query string.
func (q authzQuery) Encode() string {
	v := url.Values{}
	for _, p := range q.Values() {
		v.Set(p.Name, p.Value)
	}
	return v.Encode()
}

// appFormParam is one hidden field of the consent forms.
type FormParam struct{ Name, Value string }

// authzRequest is an authorization request that passed every check.
type Request struct {
	Q        authzQuery
	Client   kv.OAuthClient
	Scopes   []string // requested and grantable, sorted
	Resource string   // "/v1/mcp" or "/v1/api"
}

// authzRefusal is a refused authorization request: an error page when toClient is
// false, else a redirect to the client's redirect URI.
type Refusal struct {
	ToClient   bool
	Q          authzQuery
	Code, Desc string
	PageStatus int
}

func (e *Refusal) Error() string { return e.Code + ": " + e.Desc }

func PageRefusal(status int, desc string) *Refusal {
	return &Refusal{PageStatus: status, Code: "invalid_request", Desc: desc}
}

// maxState bounds the opaque state a client may send through.
const maxState = 1000

// CheckAuthorize applies every rule of DECISIONS §15 to q, in RFC 6749's order:
// client and redirect URI first (refused on a page), then the rest (refused to the
// client).
func (s *Clients) CheckAuthorize(ctx context.Context, q authzQuery) (*Request, *Refusal) {
	if q.Dup == "client_id" || q.Dup == "redirect_uri" {
		return nil, PageRefusal(400, "The authorization request sends "+q.Dup+" more than once.")
	}
	if q.ClientID == "" {
		return nil, PageRefusal(400, "The authorization request has no client_id. Go back to the app you came from and connect again.")
	}
	client, err := s.FindOAuthClient(ctx, q.ClientID)
	if err != nil {
		var oe *OAuthError
		if errors.As(err, &oe) && oe.Code == "invalid_client" {
			return nil, PageRefusal(400, oe.Description)
		}
		if kv.ErrorCode(err) == kv.ENOTFOUND {
			return nil, PageRefusal(400, "The app that sent you here is not known to this server (unknown client_id). Go back to it and connect again.")
		}
		return nil, &Refusal{PageStatus: 500, Code: "server_error", Desc: pipeline.ErrInternal}
	}
	if q.RedirectURI == "" {
		return nil, PageRefusal(400, "The authorization request has no redirect_uri; it must always be sent.")
	}
	// The presented URI meets registration's rules first: the loopback port leniency
	// below compares host, path and query only, so user information ("evil@127.0.0.1")
	// would otherwise pass it.
	if why := kv.CheckRedirectURI(q.RedirectURI); why != "" {
		return nil, PageRefusal(400, "The redirect_uri cannot be used, so you are not sent there. "+why)
	}
	if !kv.MatchRedirectURI(client.RedirectURIs, q.RedirectURI) {
		return nil, PageRefusal(400, "The redirect_uri is not one the app registered, so you are not sent there.")
	}
	back := func(code, desc string) (*Request, *Refusal) {
		return nil, &Refusal{ToClient: true, Q: q, Code: code, Desc: desc}
	}
	switch {
	case q.Dup != "":
		return back("invalid_request", "The parameter "+q.Dup+" is sent more than once.")
	case q.ResponseType != "code":
		return back("unsupported_response_type", "Only response_type=code is supported.")
	case q.Challenge == "":
		return back("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.")
	case q.Method != "S256":
		return back("invalid_request", "Only code_challenge_method=S256 is supported (plain is refused).")
	case !ValidChallenge(q.Challenge):
		return back("invalid_request", "code_challenge must be 43 base64url characters (an S256 hash of the verifier).")
	case len(q.State) > maxState:
		return back("invalid_request", "state is longer than 1000 characters.")
	}
	for _, sc := range strings.Fields(q.Scope) {
		if sc == kv.ScopeAgentRun {
			return back("invalid_scope", "agent:run cannot be granted to an OAuth client; it is for API keys only.")
		}
	}
	scopes := kv.GrantableScopes(q.Scope)
	if len(scopes) == 0 {
		scopes = client.Scopes // no scope, or only ones this server does not offer
	}
	resource := pipeline.ResourceMCP // clients of the 2025-03-26 MCP revision send none
	if q.Resource != "" {
		if resource = s.ResourcePath(q.Resource); resource == "" {
			return back("invalid_target", "resource must be "+s.BaseURL+pipeline.ResourceMCP+" (the MCP server) or "+s.BaseURL+pipeline.ResourceAPI+" (the REST API).")
		}
	}
	return &Request{Q: q, Client: client, Scopes: scopes, Resource: resource}, nil
}

func ValidChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

// ClientRedirect returns the client's redirect URI with params added to its query.
func ClientRedirect(redirectURI string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// RefusalRedirect is where a refusal sends the browser back to the client (RFC 6749
// §4.1.2.1, RFC 9207's iss: the issuer the client discovered, at the origin it used).
func (s *Clients) RefusalRedirect(c *fasthttp.RequestCtx, e *Refusal) string {
	v := url.Values{"error": {e.Code}, "error_description": {e.Desc}, "iss": {s.BaseFor(c)}}
	if e.Q.State != "" {
		v.Set("state", e.Q.State)
	}
	return ClientRedirect(e.Q.RedirectURI, v)
}
