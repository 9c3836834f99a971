// Package router finds the handler registered for a request's method and path.
//
// A route is a template of slash-separated segments: literal ("studies") or a parameter
// naming the whole segment ("{study_id}"). The router matches the request's path as it
// arrived (not decoded, not cleaned), so "/v1/api//studies" or "/v1/api/studies/" match
// nothing unless registered so. A literal segment wins over a parameter, and a path that
// a literal cannot finish falls back to the parameter ("/studies/jobs" is the study
// "jobs" when only "/studies/jobs/{job_id}" is literal there). A parameter never
// matches an empty segment. A matched route's parameters are the request's user values,
// under their names.
//
// A path that matches a route of another method is answered by MethodNotAllowed with
// an Allow header listing those methods (and OPTIONS); any other path by NotFound.
// Routes registered with ANY answer every method a route of its own does not.
//
// Templates are compiled into a tree of segments, once, at start-up: a route costs well
// under a microsecond to register, where the radix tree this replaced, re-sorted on
// every insertion, was half of the server's construction.
package router

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// MethodWild is the method ANY registers under.
const MethodWild = "*"

// maxParams bounds the parameters of one template; lookups keep their values on the
// stack.
const maxParams = 8

// Router is a table of routes. Register every route before serving; Handler is safe for
// concurrent use once registration is over.
type Router struct {
	// NotFound answers a path no route matches; nil answers a plain 404.
	NotFound fasthttp.RequestHandler
	// MethodNotAllowed answers a path only routes of other methods match, after the
	// Allow header is set; nil answers a plain 405.
	MethodNotAllowed fasthttp.RequestHandler

	root    node
	methods []string // every method a route was registered for, in order of registration
	routes  []Route  // every route, in order of registration
}

// Route is one registered route: its method (MethodWild for ANY) and template.
type Route struct{ Method, Template string }

// node is one segment position: its literal children, its parameter child and the
// routes that end here.
type node struct {
	literal map[string]*node
	param   *node
	routes  []route
}

type route struct {
	method string
	params []string // the template's parameter names, in path order
	h      fasthttp.RequestHandler
}

// New returns an empty router.
func New() *Router { return &Router{} }

// POST registers h for POST requests to tmpl.
func (r *Router) POST(tmpl string, h fasthttp.RequestHandler) { r.Handle(fasthttp.MethodPost, tmpl, h) }

// ANY registers h for every method tmpl has no route of its own for.
func (r *Router) ANY(tmpl string, h fasthttp.RequestHandler) { r.Handle(MethodWild, tmpl, h) }

// Handle registers h for method requests to tmpl. A malformed template, or a second
// route for the same method and template, is a programming error: it panics, at
// start-up.
func (r *Router) Handle(method, tmpl string, h fasthttp.RequestHandler) {
	if method == "" || h == nil {
		panic(fmt.Sprintf("router: %q %q: want a method and a handler", method, tmpl))
	}
	if !strings.HasPrefix(tmpl, "/") {
		panic(fmt.Sprintf("router: template %q does not start with /", tmpl))
	}
	n, params := &r.root, []string(nil)
	for i, seg := range strings.Split(tmpl[1:], "/") {
		name, isParam, err := parseSegment(seg)
		switch {
		case err != nil:
			panic(fmt.Sprintf("router: template %q: %v", tmpl, err))
		case seg == "" && (i > 0 || tmpl != "/"):
			panic(fmt.Sprintf("router: template %q has an empty segment", tmpl))
		case isParam:
			if slices.Contains(params, name) {
				panic(fmt.Sprintf("router: template %q names {%s} twice", tmpl, name))
			}
			params = append(params, name)
			if n.param == nil {
				n.param = &node{}
			}
			n = n.param
		default:
			if n.literal == nil {
				n.literal = map[string]*node{}
			}
			next := n.literal[seg]
			if next == nil {
				next = &node{}
				n.literal[seg] = next
			}
			n = next
		}
	}
	if len(params) > maxParams {
		panic(fmt.Sprintf("router: template %q has more than %d parameters", tmpl, maxParams))
	}
	for _, rt := range n.routes {
		if rt.method == method {
			panic(fmt.Sprintf("router: %s %s is registered twice", method, tmpl))
		}
	}
	n.routes = append(n.routes, route{method: method, params: params, h: h})
	r.routes = append(r.routes, Route{Method: method, Template: tmpl})
	if !slices.Contains(r.methods, method) {
		r.methods = append(r.methods, method)
	}
}

// Routes returns every registered route, in order of registration.
func (r *Router) Routes() []Route { return slices.Clone(r.routes) }

// parseSegment tells a parameter segment ("{name}") from a literal one, and rejects a
// brace anywhere else.
func parseSegment(seg string) (name string, isParam bool, err error) {
	if strings.IndexByte(seg, '{') < 0 && strings.IndexByte(seg, '}') < 0 {
		return "", false, nil // the common case, checked without building a set
	}
	if len(seg) < 2 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return "", false, fmt.Errorf("segment %q: a parameter must fill the whole segment", seg)
	}
	name = seg[1 : len(seg)-1]
	if name == "" || strings.ContainsAny(name, "{}:*?") {
		return "", false, fmt.Errorf("parameter %q: want {name} filling the whole segment", seg)
	}
	return name, true, nil
}

// Handler serves c with the route its method and path match.
func (r *Router) Handler(c *fasthttp.RequestCtx) {
	path := bytesString(c.Request.URI().PathOriginal())
	method := bytesString(c.Method())
	var vals [maxParams]string
	rt := r.root.match(path, method, &vals, 0)
	if rt == nil {
		rt = r.root.match(path, MethodWild, &vals, 0)
	}
	if rt != nil {
		for i, name := range rt.params {
			// The path's bytes belong to the request buffer, which fasthttp reuses.
			c.SetUserValue(name, strings.Clone(vals[i]))
		}
		rt.h(c)
		return
	}
	if allow := r.allowed(path, method); allow != "" {
		c.Response.Header.Set("Allow", allow)
		if r.MethodNotAllowed != nil {
			r.MethodNotAllowed(c)
			return
		}
		c.SetStatusCode(fasthttp.StatusMethodNotAllowed) // not Error: it drops the Allow header
		c.SetBodyString(fasthttp.StatusMessage(fasthttp.StatusMethodNotAllowed))
		return
	}
	if r.NotFound != nil {
		r.NotFound(c)
		return
	}
	c.Error(fasthttp.StatusMessage(fasthttp.StatusNotFound), fasthttp.StatusNotFound)
}

// match returns the route for method that the rest of path (from a '/', or empty at its
// end) reaches from n, filling vals from depth with the parameters on the way.
func (n *node) match(path, method string, vals *[maxParams]string, depth int) *route {
	if path == "" {
		for i := range n.routes {
			if n.routes[i].method == method {
				return &n.routes[i]
			}
		}
		return nil
	}
	if path[0] != '/' {
		return nil
	}
	seg, rest := path[1:], ""
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg, rest = seg[:i], seg[i:]
	}
	if next := n.literal[seg]; next != nil {
		if rt := next.match(rest, method, vals, depth); rt != nil {
			return rt
		}
	}
	if n.param != nil && seg != "" && depth < maxParams {
		if rt := n.param.match(rest, method, vals, depth+1); rt != nil {
			vals[depth] = seg
			return rt
		}
	}
	return nil
}

// allowed returns the Allow header for a path that method matched no route on: the
// other methods whose routes match it, with OPTIONS, sorted and comma-separated; ""
// when none does.
func (r *Router) allowed(path, method string) string {
	var vals [maxParams]string
	var allow []string
	for _, m := range r.methods {
		if m == method || m == MethodWild || m == fasthttp.MethodOptions {
			continue
		}
		if r.root.match(path, m, &vals, 0) != nil {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		return ""
	}
	allow = append(allow, fasthttp.MethodOptions)
	slices.Sort(allow)
	return strings.Join(allow, ", ")
}

// bytesString views b as a string without copying; the string must not outlive the
// request.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
