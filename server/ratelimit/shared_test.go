package ratelimit

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/kv/pgtest"
)

// sharedLimiters returns n limiters with limits, each on its own node's store, all on
// one PostgreSQL database.
func sharedLimiters(t *testing.T, n int, limits Limits) []*Limiter {
	t.Helper()
	url := pgtest.URL(t)
	out := make([]*Limiter, n)
	for i := range out {
		db, err := kv.Open(t.TempDir(), kv.Options{Store: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		if !db.Shared() {
			t.Fatal("a PostgreSQL store does not report itself shared")
		}
		out[i] = New(limits)
		out[i].ShareIn(db)
	}
	return out
}

// Nodes deciding in turn against the store decide exactly as one in-memory limiter
// does, headers included: one strict window for the credential and the organisation
// whichever node a request reaches.
func TestSharedRateLimiterMatchesOneNode(t *testing.T) {
	limits := Limits{Read: 7, Write: 3, OrgRead: 12, OrgWrite: 5, IP: 4, Window: 10 * time.Second}
	nodes := sharedLimiters(t, 3, limits)
	one := New(limits)
	rng := rand.New(rand.NewPCG(3, 4))
	now := t0
	for step := range 400 {
		now = now.Add(time.Duration(rng.IntN(600)) * time.Millisecond)
		node := nodes[step%3]
		var got, want Decision
		if rng.IntN(5) == 0 {
			ip := fmt.Sprintf("192.0.2.%d", rng.IntN(2))
			got, want = node.AdmitIP(now, ip), one.AdmitIP(now, ip)
		} else {
			cred, org, write := fmt.Sprintf("k%d", rng.IntN(3)), fmt.Sprintf("o%d", rng.IntN(2)), rng.IntN(3) == 0
			got, want = node.Admit(now, cred, org, write), one.Admit(now, cred, org, write)
		}
		if got.OK != want.OK || got.RetryAfter != want.RetryAfter ||
			string(got.AppendRateLimit(nil)) != string(want.AppendRateLimit(nil)) ||
			string(got.AppendPolicy(nil)) != string(want.AppendPolicy(nil)) {
			t.Fatalf("step %d on node %d: %+v (%s), one node: %+v (%s)", step, step%3,
				got, got.AppendRateLimit(nil), want, want.AppendRateLimit(nil))
		}
	}
}

// Many requests at once across three nodes for one credential: exactly the limit is
// admitted.
func TestSharedRateLimiterHammer(t *testing.T) {
	nodes := sharedLimiters(t, 3, Limits{Write: 20, OrgWrite: 1000})
	var admitted atomic.Int32
	var wg sync.WaitGroup
	now := time.Now()
	for i := range 90 {
		wg.Go(func() {
			if nodes[i%3].Admit(now, "key", "org", true).OK {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 20 {
		t.Fatalf("%d writes admitted across nodes, want 20", n)
	}
}

// Failed credentials from one address count against one budget whichever node they
// reach: with a budget of 5, the first 5 failures over three nodes are answered 401
// (0 here) and the next is refused with a wait, on any node; another address is
// untouched, and once the window has passed the address has room again.
func TestSharedFailedAuthBudget(t *testing.T) {
	limits := Limits{FailedAuth: 5, Window: 10 * time.Second}
	var nodes []*Failures
	for _, l := range sharedLimiters(t, 3, limits) {
		a := NewFailures(limits)
		a.ShareIn(l.Store())
		nodes = append(nodes, a)
	}
	ip, other := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.8")
	now := t0
	for i := range 5 {
		now = now.Add(100 * time.Millisecond)
		if wait := nodes[i%3].Fail(now, ip); wait != 0 {
			t.Fatalf("failure %d on node %d refused (wait %d s); the budget is 5", i+1, i%3, wait)
		}
	}
	for n, node := range nodes {
		if wait := node.Fail(now.Add(time.Millisecond), ip); wait < 1 || wait > 10 {
			t.Fatalf("sixth failure on node %d: wait %d s; want a refusal of 1 to 10 s", n, wait)
		}
	}
	if wait := nodes[1].Fail(now, other); wait != 0 {
		t.Fatalf("another address refused (wait %d s)", wait)
	}
	if wait := nodes[2].Fail(now.Add(limits.Window), ip); wait != 0 {
		t.Fatalf("a window later the address is still refused (wait %d s)", wait)
	}
}

// The app's sign-in budgets hold across nodes too, kept apart from the request limits
// in the same table, and the request limiter's sweep (a one-minute window) leaves the
// sign-in logs (a ten-minute window) alone.
func TestSharedSignInBudget(t *testing.T) {
	const signInWindow = 10 * time.Minute // the app's sign-in window (server/pipeline/signin.go)
	signIn := Limits{Window: signInWindow, Write: 3, OrgWrite: 50, Read: 50, OrgRead: 50}
	requests := sharedLimiters(t, 2, Limits{Window: time.Minute, Write: 3, OrgWrite: 50})
	var nodes []*Limiter
	for _, r := range requests {
		l := New(signIn)
		l.ShareInAs(r.Store(), "signin:")
		nodes = append(nodes, l)
	}
	now := t0
	for i := range 3 {
		now = now.Add(time.Second)
		if d := nodes[i%2].Admit(now, "ada@example.com 192.0.2.1", "192.0.2.1", true); !d.OK {
			t.Fatalf("sign-in request %d refused", i+1)
		}
	}
	// The request limiter's own logs are a different thing: the same names pass there.
	if d := requests[0].Admit(now, "ada@example.com 192.0.2.1", "192.0.2.1", true); !d.OK {
		t.Fatal("the request limiter saw the sign-in limiter's log")
	}
	later := now.Add(2 * time.Minute)
	requests[1].Sweep(later) // a minute-window sweep, two minutes on
	for n, node := range nodes {
		if d := node.Admit(later, "ada@example.com 192.0.2.1", "192.0.2.1", true); d.OK || d.RetryAfter < 1 {
			t.Fatalf("fourth sign-in request on node %d admitted (%+v); the budget of 3 per ten minutes is one for both nodes", n, d)
		}
	}
	if d := nodes[1].Admit(now.Add(signInWindow+time.Second), "ada@example.com 192.0.2.1", "192.0.2.1", true); !d.OK {
		t.Fatal("ten minutes on, the address is still refused")
	}
}
