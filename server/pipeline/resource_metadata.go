package pipeline

import (
	"interviewd/kv"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// ServeDiscoveryDoc answers a discovery document for base: the one encoded for the
// base URL (raw), or doc(base) encoded now.
func ServeDiscoveryDoc(c *fasthttp.RequestCtx, base, baseURL string, raw func() []byte, doc func(base string) any) {
	body := raw()
	if base != baseURL {
		body = MustRawJSON(doc(base))
	}
	AllowAnyOrigin(c)
	c.Response.Header.Set("Cache-Control", "public, max-age=3600")
	c.SetContentType("application/json")
	c.SetBody(body)
}

// RouteResourceMetadata serves the metadata of both protected surfaces at the
// addresses their WWW-Authenticate headers name. No credential is needed, and any web
// page may read it. The document names the base URL discovery answers the request
// with (discovery.go): encoded once for the base URL, per request for another origin.
func RouteResourceMetadata(s *Core, r *router.Router) {
	for _, res := range []struct{ path, name string }{
		{ResourceAPI, "interviewd research API"},
		{ResourceMCP, "interviewd MCP server"},
	} {
		route := "/.well-known/oauth-protected-resource" + res.path
		doc := func(base string) any {
			return ProtectedResource{
				Resource:               base + res.path,
				AuthorizationServers:   []string{base},
				BearerMethodsSupported: []string{"header"},
				ScopesSupported:        OAuthScopes(),
				ResourceName:           res.name,
			}
		}
		raw := LazyJSON(func() any { return doc(s.BaseURL) })
		HandlePlain(r, "GET", route, func(c *fasthttp.RequestCtx) {
			ServeDiscoveryDoc(c, s.BaseFor(c), s.BaseURL, raw, doc)
		})
	}
}

// oauthScopes are the scopes an OAuth client may be granted: every scope but
// agent:run, which only API keys carry.
func OAuthScopes() []string {
	var out []string
	for _, sc := range kv.AllScopes {
		if sc != kv.ScopeAgentRun {
			out = append(out, sc)
		}
	}
	return out
}

// ProtectedResource is an OAuth 2.0 Protected Resource Metadata document (RFC 9728):
// what a client that got a 401 reads to find the authorization server and the scopes.
type ProtectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name"`
}
