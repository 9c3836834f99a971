package server

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// protectedResource is an OAuth 2.0 Protected Resource Metadata document (RFC 9728):
// what a client that got a 401 reads to find the authorization server and the scopes.
type protectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name"`
}

// oauthScopes are the scopes an OAuth client may be granted: every scope but
// agent:run, which only API keys carry.
func oauthScopes() []string {
	var out []string
	for _, sc := range kv.AllScopes {
		if sc != kv.ScopeAgentRun {
			out = append(out, sc)
		}
	}
	return out
}

// routeResourceMetadata serves the metadata of both protected surfaces at the
// addresses their WWW-Authenticate headers name. No credential is needed, and any web
// page may read it. The document names the base URL discovery answers the request
// with (discovery.go): encoded once for the base URL, per request for another origin.
func (s *Server) routeResourceMetadata(r *router.Router) {
	for _, res := range []struct{ path, name string }{
		{pipeline.ResourceAPI, "interviewd research API"},
		{pipeline.ResourceMCP, "interviewd MCP server"},
	} {
		route := "/.well-known/oauth-protected-resource" + res.path
		doc := func(base string) any {
			return protectedResource{
				Resource:               base + res.path,
				AuthorizationServers:   []string{base},
				BearerMethodsSupported: []string{"header"},
				ScopesSupported:        oauthScopes(),
				ResourceName:           res.name,
			}
		}
		raw := lazyJSON(func() any { return doc(s.BaseURL) })
		pipeline.HandlePlain(r, "GET", route, func(c *fasthttp.RequestCtx) {
			serveDiscoveryDoc(c, s.BaseFor(c), s.BaseURL, raw, doc)
		})
	}
}

// serveDiscoveryDoc answers a discovery document for base: the one encoded for the
// base URL (raw), or doc(base) encoded now.
func serveDiscoveryDoc(c *fasthttp.RequestCtx, base, baseURL string, raw func() []byte, doc func(base string) any) {
	body := raw()
	if base != baseURL {
		body = mustRawJSON(doc(base))
	}
	pipeline.AllowAnyOrigin(c)
	c.Response.Header.Set("Cache-Control", "public, max-age=3600")
	c.SetContentType("application/json")
	c.SetBody(body)
}
