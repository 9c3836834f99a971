package server

import (
	"interviewd/server/pipeline"
	"testing"
)

// TestSharedRegistrationBudget: two nodes on one PostgreSQL store count an address's
// registrations, and its refusals, together: what one node spent, the other sees.
func TestSharedRegistrationBudget(t *testing.T) {
	url := postgresURL(t)
	limits := pipeline.DefaultRateLimits()
	limits.Registrations, limits.IP = 4, 3
	a := mustServe(t, withStore(url), withRateLimits(limits))
	b := serveNode(t, a, url, withRateLimits(limits))
	nodes := []*testEnv{a, b}

	for i := range limits.IP {
		r := nodes[i%2].do("POST", "/v1/oauth/register", "", registrationRefusals[i].body)
		if r.status != 400 {
			t.Fatalf("refusal %d: %d %s", i, r.status, r.body)
		}
		wantRegistrationLimit(t, r, limits.Registrations, limits.IP-i-1)
	}
	if r := b.do("POST", "/v1/oauth/register", "", registrationRefusals[0].body); r.status != 429 {
		t.Fatalf("a refusal past the refusals both nodes counted: %d %s", r.status, r.body)
	}
	for i := range limits.Registrations {
		r := nodes[i%2].do("POST", "/v1/oauth/register", "", goodRegistration)
		if r.status != 201 {
			t.Fatalf("registration %d on node %d: %d %s", i+1, i%2, r.status, r.body)
		}
		wantRegistrationLimit(t, r, limits.Registrations-i-1, 0)
	}
	for n, node := range nodes {
		if r := node.do("POST", "/v1/oauth/register", "", goodRegistration); r.status != 429 || r.header.Get("Retry-After") == "" {
			t.Fatalf("registration %d on node %d: %d %s; the budget of %d is one for both nodes",
				limits.Registrations+1, n, r.status, r.body, limits.Registrations)
		}
	}
}
