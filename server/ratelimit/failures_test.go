package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func TestAddrKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2::"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::"},
		{"2001:db8:1:3::1", "2001:db8:1:3::"},
	} {
		if got := AddrKey(netip.MustParseAddr(c.in)); got.String() != c.want {
			t.Errorf("%s: key %s, want %s", c.in, got, c.want)
		}
	}
}

// The failed-credential budget in memory: FailedAuth failures per window are counted,
// the next is refused with the wait until the oldest leaves the window and is not
// counted, an IPv6 address counts by its /64, and another address has its own budget.
func TestFailuresBudget(t *testing.T) {
	a := NewFailures(Limits{FailedAuth: 3, Window: 10 * time.Second})
	ip := netip.MustParseAddr("2001:db8:1:2::1")
	for i := range 3 {
		if wait := a.Fail(at(time.Duration(i)*time.Second), ip); wait != 0 {
			t.Fatalf("failure %d refused (wait %d s); the budget is 3", i+1, wait)
		}
	}
	// The oldest failure (at 0 s) leaves the window at 10 s: from 4 s, a 6 s wait.
	if wait := a.Fail(at(4*time.Second), netip.MustParseAddr("2001:db8:1:2::ffff")); wait != 6 {
		t.Fatalf("fourth failure in the same /64: wait %d s, want 6", wait)
	}
	if wait := a.Fail(at(4*time.Second), netip.MustParseAddr("2001:db8:1:3::1")); wait != 0 {
		t.Fatalf("another /64 refused (wait %d s)", wait)
	}
	// The refused failure was not counted: at 10 s one slot is free, and only one.
	if wait := a.Fail(at(10*time.Second), ip); wait != 0 {
		t.Fatalf("a slot freed at 10 s, refused (wait %d s)", wait)
	}
	if wait := a.Fail(at(10*time.Second), ip); wait != 1 {
		t.Fatalf("second failure at 10 s: wait %d s, want 1 (the 1 s failure leaves at 11 s)", wait)
	}
	a.Sweep(at(time.Hour))
	if wait := a.Fail(at(time.Hour), ip); wait != 0 {
		t.Fatalf("an hour on the address is still refused (wait %d s)", wait)
	}
	if off := NewFailures(Limits{Off: true, FailedAuth: 1}); off.Fail(t0, ip) != 0 || off.Fail(t0, ip) != 0 {
		t.Fatal("failures refused with limits off")
	}
}
