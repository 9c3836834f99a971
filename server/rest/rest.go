// Package rest is the research API over REST: every operation of the research table
// at its route, behind a bearer credential, through the research pipeline, answered
// as JSON. It depends on the shared pipeline alone.
package rest

import (
	"interviewd/server/pipeline"
	"interviewd/server/research"

	"github.com/fasthttp/router"
)

// restWire is the research pipeline over REST: a refused caller still learns its
// budget, the Idempotency-Key header, input from the path, query and JSON body.
var restWire = pipeline.ResearchWire{PeekRate: true, Budget: pipeline.BudgetCredential, Idem: pipeline.RESTIdem, Bind: pipeline.BindRESTInput}

// restSurface is the research API over REST: a bearer credential, then the research
// pipeline (pipeline.ResearchSteps); JSON answers.
func restSurface(s *research.Service) *pipeline.Surface {
	return &pipeline.Surface{
		Name:         "rest",
		Pre:          []pipeline.Middleware{s.AuthFenceStep},
		Authenticate: s.BearerAuthenticator(pipeline.ResourceAPI),
		Steps:        s.ResearchSteps(restWire),
		Render:       s.RenderREST,
	}
}

// Route binds every operation of the research table to its REST route. Operations
// whose path ends in a literal action (":refine", ":simulate") share one route per
// template, dispatched on the suffix, because the router matches whole segments.
func Route(s *research.Service, r *router.Router) {
	s.Group(r, "", s.SignedDownloadSurface()).GET("/v1/api/exports/{job_id}/artifact", s.HandleSignedDownload)
	g := s.Group(r, "", restSurface(s))
	for _, o := range s.Ops {
		if tmpl, action := o.RESTPathAction(); action != "" {
			g.Action(o.Method, tmpl, action, o, s.RunOperation)
			continue
		}
		if o.Method == "GET" { // HEAD is a read like GET; fasthttp sends no body for it
			g.GETOp(o.Path, o, s.RunOperation)
			continue
		}
		g.HandleOp(o.Method, o.Path, o, s.RunOperation)
	}
	g.FlushActions(s.HandleNotFound)
}
