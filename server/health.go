package server

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"interviewd/server/pipeline"
)

// Health probes for load balancers and orchestrators: unauthenticated, outside the
// operations table (so no rate limit) and logged at debug only.
//
//	GET /healthz  liveness: the process answers → 200 {"status":"ok"}
//	GET /readyz   readiness: the database is open, the blob store answers and the job
//	              runner takes work → 200
//	              {"status":"ready"}; otherwise 503 {"status":"unavailable","reason":…}
func (s *Server) routeHealth(r *router.Router) {
	for _, m := range []string{"GET", "HEAD"} {
		pipeline.HandlePlain(r, m, "/healthz", s.handleHealthz)
		pipeline.HandlePlain(r, m, "/readyz", s.handleReadyz)
	}
}

func (s *Server) handleHealthz(c *fasthttp.RequestCtx) {
	pipeline.InfoOf(c).Quiet = true
	writeHealth(c, 200, `{"status":"ok"}`)
}

func (s *Server) handleReadyz(c *fasthttp.RequestCtx) {
	pipeline.InfoOf(c).Quiet = true
	if reason := s.notReady(); reason != "" {
		writeHealth(c, 503, `{"status":"unavailable","reason":"`+reason+`"}`)
		return
	}
	writeHealth(c, 200, `{"status":"ready"}`)
}

// notReady names what is not ready, or returns "".
func (s *Server) notReady() string {
	if s.Ctx.Err() != nil {
		return "shutting_down"
	}
	if _, err := s.DB.Empty(s.Ctx); err != nil { // a read transaction: the file is open and readable
		return "database_unavailable"
	}
	if err := s.DB.Blobs().Ping(s.Ctx); err != nil { // the bucket (or DATA/blobs) answers
		return "storage_unavailable"
	}
	if s.Jobs == nil || !s.Jobs.Running() {
		return "jobs_stopped"
	}
	return ""
}

func writeHealth(c *fasthttp.RequestCtx, status int, body string) {
	c.SetStatusCode(status)
	c.SetContentType("application/json")
	c.Response.Header.Set("Cache-Control", "no-store")
	c.SetBodyString(body)
}
