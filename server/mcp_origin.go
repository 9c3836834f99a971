package server

import (
	"net"
	"net/url"
	"strings"
)

// originPolicy decides which browser origins may call the MCP endpoint. A web page
// can make a victim's browser POST anywhere, so a present Origin must be our own
// (the base URL's) or one the operator lists for cross-origin clients (--cors-origins,
// the same list CORS answers); when the base URL is loopback (a local install), any
// loopback origin is ours too, whatever its port, since local tools pick their own.
// Requests without an Origin (every non-browser client) pass.
type originPolicy struct {
	origin   string // canonical scheme://host[:port] of the base URL
	loopback bool
	listed   corsOrigins
}

func newOriginPolicy(baseURL string) originPolicy {
	u, err := url.Parse(baseURL)
	if err != nil {
		return originPolicy{}
	}
	origin, _ := canonicalOrigin(u)
	return originPolicy{origin: origin, loopback: isLoopbackHost(u.Hostname())}
}

// allows reports whether a request with this Origin header value may proceed.
func (p originPolicy) allows(origin []byte) bool {
	if len(origin) == 0 {
		return true
	}
	got, ok := parseOrigin(string(origin))
	if !ok {
		return false // "null", "file://", or something that is not an origin at all
	}
	if (p.origin != "" && got == p.origin) || p.listed[got] {
		return true
	}
	u, _ := url.Parse(got)
	return p.loopback && isLoopbackHost(u.Hostname())
}

// canonicalOrigin returns scheme://host[:port] in lower case without the scheme's
// default port, and whether u is an http(s) URL with a host.
func canonicalOrigin(u *url.URL) (string, bool) {
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

// isLoopbackHost reports whether host names this machine: localhost (and its
// subdomains, which resolve to loopback by RFC 6761), 127.0.0.0/8 or ::1.
func isLoopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
