package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits configures request admission: how many requests each credential and each
// organisation may make in any rolling Window, reads and writes counted apart, and how
// many requests one client IP address may make to the unauthenticated endpoints. The
// zero value is not "off": a non-positive limit or window means the default (see
// New); set Off to admit everything.
type Limits struct {
	Off      bool
	Read     int // per credential, GET and HEAD
	Write    int // per credential, every other method
	OrgRead  int // per organisation, all its credentials together
	OrgWrite int
	IP       int // per client IP address on unauthenticated endpoints
	// FailedAuth is how many failed credentials one client address may present; see
	// failures.go.
	FailedAuth int
	// Registrations is how many OAuth clients one client address may register in any
	// rolling hour (not Window): only registrations that succeed count; see
	// server/oauth/register_limits.go.
	Registrations int
	Window        time.Duration
}

// Defaults returns the limits of the API contract: per credential 120 reads and
// 20 writes, per organisation 600 and 60, per client IP 60, and 30 failed credentials
// per client IP, in any rolling minute; and 600 OAuth client registrations per client
// IP in any rolling hour (server/oauth/register_limits.go says why so many).
func Defaults() Limits {
	return Limits{Read: 120, Write: 20, OrgRead: 600, OrgWrite: 60, IP: 60, FailedAuth: 30, Registrations: 600, Window: time.Minute}
}

// maxLimit bounds a configured limit: each (credential, class) keeps one timestamp
// per admitted request in the window, so an absurd limit would be a memory bill, and a
// limit this high is "off" in all but name.
const maxLimit = 100_000_000

// Parse parses a rate limit setting: "default" (or empty), "off", or a comma
// separated list of name=value overrides of the defaults, for example
// "read=240,org_read=1200". Names are read, write, org_read, org_write, ip,
// failed_auth (per Window) and registrations (per hour); values are whole numbers from
// 1 to 100000000. On error it returns the defaults and an error naming
// the offending item.
func Parse(s string) (Limits, error) {
	l := Defaults()
	s = strings.TrimSpace(s)
	switch s {
	case "", "default":
		return l, nil
	case "off":
		l.Off = true
		return l, nil
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		name, value, ok := strings.Cut(item, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return Defaults(), fmt.Errorf("rate limits: item %q is not name=value (or the whole setting \"default\" or \"off\")", item)
		}
		var field *int
		switch name {
		case "read":
			field = &l.Read
		case "write":
			field = &l.Write
		case "org_read":
			field = &l.OrgRead
		case "org_write":
			field = &l.OrgWrite
		case "ip":
			field = &l.IP
		case "failed_auth":
			field = &l.FailedAuth
		case "registrations":
			field = &l.Registrations
		default:
			return Defaults(), fmt.Errorf("rate limits: unknown limit %q (want read, write, org_read, org_write, ip, failed_auth or registrations)", name)
		}
		if seen[name] {
			return Defaults(), fmt.Errorf("rate limits: %q is given more than once", name)
		}
		seen[name] = true
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > maxLimit {
			return Defaults(), fmt.Errorf("rate limits: %s=%q is not a whole number from 1 to %d", name, value, maxLimit)
		}
		*field = n
	}
	return l, nil
}

// rateClass names one counted window kind. The names double as the policy identifiers
// of the RateLimit headers and as the names Parse accepts.
type rateClass uint8

const (
	classRead rateClass = iota
	classWrite
	classOrgRead
	classOrgWrite
	classIP
	numRateClasses
)

var rateClassNames = [numRateClasses]string{"read", "write", "org_read", "org_write", "ip"}

type rateKey struct {
	class rateClass
	id    string
}

// slidingLog holds the timestamps (Unix nanoseconds, ascending) of the most recent
// admissions of one key, at most limit of them, in a ring. A request is admitted iff fewer
// than limit were admitted in the window before it, that is iff the oldest of the last
// limit admissions is at least a window old: a strict sliding window, with no fixed minute
// boundary at which a second burst could follow the first. The ring grows on demand up to
// limit, so a quiet credential costs a few words, and never shrinks; once grown, recording
// allocates nothing.
type slidingLog struct {
	ts   []int64
	head int // index of the oldest entry
	n    int // entries in use
}

func (s *slidingLog) at(i int) int64 { return s.ts[(s.head+i)%len(s.ts)] }

// clamp returns t, or the newest recorded time when t is earlier. Callers read the clock
// before taking the lock, so two requests can arrive out of order by a hair; treating the
// later-locked one as no earlier keeps the ring sorted, which the checks rely on.
func (s *slidingLog) clamp(t int64) int64 {
	if s.n > 0 {
		if newest := s.at(s.n - 1); t < newest {
			return newest
		}
	}
	return t
}

// wait returns 0 when a request at t fits, otherwise the nanoseconds until one will.
func (s *slidingLog) wait(t int64, limit int, window int64) int64 {
	t = s.clamp(t)
	if s.n < limit {
		return 0
	}
	if d := s.ts[s.head] + window - t; d > 0 {
		return d
	}
	return 0
}

// record notes an admission at t; the caller has checked wait.
func (s *slidingLog) record(t int64, limit int) {
	t = s.clamp(t)
	if s.n >= limit {
		s.ts[s.head] = t
		s.head = (s.head + 1) % len(s.ts)
		return
	}
	if s.n == len(s.ts) {
		grown := make([]int64, min(max(2*len(s.ts), 4), limit))
		for i := range s.n {
			grown[i] = s.at(i)
		}
		s.ts, s.head = grown, 0
	}
	s.ts[(s.head+s.n)%len(s.ts)] = t
	s.n++
}

// state returns how many more requests fit at t and the nanoseconds until the oldest
// admission still inside the window leaves it (0 when none is inside).
func (s *slidingLog) state(t int64, limit int, window int64) (remaining int, reset int64) {
	t = s.clamp(t)
	// First entry still inside the window: entries are ascending, so binary search.
	lo, hi := 0, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t-s.at(mid) >= window {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	live := s.n - lo
	if live == 0 {
		return limit, 0
	}
	return max(limit-live, 0), s.at(lo) + window - t
}

const rateShards = 64

type rateShard struct {
	mu   sync.Mutex
	logs map[rateKey]*slidingLog
	_    [48]byte // keep neighbouring shard locks off one cache line
}

// Limiter admits requests under Limits. It is safe for concurrent use; keys are
// spread over sharded mutexes so credentials of different organisations rarely contend.
type Limiter struct {
	off         bool
	limit       [numRateClasses]int
	window      int64 // nanoseconds
	windowSec   int   // for the headers, rounded up
	seed        maphash.Seed
	shards      [rateShards]rateShard
	store       Store  // set on a shared store: the logs live there (shared.go)
	storePrefix string // ShareInAs: what this limiter's keys start with in the store
}

// New returns a limiter for l. A non-positive limit or window takes its
// default, so a partly filled Limits never refuses everything by accident.
func New(l Limits) *Limiter {
	d := Defaults()
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	if l.Window <= 0 {
		l.Window = d.Window
	}
	r := &Limiter{
		off:       l.Off,
		window:    int64(l.Window),
		windowSec: int((l.Window + time.Second - 1) / time.Second),
		seed:      maphash.MakeSeed(),
	}
	r.limit[classRead] = pick(l.Read, d.Read)
	r.limit[classWrite] = pick(l.Write, d.Write)
	r.limit[classOrgRead] = pick(l.OrgRead, d.OrgRead)
	r.limit[classOrgWrite] = pick(l.OrgWrite, d.OrgWrite)
	r.limit[classIP] = pick(l.IP, d.IP)
	for i := range r.shards {
		r.shards[i].logs = map[rateKey]*slidingLog{}
	}
	return r
}

func (r *Limiter) shardOf(id string) int {
	return int(maphash.String(r.seed, id) % rateShards)
}

// logOf returns the log of k, creating it; the caller holds the shard's lock.
func (sh *rateShard) logOf(k rateKey) *slidingLog {
	l, ok := sh.logs[k]
	if !ok {
		l = &slidingLog{}
		sh.logs[k] = l
	}
	return l
}

// ratePolicy is one window's view for the response headers.
type ratePolicy struct {
	name      string
	quota     int
	window    int // seconds
	remaining int
	reset     int // seconds
}

// Decision is the outcome of one admission. Limit, Remaining and Reset describe the
// binding window: the one that refused the request, or, when admitted, the one with the
// fewest requests left (the credential's on a tie).
type Decision struct {
	OK         bool
	RetryAfter int // whole seconds, at least 1, when !OK
	Limit      int
	Remaining  int
	Reset      int // seconds until one more slot frees in the binding window

	policies  [2]ratePolicy // credential (or IP) first, then organisation
	npolicies int
}

// Admit decides one request of credential cred in organisation org at now; write is true
// for every method but GET and HEAD. The request is admitted only when both the
// credential's and the organisation's window for its class have room, and is then
// recorded in both under their locks together; a refused request records nothing.
func (r *Limiter) Admit(now time.Time, cred, org string, write bool) Decision {
	return r.decide(context.Background(), now, cred, org, write, true)
}

// AdmitIn is Admit for a request running under ctx: on a shared store the request's
// credential check (kv's fence) rides on the decision's statement.
func (r *Limiter) AdmitIn(ctx context.Context, now time.Time, cred, org string, write bool) Decision {
	return r.decide(ctx, now, cred, org, write, true)
}

// Peek is Admit without recording anything: the state a refused-for-another-reason
// response (a 403) reports in its RateLimit headers.
func (r *Limiter) Peek(now time.Time, cred, org string, write bool) Decision {
	return r.decide(context.Background(), now, cred, org, write, false)
}

func (r *Limiter) decide(ctx context.Context, now time.Time, cred, org string, write, record bool) Decision {
	if r.off {
		return Decision{OK: true}
	}
	if r.store != nil {
		return r.decideShared(ctx, now, cred, org, write, record)
	}
	cc, oc := classRead, classOrgRead
	if write {
		cc, oc = classWrite, classOrgWrite
	}
	t := now.UnixNano()
	si, oi := r.shardOf(cred), r.shardOf(org)
	first, second := min(si, oi), max(si, oi)
	r.shards[first].mu.Lock()
	if second != first {
		r.shards[second].mu.Lock()
	}
	cl := r.shards[si].logOf(rateKey{cc, cred})
	ol := r.shards[oi].logOf(rateKey{oc, org})
	cWait := cl.wait(t, r.limit[cc], r.window)
	oWait := ol.wait(t, r.limit[oc], r.window)
	ok := cWait == 0 && oWait == 0
	if ok && record {
		cl.record(t, r.limit[cc])
		ol.record(t, r.limit[oc])
	}
	var d Decision
	d.policies[0] = r.policy(cc, cl, t)
	d.policies[1] = r.policy(oc, ol, t)
	d.npolicies = 2
	if second != first {
		r.shards[second].mu.Unlock()
	}
	r.shards[first].mu.Unlock()

	binding := 0
	switch {
	case !ok && oWait > cWait:
		binding = 1
	case ok && d.policies[1].remaining < d.policies[0].remaining:
		binding = 1
	}
	d.settle(ok, max(cWait, oWait), binding)
	return d
}

// AdmitIP decides one request from client address ip to an unauthenticated endpoint at
// now, against the per-IP limit; like Admit, a refused request records nothing.
func (r *Limiter) AdmitIP(now time.Time, ip string) Decision {
	return r.decideIP(now, ip, true)
}

// PeekIP is AdmitIP without recording anything.
func (r *Limiter) PeekIP(now time.Time, ip string) Decision {
	return r.decideIP(now, ip, false)
}

func (r *Limiter) decideIP(now time.Time, ip string, record bool) Decision {
	if r.off {
		return Decision{OK: true}
	}
	if r.store != nil {
		return r.decideShared(context.Background(), now, ip, "", false, record)
	}
	t := now.UnixNano()
	sh := &r.shards[r.shardOf(ip)]
	sh.mu.Lock()
	l := sh.logOf(rateKey{classIP, ip})
	wait := l.wait(t, r.limit[classIP], r.window)
	ok := wait == 0
	if ok && record {
		l.record(t, r.limit[classIP])
	}
	var d Decision
	d.policies[0] = r.policy(classIP, l, t)
	d.npolicies = 1
	sh.mu.Unlock()
	d.settle(ok, wait, 0)
	return d
}

func (r *Limiter) policy(c rateClass, l *slidingLog, t int64) ratePolicy {
	remaining, reset := l.state(t, r.limit[c], r.window)
	return ratePolicy{
		name:      rateClassNames[c],
		quota:     r.limit[c],
		window:    r.windowSec,
		remaining: remaining,
		reset:     ceilSeconds(reset),
	}
}

func (d *Decision) settle(ok bool, wait int64, binding int) {
	p := d.policies[binding]
	d.OK = ok
	d.Limit, d.Remaining, d.Reset = p.quota, p.remaining, p.reset
	if !ok {
		d.RetryAfter = max(ceilSeconds(wait), 1)
		d.Remaining = 0
		d.Reset = d.RetryAfter
	}
}

func ceilSeconds(ns int64) int {
	if ns <= 0 {
		return 0
	}
	return int((ns + int64(time.Second) - 1) / int64(time.Second))
}

// Pair is the decision of two one-window budgets that answer one request together, as
// its headers show it: first's window, then second's, each under the name given, with
// first's outcome and numbers. With limits off (either has no window) it is an admission
// without headers.
func Pair(first Decision, firstName string, second Decision, secondName string) Decision {
	if first.npolicies == 0 || second.npolicies == 0 {
		return Decision{OK: true}
	}
	d := first
	d.policies[0].name = firstName
	d.policies[1] = second.policies[0]
	d.policies[1].name = secondName
	d.npolicies = 2
	return d
}

// Sweep drops the logs of keys with no admission inside the window at now, so memory
// follows the active credentials, organisations and addresses rather than every one
// ever seen. A dropped key starts afresh, which is exact: nothing of it was live.
func (r *Limiter) Sweep(now time.Time) {
	t := now.UnixNano()
	if r.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		// The table is shared by limiters of different windows (requests: a minute;
		// sign-in: ten): a row is dropped only once untouched for longer than any of
		// them, so no limiter's sweep empties another's window.
		_ = r.store.SweepRateLogs(ctx, t-max(r.window, int64(sharedRateRowsKept)))
		return
	}
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		for k, l := range sh.logs {
			if l.n == 0 || t-l.at(l.n-1) >= r.window {
				delete(sh.logs, k)
			}
		}
		sh.mu.Unlock()
	}
}

// AppendPolicy appends the RateLimit-Policy field value (IETF httpapi ratelimit-headers
// draft, a Structured Fields list): one item per window that applied to the request,
// credential first, e.g. `"read";q=120;w=60, "org_read";q=600;w=60`. It appends nothing
// when limits are off; callers then omit the header.
func (d Decision) AppendPolicy(dst []byte) []byte {
	for i := range d.npolicies {
		p := &d.policies[i]
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendPolicyName(dst, p.name)
		dst = append(dst, ";q="...)
		dst = strconv.AppendInt(dst, int64(p.quota), 10)
		dst = append(dst, ";w="...)
		dst = strconv.AppendInt(dst, int64(p.window), 10)
	}
	return dst
}

// AppendRateLimit appends the RateLimit field value: for each window of AppendPolicy, the
// requests left (r) and the seconds until one more slot frees (t), e.g.
// `"read";r=57;t=12, "org_read";r=512;t=3`. It appends nothing when limits are off.
func (d Decision) AppendRateLimit(dst []byte) []byte {
	for i := range d.npolicies {
		p := &d.policies[i]
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendPolicyName(dst, p.name)
		dst = append(dst, ";r="...)
		dst = strconv.AppendInt(dst, int64(p.remaining), 10)
		dst = append(dst, ";t="...)
		dst = strconv.AppendInt(dst, int64(p.reset), 10)
	}
	return dst
}

// appendPolicyName appends a policy identifier as a Structured Fields String. Names come
// from rateClassNames or are the ones Pair is given (lower-case words), which need no
// escaping.
func appendPolicyName(dst []byte, name string) []byte {
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"')
}
