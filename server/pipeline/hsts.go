package pipeline

import "github.com/valyala/fasthttp"

// HSTSValue is the Strict-Transport-Security header sent on every answer over TLS: one
// year, without includeSubDomains, since a self-hoster's other hosts may still speak
// plain HTTP.
const HSTSValue = "max-age=31536000"

// secureTransport marks answers given over TLS so browsers come back over TLS only.
// Plain-HTTP answers never carry it (browsers ignore it there, and a server reached
// through a TLS-terminating proxy leaves the header to the proxy).
func (s *Core) secureTransport(c *fasthttp.RequestCtx) {
	if s.HSTS && c.IsTLS() {
		c.Response.Header.Set("Strict-Transport-Security", HSTSValue)
	}
}
