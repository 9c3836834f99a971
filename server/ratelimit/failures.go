package ratelimit

import (
	"context"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// Failed authentication is limited per client address: the first FailedAuth failures in
// any rolling window are answered 401 as usual, later ones 429 rate_limited with
// Retry-After, until the window has room again. Only failures are counted and only
// failures are refused: a valid credential is always let through, even from an address
// over its budget. Refusing every request from such an address would let anyone who
// shares it (an office NAT, a mobile carrier, the same proxy) lock a real key out by
// sending wrong ones, and it would buy nothing: a key is 32 random bytes, which no
// number of guesses finds. What the limit does is stop a stream of wrong keys from
// being answered as if it were ordinary traffic, and make a client that loops on a
// revoked key back off. Requests without any credential are not failures.

// Failures counts failed credentials per client address.
type Failures struct {
	off    bool
	limit  int
	window int64
	seed   maphash.Seed
	shards [rateShards]authShard
	// store, on a store shared by several nodes, keeps the failures instead of shards,
	// so an address's budget is one across the nodes (shared.go).
	store Store
}

type authShard struct {
	mu   sync.Mutex
	logs map[netip.Addr]*slidingLog
}

// NewFailures returns the failed-credential budget of l (FailedAuth per Window).
func NewFailures(l Limits) *Failures {
	a := &Failures{off: l.Off, limit: l.FailedAuth, window: int64(l.Window), seed: maphash.MakeSeed()}
	if a.limit <= 0 {
		a.limit = Defaults().FailedAuth
	}
	if a.window <= 0 {
		a.window = int64(Defaults().Window)
	}
	for i := range a.shards {
		a.shards[i].logs = map[netip.Addr]*slidingLog{}
	}
	return a
}

// ShareIn makes the budget count in st, so an address's failures count on every node.
func (a *Failures) ShareIn(st Store) { a.store = st }

func (a *Failures) shard(ip netip.Addr) *authShard {
	b := ip.As16()
	return &a.shards[maphash.Bytes(a.seed, b[:])%rateShards]
}

// Fail notes a failed credential from ip at now and returns 0 when it is to be answered
// 401, or the whole seconds to wait when the address is over its budget (the failure
// is then refused and not counted).
func (a *Failures) Fail(now time.Time, ip netip.Addr) int {
	if a.off {
		return 0
	}
	ip = AddrKey(ip)
	t := now.UnixNano()
	if a.store != nil {
		return a.failShared(t, ip)
	}
	sh := a.shard(ip)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.logs[ip]
	if l == nil {
		l = &slidingLog{}
		sh.logs[ip] = l
	}
	if wait := l.wait(t, a.limit, a.window); wait > 0 {
		return max(ceilSeconds(wait), 1)
	}
	l.record(t, a.limit)
	return 0
}

// failShared is Fail against the store's log of the address: one decision and its
// record in one statement, as the shared request limits are. A store that cannot be
// reached refuses nothing here: the request already failed, and is answered 401.
func (a *Failures) failShared(t int64, ip netip.Addr) int {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	logs, admitted, err := a.store.RateDecide(ctx, []string{"failed_auth:" + ip.String()}, []int{a.limit}, a.window, t, true)
	if err != nil || admitted {
		return 0
	}
	return max(ceilSeconds(logFrom(logs[0]).wait(t, a.limit, a.window)), 1)
}

// Sweep forgets addresses with no failure inside the window.
func (a *Failures) Sweep(now time.Time) {
	t := now.UnixNano()
	for i := range a.shards {
		sh := &a.shards[i]
		sh.mu.Lock()
		for k, l := range sh.logs {
			if l.n == 0 || t-l.at(l.n-1) >= a.window {
				delete(sh.logs, k)
			}
		}
		sh.mu.Unlock()
	}
}

// AddrKey is what a per-address limit counts against: an IPv4 address itself, an
// IPv6 address by its /64. One IPv6 subscriber (a home line, a VPS, a phone) is given a
// whole /64 and picks any address in it at will, so counting single IPv6 addresses
// would give them unlimited budgets. IPv4-mapped addresses count as the IPv4 address.
func AddrKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().Addr()
	}
	return a
}
