package server

// renderREST writes the outcome of a REST request: the rate-limit headers of the last
// admission decision, then the error in the REST shape (validation failures located
// as "body", "query" or "path" by the operation's input), a replayed output, an
// operation's own answer (an inline download), or the output as JSON.
func (s *Core) renderREST(r *request, err error) {
	c := r.c
	if r.rated {
		s.setRateHeaders(c, r.rate)
	}
	if err == nil {
		err = s.writeREST(r)
	}
	if err != nil {
		var plan *inputPlan
		if r.op != nil {
			plan = r.op.plan
		}
		s.writeRESTAPIError(c, toAPIError(err).locatedREST(plan), resourceAPI)
	}
}

// bearerAuthenticator resolves the bearer credential into r.p (under the failed
// credential limit); resource names the protected resource a 401 points at.
func (s *Core) bearerAuthenticator(resource string) authenticator {
	return func(r *request) error {
		p, err := s.authenticateLimited(r.c, resource)
		if err != nil {
			return err
		}
		r.p = p
		r.info.org = p.OrgKey
		return nil
	}
}

// resourceAPI is the REST surface's protected-resource path suffix.
const resourceAPI = "/v1/api"

// writeREST writes a request's output: a replayed output as recorded, an operation's
// own answer (an inline download), lists as a bare JSON array with the next cursor in
// X-Next-Cursor, everything else as its JSON object. It returns what kept it from
// answering, having written nothing.
func (s *Core) writeREST(r *request) error {
	c, out := r.c, r.out
	if stored, ok := out.(replayedOutput); ok {
		c.Response.Header.Set("Idempotent-Replayed", "true")
		c.SetStatusCode(r.status)
		c.SetContentType("application/json")
		c.SetBody(stored)
		return nil
	}
	if r.op != nil && r.op.restRespond != nil {
		if done, err := r.op.restRespond(c, out); done || err != nil {
			return err
		}
	}
	body := out
	next := ""
	if l, ok := out.(listResult); ok {
		body, next = l.restItems(), l.nextCursor()
	}
	raw, err := encodeOutput(body)
	if err != nil {
		return err
	}
	if next != "" {
		c.Response.Header.Set("X-Next-Cursor", next)
	}
	c.SetStatusCode(max(r.status, 200))
	c.SetContentType("application/json")
	c.SetBody(raw)
	return nil
}
