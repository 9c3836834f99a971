package server

import (
	"context"
	"time"
)

// Rate limits shared by several nodes.
//
// On a shared store (PostgreSQL) every node decides against the same logs, kept in the
// store (kv.DB.RateLogs), with the same strict sliding window and the same headers as
// the in-memory limiter: the slidingLog below is loaded from the store, decided on
// exactly as in decide, and written back, under the rows' locks.

// rateStore is the store's side: kv.DB on a shared store.
type rateStore interface {
	RateLogs(ctx context.Context, keys []string, now int64, decide func(logs [][]int64) [][]int64) error
	SweepRateLogs(ctx context.Context, before int64) error
}

// rateStoreTimeout bounds one shared decision.
const rateStoreTimeout = 10 * time.Second

// shareIn makes the limiter decide against logs kept in st.
func (r *rateLimiter) shareIn(st rateStore) { r.store = st }

// logFrom makes a slidingLog of stored times (ascending).
func logFrom(ts []int64) *slidingLog { return &slidingLog{ts: ts, n: len(ts)} }

// stored returns the log's admissions still inside the window at t, oldest first:
// older ones can no longer refuse anything.
func (s *slidingLog) stored(t, window int64) []int64 {
	out := make([]int64, 0, s.n)
	for i := range s.n {
		if v := s.at(i); t-v < window {
			out = append(out, v)
		}
	}
	return out
}

// decideShared is decide (or decideIP when org is "") over the store's logs. When
// the store cannot be reached the request is admitted with the limits' headers and no
// record: it will meet the same store, and its own error, right after.
func (r *rateLimiter) decideShared(now time.Time, cred, org string, write, record bool) rateDecision {
	cc, oc := classRead, classOrgRead
	switch {
	case org == "":
		cc = classIP
	case write:
		cc, oc = classWrite, classOrgWrite
	}
	keys := []string{rateClassNames[cc] + ":" + cred}
	if org != "" {
		keys = append(keys, rateClassNames[oc]+":"+org)
	}
	t := now.UnixNano()
	var d rateDecision
	decide := func(logs [][]int64) [][]int64 {
		cl := logFrom(logs[0])
		cWait := cl.wait(t, r.limit[cc], r.window)
		oWait := int64(0)
		var ol *slidingLog
		if org != "" {
			ol = logFrom(logs[1])
			oWait = ol.wait(t, r.limit[oc], r.window)
		}
		ok := cWait == 0 && oWait == 0
		if ok && record {
			cl.record(t, r.limit[cc])
			if ol != nil {
				ol.record(t, r.limit[oc])
			}
		}
		d = rateDecision{}
		d.policies[0] = r.policy(cc, cl, t)
		d.npolicies = 1
		binding := 0
		if ol != nil {
			d.policies[1] = r.policy(oc, ol, t)
			d.npolicies = 2
			switch {
			case !ok && oWait > cWait:
				binding = 1
			case ok && d.policies[1].remaining < d.policies[0].remaining:
				binding = 1
			}
		}
		d.settle(ok, max(cWait, oWait), binding)
		out := [][]int64{cl.stored(t, r.window)}
		if ol != nil {
			out = append(out, ol.stored(t, r.window))
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), rateStoreTimeout)
	defer cancel()
	if err := r.store.RateLogs(ctx, keys, t, decide); err != nil {
		d = rateDecision{}
		empty := make([][]int64, len(keys))
		record = false
		decide(empty)
	}
	return d
}
