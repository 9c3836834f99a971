package pipeline

import (
	"strconv"
	"time"

	"interviewd/server/ratelimit"
)

// Signing in by email is shared by the web app and the account access API: one set of
// limits holds for both, whichever a person (or a stranger) uses.

// Sign-in limits, in any rolling SignInWindow.
const (
	SignInRequestsPerClient = 5  // code requests for one email address from one client address
	SignInAttemptsPerClient = 10 // codes typed for one email address from one client address
	SignInPerAddr           = 30 // code requests, and separately code attempts, from one client address
	SignInMailPerEmail      = 20 // codes mailed to one email address, whoever asked
	SignInWindow            = 10 * time.Minute
)

// NewSignInLimits makes the sign-in limiters (SignIn, SignInMail); limits.Off turns
// them off with every other limit.
func NewSignInLimits(limits RateLimits) (signIn, signInMail *ratelimit.Limiter) {
	signIn = ratelimit.New(RateLimits{Off: limits.Off, Window: SignInWindow,
		Write: SignInRequestsPerClient, OrgWrite: SignInPerAddr, Read: SignInAttemptsPerClient, OrgRead: SignInPerAddr})
	signInMail = ratelimit.New(RateLimits{Off: limits.Off, Window: SignInWindow, IP: SignInMailPerEmail})
	return signIn, signInMail
}

// AdmitSignIn applies the sign-in limits to a code request (request true) or a code
// attempt for email from the request's client address; a refusal is a 429 page with
// Retry-After. A refused request or attempt is not counted.
func (s *Core) AdmitSignIn(r *Request, email string, request bool) error {
	now, addr := s.Now(), s.ClientIP(r.C).String()
	d := s.SignInMail.PeekIP(now, email)
	if !request || d.OK {
		d = s.SignIn.Admit(now, email+" "+addr, addr, request)
	}
	if d.OK && request {
		d = s.SignInMail.AdmitIP(now, email)
	}
	if d.OK {
		return nil
	}
	return &APIError{Status: 429, Code: "rate_limited", RetryAfter: d.RetryAfter,
		Detail: "Too many sign-in attempts. Wait " + strconv.Itoa(d.RetryAfter) + " seconds, then try again."}
}
