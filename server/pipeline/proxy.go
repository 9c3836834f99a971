package pipeline

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// Behind a reverse proxy every request comes from the proxy's address, so the
// per-address limits (participants, failed credentials) would put every client in one
// budget. The forwarding headers say who the client was, but anyone can send them: they
// are believed only from the addresses an operator names (--trusted-proxies), as Caddy
// and PocketBase do.

// maxForwardedHops bounds how many forwarding entries are looked at.
const maxForwardedHops = 20

// ParseTrustedProxies parses a comma-separated list of CIDR prefixes or single
// addresses ("10.0.0.0/8,192.0.2.7,::1"). Empty means no proxy is trusted. On error it
// names the offending item.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("trusted proxies: %q is not a CIDR prefix such as 10.0.0.0/8", item)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("trusted proxies: %q is not an IP address or CIDR prefix", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

type TrustedProxies []netip.Prefix

func (t TrustedProxies) Trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr returns the address the connection comes from.
func peerAddr(c *fasthttp.RequestCtx) netip.Addr {
	a, _ := netip.AddrFromSlice(c.RemoteIP())
	return a.Unmap()
}

// ClientIP returns the address of the client a request is from: the peer, unless the
// peer is a trusted proxy, in which case the forwarding chain (X-Forwarded-For, else
// Forwarded) is walked from the nearest hop back past every trusted proxy, and
// the first address that is not one is the client. A chain of trusted proxies only
// gives its farthest entry; a malformed entry stops the walk at the last good address.
func (s *Core) ClientIP(c *fasthttp.RequestCtx) netip.Addr {
	peer := peerAddr(c)
	if len(s.Proxies) == 0 || !s.Proxies.Trusts(peer) {
		return peer
	}
	hops := forwardedFor(&c.Request.Header)
	client := peer
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-maxForwardedHops; i-- {
		a, ok := ParseHop(hops[i])
		if !ok {
			break
		}
		client = a
		if !s.Proxies.Trusts(a) {
			break
		}
	}
	return client
}

// clientIPText is clientIP as text, for the access log. Without trusted proxies the
// client is the peer, the same for every request of a connection: it is formatted once
// per connection.
func (s *Core) clientIPText(c *fasthttp.RequestCtx) string {
	tc := tracked(c.Conn())
	if len(s.Proxies) > 0 || tc == nil {
		return s.ClientIP(c).String()
	}
	if tc.peerIP == "" {
		tc.peerIP = peerAddr(c).String()
	}
	return tc.peerIP
}

// ClientScheme returns "https" or "http": what the client used to reach us, as a trusted
// proxy reports it (X-Forwarded-Proto, else Forwarded proto=), else this connection's.
func (s *Core) ClientScheme(c *fasthttp.RequestCtx) string {
	scheme := "http"
	if c.IsTLS() {
		scheme = "https"
	}
	if len(s.Proxies) == 0 || !s.Proxies.Trusts(peerAddr(c)) {
		return scheme
	}
	// X-Forwarded-Proto first, for the same reason forwardedFor prefers X-Forwarded-For.
	proto := ""
	if v := c.Request.Header.Peek("X-Forwarded-Proto"); len(v) > 0 {
		parts := strings.Split(string(v), ",")
		proto = parts[len(parts)-1]
	} else if fwd := forwardedParams(&c.Request.Header, "proto"); len(fwd) > 0 {
		proto = fwd[len(fwd)-1]
	}
	switch strings.ToLower(strings.TrimSpace(proto)) {
	case "https":
		return "https"
	case "http":
		return "http"
	}
	return scheme
}

// forwardedFor returns the forwarding chain, nearest hop last: the X-Forwarded-For
// entries when present, else the for= parameters of Forwarded (RFC 7239). Most proxies
// (nginx, Caddy, Traefik, ELB) add X-Forwarded-For and pass a client's own Forwarded
// header through untouched, so when both are present only X-Forwarded-For carries what
// the trusted proxy saw; believing Forwarded would let the client name its own address.
func forwardedFor(h *fasthttp.RequestHeader) []string {
	var hops []string
	for _, v := range h.PeekAll("X-Forwarded-For") {
		for part := range strings.SplitSeq(string(v), ",") {
			hops = append(hops, strings.TrimSpace(part))
		}
	}
	if len(hops) > 0 {
		return hops
	}
	return forwardedParams(h, "for")
}

// forwardedParams returns the values of one parameter of every Forwarded element, in
// order, unquoted.
func forwardedParams(h *fasthttp.RequestHeader, name string) []string {
	var out []string
	for _, v := range h.PeekAll("Forwarded") {
		for elem := range strings.SplitSeq(string(v), ",") {
			for pair := range strings.SplitSeq(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), name) {
					out = append(out, strings.Trim(strings.TrimSpace(val), `"`))
				}
			}
		}
	}
	return out
}

// ParseHop parses one forwarding entry: an address, possibly with a port, an IPv6
// address in brackets (Forwarded's form), or not an address at all ("unknown", an
// obfuscated identifier), which is refused.
func ParseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
