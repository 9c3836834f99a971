package server

import (
	"fmt"
	"strings"
	"testing"

	radix "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"interviewd/internal/router"
	"interviewd/kv"
)

// TestRoutesMatchRadix runs the server's own route table through internal/router and
// through the radix-tree router it replaced (configured as the server had it), and
// asks both about every route's paths with its parameters and literals swapped for
// awkward values and one segment added, in every method: the same status, Allow
// header, route and parameters. (Empty segments and "/*", the two differences by
// design, are never generated; internal/router's tests pin them.)
func TestRoutesMatchRadix(t *testing.T) {
	db, err := kv.Open(t.TempDir(), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(Config{DB: db})
	defer s.cancel()
	if len(s.routes) < 100 {
		t.Fatalf("the server registered %d routes", len(s.routes))
	}
	ours, theirs := router.New(), radix.New()
	theirs.RedirectTrailingSlash, theirs.RedirectFixedPath, theirs.HandleOPTIONS = false, false, false
	notFound := func(c *fasthttp.RequestCtx) { c.SetStatusCode(404) }
	notAllowed := func(c *fasthttp.RequestCtx) { c.SetStatusCode(405) }
	ours.NotFound, ours.MethodNotAllowed = notFound, notAllowed
	theirs.NotFound, theirs.MethodNotAllowed = notFound, notAllowed
	for _, rt := range s.routes {
		h := recordRoute(rt)
		ours.Handle(rt.Method, rt.Template, h)
		theirs.Handle(rt.Method, rt.Template, h)
	}
	values := []string{"x", "jobs", "a:b", ":refine", "%2F", "%zz", "invitations", "mode", "\xff"}
	paths := map[string]bool{}
	for _, rt := range s.routes {
		segs := strings.Split(strings.TrimPrefix(rt.Template, "/"), "/")
		paths["/"+strings.Join(segs, "/")+"/y"] = true
		for i := range segs {
			for _, v := range values {
				alt := append([]string(nil), segs...)
				alt[i] = v
				for j := range alt {
					if j != i && strings.HasPrefix(alt[j], "{") {
						alt[j] = "p"
					}
				}
				paths["/"+strings.Join(alt, "/")] = true
			}
		}
	}
	n := 0
	for p := range paths {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			s1, a1, b1 := serveOnce(ours.Handler, m, p)
			s2, a2, b2 := serveOnce(theirs.Handler, m, p)
			if s1 != s2 || a1 != a2 || b1 != b2 {
				t.Errorf("%s %q: ours %d Allow=%q %q; radix %d Allow=%q %q", m, p, s1, a1, b1, s2, a2, b2)
			}
			n++
		}
	}
	t.Logf("%d routes, %d requests compared", len(s.routes), n)
}

// recordRoute answers with the route's method, template and parameters.
func recordRoute(rt router.Route) fasthttp.RequestHandler {
	var names []string
	for _, seg := range strings.Split(rt.Template, "/") {
		if strings.HasPrefix(seg, "{") {
			names = append(names, strings.Trim(seg, "{}"))
		}
	}
	return func(c *fasthttp.RequestCtx) {
		var b strings.Builder
		b.WriteString(rt.Method + " " + rt.Template)
		for _, n := range names {
			fmt.Fprintf(&b, " %s=%v", n, c.UserValue(n))
		}
		c.SetBodyString(b.String())
	}
}

func serveOnce(h fasthttp.RequestHandler, method, path string) (int, string, string) {
	var c fasthttp.RequestCtx
	c.Request.Header.SetMethod(method)
	c.Request.SetRequestURI(path)
	h(&c)
	return c.Response.StatusCode(), string(c.Response.Header.Peek("Allow")), string(c.Response.Body())
}
