package pipeline

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"
)

// Cross-origin requests from browser-based MCP clients (the Fetch standard's CORS).
//
// Discovery and the authorization server's JSON endpoints are public by design: they
// take no cookie, and answer a web page nothing a program could not ask for itself, so
// any origin may read them, without credentials. The MCP endpoint is another matter: a
// browser page calling it holds a person's token, so only the origins the operator lists
// (--cors-origins) are answered with CORS headers, and only ever the listed origin
// itself, never an Origin header echoed back.

// corsMaxAge is how long a browser may keep a preflight's answer, in seconds (Chromium
// keeps none longer than two hours).
const CORSMaxAge = "7200"

// mcpExposedHeaders are the response headers an MCP client in a browser must read: the
// session, the challenge that starts OAuth discovery, and the protocol revision.
const MCPExposedHeaders = "Mcp-Session-Id, WWW-Authenticate, Mcp-Protocol-Version"

// corsOrigins is the operator's list of browser origins allowed on the MCP endpoint,
// by canonical origin.
type CORSOrigins map[string]bool

func NewCORSOrigins(list []string) CORSOrigins {
	o := make(CORSOrigins, len(list))
	for _, origin := range list {
		if canon, ok := ParseOrigin(origin); ok {
			o[canon] = true
		}
	}
	return o
}

// Listed returns the listed origin an Origin header value names, or "" when it names
// none of them.
func (o CORSOrigins) Listed(origin []byte) string {
	if len(o) == 0 || len(origin) == 0 {
		return ""
	}
	if canon, ok := ParseOrigin(string(origin)); ok && o[canon] {
		return canon
	}
	return ""
}

// ParseCORSOrigins parses a comma-separated list of browser origins
// ("http://localhost:6274,https://inspector.example.com") into canonical origins. On
// error it names the offending item: a wildcard, a path or anything that is not an
// http(s) origin.
func ParseCORSOrigins(s string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "*") {
			return nil, fmt.Errorf("%q: wildcards are not accepted; list each origin such as https://inspector.example.com", item)
		}
		canon, ok := ParseOrigin(strings.TrimSuffix(item, "/"))
		if !ok {
			return nil, fmt.Errorf("%q is not an origin: want scheme://host[:port] without a path, such as http://localhost:6274", item)
		}
		if !slices.Contains(out, canon) {
			out = append(out, canon)
		}
	}
	return out, nil
}

// ParseOrigin returns raw's canonical origin when raw is an http(s) origin and nothing
// more (no path, query, fragment or user information).
func ParseOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	return CanonicalOrigin(u)
}

// IsPreflight reports whether c is a CORS preflight: OPTIONS naming the method the
// browser means to send.
func IsPreflight(c *fasthttp.RequestCtx) bool {
	return c.IsOptions() && len(c.Request.Header.Peek("Access-Control-Request-Method")) > 0
}

// AllowRequestedHeaders allows the request headers a preflight asks for. Which headers
// an MCP client sends grows with each protocol revision; what is trusted is the
// origin, not the header names. Only header-name tokens are repeated.
func AllowRequestedHeaders(c *fasthttp.RequestCtx) {
	var names []string
	for name := range strings.SplitSeq(string(c.Request.Header.Peek("Access-Control-Request-Headers")), ",") {
		if name = strings.TrimSpace(name); name != "" && isToken(name) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		c.Response.Header.Set("Access-Control-Allow-Headers", strings.Join(names, ", "))
	}
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), as header names are.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0) {
			return false
		}
	}
	return s != ""
}

// publicCORSPath reports whether path is an endpoint any origin may call: the
// discovery documents and the authorization server's JSON endpoints (registration,
// token, revocation).
func publicCORSPath(path string) bool {
	switch path {
	case "/.well-known/oauth-authorization-server",
		"/.well-known/oauth-protected-resource" + ResourceMCP,
		"/.well-known/oauth-protected-resource" + ResourceAPI,
		"/v1/oauth/register", "/v1/oauth/token", "/v1/oauth/revoke":
		return true
	}
	return false
}

// AllowAnyOrigin lets any web page read the answer (no credentials: none are taken).
func AllowAnyOrigin(c *fasthttp.RequestCtx) {
	c.Response.Header.Set("Access-Control-Allow-Origin", "*")
}

// HandleOptions answers OPTIONS on a path some route serves, after the router has set
// the Allow header: no body, so 204. On a public endpoint a preflight is allowed for any
// origin, for the methods the path serves.
func (s *Core) HandleOptions(c *fasthttp.RequestCtx) {
	handleOptions(c)
	if IsPreflight(c) && publicCORSPath(string(c.Request.URI().PathOriginal())) {
		h := &c.Response.Header
		AllowAnyOrigin(c)
		h.Set("Access-Control-Allow-Methods", string(h.Peek(fasthttp.HeaderAllow)))
		AllowRequestedHeaders(c)
		h.Set("Access-Control-Max-Age", CORSMaxAge)
	}
}

// ResourceMCP is the MCP surface's path and protected-resource path suffix.
const ResourceMCP = "/v1/mcp"
