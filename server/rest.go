package server

import (
	"github.com/fasthttp/router"
)

// restWire is the research pipeline over REST: a refused caller still learns its
// budget, the Idempotency-Key header, input from the path, query and JSON body.
var restWire = researchWire{peekRate: true, budget: budgetCredential, idem: restIdem, bind: bindRESTInput}

// restSurface is the research API over REST: a bearer credential, then the research
// pipeline (pipeline_research.go); JSON answers.
func (s *Server) restSurface() *surface {
	return &surface{
		name:         "rest",
		pre:          []middleware{s.authFenceStep},
		authenticate: s.bearerAuthenticator(resourceAPI),
		steps:        s.researchSteps(restWire),
		render:       s.renderREST,
	}
}

// routeREST binds every operation of the research table to its REST route. Operations
// whose path ends in a literal action (":refine", ":simulate") share one route per
// template, dispatched on the suffix, because the router matches whole segments.
func (s *Server) routeREST(r *router.Router) {
	s.group(r, "", s.signedDownloadSurface()).GET("/v1/api/exports/{job_id}/artifact", s.handleSignedDownload)
	g := s.group(r, "", s.restSurface())
	for _, o := range s.ops {
		if tmpl, action := o.restPathAction(); action != "" {
			g.action(o.Method, tmpl, action, o, s.runOperation)
			continue
		}
		if o.Method == "GET" { // HEAD is a read like GET; fasthttp sends no body for it
			g.GETOp(o.Path, o, s.runOperation)
			continue
		}
		g.handleOp(o.Method, o.Path, o, s.runOperation)
	}
	g.flushActions(s.handleNotFound)
}
