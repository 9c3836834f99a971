package server

import (
	"fmt"
	"interviewd/server/oauth"
	"interviewd/server/pipeline"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthRegistrationBudget: client registration has a budget of its own per client
// address, apart from the token and revocation endpoints': a caller that used up the
// token endpoint's may still register, and registration's RateLimit headers describe
// registration's budget, not the other one.
func TestOAuthRegistrationBudget(t *testing.T) {
	limits := pipeline.DefaultRateLimits()
	limits.Registrations = 5
	e := mustServe(t, withRateLimits(limits))
	const body = `{"client_name":"Budget tool","redirect_uris":["http://127.0.0.1:19299/cb"],"token_endpoint_auth_method":"none"}`
	regPolicy := fmt.Sprintf(`"registration";q=%d;w=%d, "registration_refusals";q=%d;w=%d`, limits.Registrations,
		int(oauth.RegistrationWindow.Seconds()), limits.IP, int(limits.Window.Seconds()))
	register := func(t *testing.T, want int) response {
		t.Helper()
		r := e.do("POST", "/v1/oauth/register", "", body)
		if r.status != want {
			t.Fatalf("register: %d, want %d: %s", r.status, want, r.body)
		}
		return r
	}

	r := register(t, 201)
	if got := r.header.Get("RateLimit-Policy"); got != regPolicy {
		t.Fatalf("registration RateLimit-Policy %q, want %q", got, regPolicy)
	}
	if got, want := r.header.Get("RateLimit"), fmt.Sprintf(`"registration";r=%d;`, limits.Registrations-1); !strings.HasPrefix(got, want) {
		t.Fatalf("registration RateLimit %q, want %s…", got, want)
	}

	// Use up the token endpoint's budget (each request a refused grant).
	form := url.Values{"grant_type": {"authorization_code"}, "code": {"svco_nothing"}, "client_id": {"svcc_nothing"}}.Encode()
	tokenPolicy := fmt.Sprintf(`"ip";q=%d;w=%d`, limits.IP, int(limits.Window.Seconds()))
	limited := false
	for i := 0; i <= limits.IP && !limited; i++ {
		r := e.do("POST", "/v1/oauth/token", "", form, "Content-Type", "application/x-www-form-urlencoded")
		switch {
		case r.status == 429:
			limited = true
		case r.header.Get("RateLimit-Policy") != tokenPolicy:
			t.Fatalf("token RateLimit-Policy %q, want %q", r.header.Get("RateLimit-Policy"), tokenPolicy)
		}
	}
	if !limited {
		t.Fatalf("the token endpoint admitted more than %d requests", limits.IP)
	}

	// Registration is still open, and counts only registrations.
	r = register(t, 201)
	if got, want := r.header.Get("RateLimit"), fmt.Sprintf(`"registration";r=%d;`, limits.Registrations-2); !strings.HasPrefix(got, want) {
		t.Fatalf("registration RateLimit %q after the token budget ran out, want %s…", got, want)
	}
	for i := 2; i < limits.Registrations; i++ {
		register(t, 201)
	}
	r = register(t, 429)
	if !strings.Contains(string(r.body), `"error":"rate_limited"`) || r.header.Get("Retry-After") == "" ||
		r.header.Get("RateLimit-Policy") != regPolicy {
		t.Fatalf("over the registration budget: %q %q %s", r.header.Get("Retry-After"), r.header.Get("RateLimit-Policy"), r.body)
	}
}

// TestOAuthBodyLimitsNamed: a body over an OAuth endpoint's limit is a 413 whose
// description names that endpoint's limit.
func TestOAuthBodyLimitsNamed(t *testing.T) {
	e := mustServe(t)
	for _, tc := range []struct {
		name, path, contentType string
		limit                   int
		want                    string
	}{
		{"ErrRegistration", "/v1/oauth/register", "application/json", oauth.MaxRegistrationBody, "32 KiB"},
		{"ErrToken", "/v1/oauth/token", "application/x-www-form-urlencoded", oauth.MaxTokenForm, "16 KiB"},
		{"ErrRevoke", "/v1/oauth/revoke", "application/x-www-form-urlencoded", oauth.MaxTokenForm, "16 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "x=" + strings.Repeat("a", tc.limit)
			r := e.do("POST", tc.path, "", body, "Content-Type", tc.contentType)
			if r.status != 413 || !strings.Contains(string(r.body), `"error":"invalid_request"`) ||
				!strings.Contains(string(r.body), tc.want) || strings.Contains(string(r.body), "MiB") {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}
