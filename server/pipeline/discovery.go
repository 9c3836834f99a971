package pipeline

import (
	"net"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// Discovery (RFC 9728's protected-resource metadata, RFC 8414's authorization-server
// metadata and the 401 challenge that points at them) names absolute URLs, and MCP
// clients check them against the URL they were given: the metadata's resource must be
// that URL (RFC 9728 §3.3), the issuer the authorization server they discovered. With a
// configured base URL that is the one URL clients must use. Without one, the base
// follows the listen address (http://localhost:8080), and a person who types
// http://127.0.0.1:8080/v1/mcp, as local tools often do, would be refused by their
// client over a mismatch of names for the same socket. So a server whose base URL was
// derived answers discovery for the loopback origin a client used: localhost or a
// loopback address on the listening port. Any other Host gets the base URL, so a Host
// header can never make the server name a foreign origin.

// discoveryBase is what the base URL's origin says about which Hosts discovery follows.
type discoveryBase struct {
	// Follow is set when the base URL was derived from the listen address (no
	// --base-url); only then does discovery follow a loopback Host.
	Follow bool
	scheme string // the base URL's scheme, which a loopback origin keeps
	port   string // the base URL's port, explicit or the scheme's default
}

func NewDiscoveryBase(baseURL string, follow bool) discoveryBase {
	u, err := url.Parse(baseURL)
	if err != nil {
		return discoveryBase{}
	}
	return discoveryBase{Follow: follow, scheme: u.Scheme, port: portOrDefault(u.Scheme, u.Port())}
}

func portOrDefault(scheme, port string) string {
	if port != "" {
		return port
	}
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// loopbackOrigin returns the canonical origin of scheme://host when discovery follows
// it: the base URL was derived, host is a loopback name or address and its port is the
// listening one. ok is false otherwise.
func (d discoveryBase) loopbackOrigin(host string) (origin string, ok bool) {
	if !d.Follow || host == "" {
		return "", false
	}
	u, err := url.Parse(d.scheme + "://" + host)
	if err != nil || u.Host != host || u.User != nil || !IsLoopbackHost(u.Hostname()) ||
		portOrDefault(u.Scheme, u.Port()) != d.port {
		return "", false
	}
	return CanonicalOrigin(u)
}

// BaseFor returns the base URL discovery answers c with: the origin c's client used
// when discovery follows it, else the base URL.
func (s *Core) BaseFor(c *fasthttp.RequestCtx) string {
	if origin, ok := s.Discovery.loopbackOrigin(string(c.Host())); ok {
		return origin
	}
	return s.BaseURL
}

// OwnsOrigin reports whether origin (scheme://host[:port], no path) is one discovery
// names: the base URL's, or a loopback origin it follows. Resource indicators are
// checked with it, so a code asked for at http://127.0.0.1:8080 may be exchanged at
// http://localhost:8080 and its tokens used at either (they are bound to the resource's
// path, which is the same at every origin).
func (s *Core) OwnsOrigin(origin string) bool {
	if origin == s.BaseURL {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != s.Discovery.scheme || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	_, ok := s.Discovery.loopbackOrigin(u.Host)
	return ok
}

// IsLoopbackHost reports whether host names this machine: localhost (and its
// subdomains, which resolve to loopback by RFC 6761), 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CanonicalOrigin returns scheme://host[:port] in lower case without the scheme's
// default port, and whether u is an http(s) URL with a host.
func CanonicalOrigin(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if (scheme != "http" && scheme != "https") || host == "" {
		return "", false
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}
