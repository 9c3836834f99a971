package server

import (
	"fmt"
	"interviewd/server/oauth"
	"interviewd/server/pipeline"
	"strconv"
	"strings"
	"testing"
	"time"
)

const goodRegistration = `{"client_name":"Counted","redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"none"}`

// registrationRefusals are registrations refused for different reasons: not JSON, a
// redirect URI the rules refuse, a text the rule refuses, a member of the wrong type,
// a grant not offered, a body over the limit.
var registrationRefusals = []struct {
	body   string
	status int
}{
	{`not json`, 400},
	{`{"redirect_uris":["http://evil.example/cb"]}`, 400},
	{`{"client_name":"a\u202Eb","redirect_uris":["https://app.example.com/cb"]}`, 400},
	{`{"redirect_uris":"https://app.example.com/cb"}`, 400},
	{`{"redirect_uris":["https://app.example.com/cb"],"grant_types":["password"]}`, 400},
	{`{"client_name":"` + strings.Repeat("x", oauth.MaxRegistrationBody) + `"}`, 413},
}

// wantRegistrationLimit checks the RateLimit header's two windows: registrations and
// refusals left.
func wantRegistrationLimit(t *testing.T, r response, registrations, refusals int) {
	t.Helper()
	got := r.header.Get("RateLimit")
	reg, ref, _ := strings.Cut(got, ", ")
	if !strings.HasPrefix(reg, `"registration";r=`+strconv.Itoa(registrations)+";") ||
		!strings.HasPrefix(ref, `"registration_refusals";r=`+strconv.Itoa(refusals)+";") {
		t.Fatalf("RateLimit %q, want %d registrations and %d refusals left", got, registrations, refusals)
	}
}

// TestOAuthRegistrationCountsSuccesses: only registrations that succeed spend the
// registration budget; refused ones (every kind) leave it whole and spend the
// refusals budget instead, past which refusals are 429 while good registrations still
// go through until the registration budget, at its number, is spent.
func TestOAuthRegistrationCountsSuccesses(t *testing.T) {
	limits := pipeline.DefaultRateLimits()
	limits.Registrations, limits.IP = 3, len(registrationRefusals)
	e := mustServe(t, withRateLimits(limits))
	wantPolicy := fmt.Sprintf(`"registration";q=3;w=3600, "registration_refusals";q=%d;w=60`, limits.IP)

	for i, rf := range registrationRefusals {
		r := e.do("POST", "/v1/oauth/register", "", rf.body)
		if r.status != rf.status || r.header.Get("RateLimit-Policy") != wantPolicy {
			t.Fatalf("refusal %d: %d (want %d), RateLimit-Policy %q: %s", i, r.status, rf.status, r.header.Get("RateLimit-Policy"), r.body)
		}
		wantRegistrationLimit(t, r, 3, limits.IP-i-1)
	}
	// The refusals budget is spent: a refusal is now 429, saying why it was refused too.
	r := e.do("POST", "/v1/oauth/register", "", registrationRefusals[1].body)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"error":"rate_limited"`) ||
		!strings.Contains(string(r.body), "Too many refused client registrations") || !strings.Contains(string(r.body), "loopback") {
		t.Fatalf("a refusal past the refusals budget: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	wantRegistrationLimit(t, r, 3, 0)

	// Good registrations still go through, each spending one.
	for i := range limits.Registrations {
		r := e.do("POST", "/v1/oauth/register", "", goodRegistration)
		if r.status != 201 {
			t.Fatalf("registration %d after %d refusals: %d %s", i, len(registrationRefusals)+1, r.status, r.body)
		}
		wantRegistrationLimit(t, r, limits.Registrations-i-1, 0)
	}
	r = e.do("POST", "/v1/oauth/register", "", goodRegistration)
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || retry < 1 || retry > int(oauth.RegistrationWindow.Seconds()) || !strings.Contains(string(r.body), "metadata document") {
		t.Fatalf("registration over the limit: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	wantRegistrationLimit(t, r, 0, 0)
}

// TestOAuthRegistrationDefaultLimit: by default an address registers exactly
// DefaultRateLimits().Registrations clients in an hour, whatever it was refused
// before, and an hour after the first it may register again.
func TestOAuthRegistrationDefaultLimit(t *testing.T) {
	n := pipeline.DefaultRateLimits().Registrations
	if n != 600 {
		t.Fatalf("the default registration limit is %d; docs/oauth.md and the help say 600", n)
	}
	clock := &testClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	e := mustServe(t, withRateLimits(pipeline.DefaultRateLimits()), withClock(clock))
	for i := range 20 {
		if r := e.do("POST", "/v1/oauth/register", "", registrationRefusals[i%5].body); r.status != 400 {
			t.Fatalf("refusal %d: %d %s", i, r.status, r.body)
		}
	}
	for i := range n {
		r := e.do("POST", "/v1/oauth/register", "", goodRegistration)
		if r.status != 201 {
			t.Fatalf("registration %d of %d: %d %s", i+1, n, r.status, r.body)
		}
		if i == 0 && r.header.Get("RateLimit-Policy") != `"registration";q=600;w=3600, "registration_refusals";q=60;w=60` {
			t.Fatalf("RateLimit-Policy %q", r.header.Get("RateLimit-Policy"))
		}
		clock.Advance(time.Second)
	}
	if r := e.do("POST", "/v1/oauth/register", "", goodRegistration); r.status != 429 {
		t.Fatalf("registration %d: %d %s", n+1, r.status, r.body)
	}
	clock.Advance(oauth.RegistrationWindow - time.Duration(n)*time.Second)
	if r := e.do("POST", "/v1/oauth/register", "", goodRegistration); r.status != 201 {
		t.Fatalf("an hour after the first registration: %d %s", r.status, r.body)
	}
}
