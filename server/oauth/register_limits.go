package oauth

import (
	"time"

	"interviewd/server/authz"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
)

// Client registration's limits, per client address, in two budgets:
//
//   - registrations: RateLimits.Registrations (600 by default) successful registrations
//     in any rolling hour. Only a registration that passed every check and is about to
//     be stored spends it, so a client that gets its metadata wrong a few times does not
//     use up the address's allowance. The number is sized for hosted connectors:
//     ChatGPT and Claude register from their vendors' few addresses, one client per
//     person who adds the server, so every tenant of a busy server shares one budget.
//     600 an hour is ten a minute on average, or a whole organisation of a few hundred
//     people connecting in one sitting with room left for everyone else behind the same
//     address; what it still bounds is the store: one address can add at most 14,400
//     client records a day (a few MB). Clients that publish a client ID metadata
//     document (authz/metadata.go) never register and spend nothing.
//   - refusals: a refused registration (bad JSON, a rule broken, a body too large, over
//     the first budget) is counted apart, against the request limiter's per-address
//     class (RateLimits.IP, 60 a minute by default) under its own key; past it,
//     refusals are answered 429 with Retry-After, so a client looping on bad metadata
//     is told to back off. Neither the first budget nor the token endpoint's is touched,
//     and a refusal costs no more than decoding a body of at most 32 KiB and two rate
//     decisions (its count, and the other budget's state for the headers): nothing is
//     stored.
//
// On a shared store both budgets are kept there (ratelimit.Store), so every node
// counts an address's registrations together. The RateLimit headers of every
// registration response describe both, "registration" first.

// RegistrationWindow is the registration budget's window.
const RegistrationWindow = time.Hour

// Policy names of the two budgets in RateLimit-Policy and RateLimit.
const (
	registrationPolicy         = "registration"
	registrationRefusalsPolicy = "registration_refusals"
)

// Keys of an address's two budgets; the refusals' live in the request limiter, beside
// the token endpoint's "oauth <addr>".
const (
	registerKey        = "register "
	registerRefusedKey = "register_refused "
)

// newRegistrationLimiter returns the limiter of successful registrations for l.
func newRegistrationLimiter(l pipeline.RateLimits) *ratelimit.Limiter {
	n := l.Registrations
	if n <= 0 {
		n = ratelimit.Defaults().Registrations
	}
	return ratelimit.New(ratelimit.Limits{Off: l.Off, Window: RegistrationWindow, IP: n})
}

// registerAdmit counts a refused registration against the address's refusals budget,
// and once that is spent answers refusals 429 instead, as failed credentials are
// (ratelimit.Failures): only refusals are counted and only refusals are refused, so a
// good registration still goes through from an address some broken client is looping
// on, which matters most on the vendors' addresses all their tenants share. It sets the
// headers of both budgets. The registration budget itself is spent by the handler
// (spendRegistration), once the registration is known good.
func (s *AuthServer) registerAdmit(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		err := next(r)
		now := s.Now()
		addr := ratelimit.AddrKey(s.ClientIP(r.C)).String()
		var oe *authz.OAuthError
		if err != nil {
			oe = toOAuthError(err)
		}
		var refusals ratelimit.Decision
		if oe != nil && oe.Status >= 400 && oe.Status < 500 {
			refusals = s.Limiter.AdmitIP(now, registerRefusedKey+addr)
			if !refusals.OK {
				err = &authz.OAuthError{Status: 429, Code: "rate_limited", RetryAfter: max(refusals.RetryAfter, oe.RetryAfter),
					Description: "Too many refused client registrations from your address; retry after the number of seconds in Retry-After. " +
						"This one was refused too: " + oe.Description}
			}
		} else {
			refusals = s.Limiter.PeekIP(now, registerRefusedKey+addr)
		}
		reg := r.Rate
		if !r.Rated { // refused before it reached the registration budget
			reg = s.Register.PeekIP(now, registerKey+addr)
		}
		s.SetRateHeaders(r.C, registrationHeaders(reg, refusals))
		return err
	}
}

// spendRegistration spends one of the address's registrations, or refuses with 429
// when the hour's are spent; the decision is kept on r for the headers. Called once
// the registration is known good and only its storing is left, so only registrations
// that succeed are counted (one the store then fails still spent its place).
func (s *AuthServer) spendRegistration(r *pipeline.Request) error {
	d := s.Register.AdmitIP(s.Now(), registerKey+ratelimit.AddrKey(s.ClientIP(r.C)).String())
	r.Rate, r.Rated = d, true
	if !d.OK {
		return &authz.OAuthError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
			Description: "Too many client registrations from your address this hour; retry after the number of seconds in Retry-After, " +
				"or identify the client by a client ID metadata document instead of registering."}
	}
	return nil
}

// registrationHeaders is the decision the headers show: the registration budget's
// window, then the refusals'. With limits off there is neither.
func registrationHeaders(reg, refusals ratelimit.Decision) ratelimit.Decision {
	return ratelimit.Pair(reg, registrationPolicy, refusals, registrationRefusalsPolicy)
}
