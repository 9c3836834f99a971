package pipeline

import (
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// NewRouter returns the router every surface registers on, configured for the
// contract: a path matches as it arrived, so "/v1/api/studies/" or a path in another
// case is a 404 (never a redirect to a route the client did not ask for); a known path
// in another method is a 405 with an Allow header; OPTIONS on a known path answers 204
// with that Allow header. NotFound and MethodNotAllowed are set by the server, which
// renders them in each surface's shape.
func NewRouter() *router.Router {
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.GlobalOPTIONS = handleOptions
	return r
}

// handleOptions answers OPTIONS on a path some route serves, after the router has set
// the Allow header: no body, so 204.
func handleOptions(c *fasthttp.RequestCtx) {
	fixAllow(c)
	c.SetStatusCode(fasthttp.StatusNoContent)
}

// fixAllow corrects the Allow header the router set before a 405 or an OPTIONS answer.
// The router lists routes registered with ANY under their registration name "*", which
// is no method, and answers the server-wide paths "*" and "/*" with every method it
// serves anywhere; on those paths only OPTIONS is answered, so a 405 there allows
// OPTIONS alone.
func fixAllow(c *fasthttp.RequestCtx) {
	h := &c.Response.Header
	path := string(c.Request.URI().PathOriginal())
	if (path == "*" || path == "/*") && !c.IsOptions() {
		h.Set(fasthttp.HeaderAllow, fasthttp.MethodOptions)
		return
	}
	var allow []string
	for m := range strings.SplitSeq(string(h.Peek(fasthttp.HeaderAllow)), ", ") {
		if m != "" && m != router.MethodWild {
			allow = append(allow, m)
		}
	}
	h.Set(fasthttp.HeaderAllow, strings.Join(allow, ", "))
}
