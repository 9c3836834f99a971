package pipeline

// RenderREST writes the outcome of a REST request: the rate-limit headers of the last
// admission decision, then the error in the REST shape (validation failures located
// as "body", "query" or "path" by the operation's input), a replayed output, an
// operation's own answer (an inline download), or the output as JSON.
func (s *Core) RenderREST(r *Request, err error) {
	c := r.C
	if r.Rated {
		s.SetRateHeaders(c, r.Rate)
	}
	if err == nil {
		err = s.writeREST(r)
	}
	if err != nil {
		var plan *InputPlan
		if r.Op != nil {
			plan = r.Op.Plan
		}
		s.writeRESTAPIError(c, ToAPIError(err).LocatedREST(plan), ResourceAPI)
	}
}

// BearerAuthenticator resolves the bearer credential into r.p (under the failed
// credential limit); resource names the protected resource a 401 points at.
func (s *Core) BearerAuthenticator(resource string) authenticator {
	return func(r *Request) error {
		p, err := s.authenticateLimited(r.C, resource)
		if err != nil {
			return err
		}
		r.P = p
		r.Info.Org = p.OrgKey
		return nil
	}
}

// ResourceAPI is the REST surface's protected-resource path suffix.
const ResourceAPI = "/v1/api"

// writeREST writes a request's output: a replayed output as recorded, an operation's
// own answer (an inline download), lists as a bare JSON array with the next cursor in
// X-Next-Cursor, everything else as its JSON object. It returns what kept it from
// answering, having written nothing.
func (s *Core) writeREST(r *Request) error {
	c, out := r.C, r.Out
	if stored, ok := out.(ReplayedOutput); ok {
		c.Response.Header.Set("Idempotent-Replayed", "true")
		c.SetStatusCode(r.Status)
		c.SetContentType("application/json")
		c.SetBody(stored)
		return nil
	}
	if r.Op != nil && r.Op.RESTRespond != nil {
		if done, err := r.Op.RESTRespond(c, out); done || err != nil {
			return err
		}
	}
	body := out
	next := ""
	if l, ok := out.(ListResult); ok {
		body, next = l.RESTItems(), l.PageCursor()
	}
	raw, err := EncodeOutput(body)
	if err != nil {
		return err
	}
	if next != "" {
		c.Response.Header.Set("X-Next-Cursor", next)
	}
	c.SetStatusCode(max(r.Status, 200))
	c.SetContentType("application/json")
	c.SetBody(raw)
	return nil
}
