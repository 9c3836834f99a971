package ratelimit

import (
	"context"
	"time"
)

// Rate limits shared by several nodes.
//
// On a shared store (PostgreSQL) every node decides against the same logs, kept in the
// store: the store makes the decision and records it in one statement
// (kv.DB.RateDecide) and returns the logs as they were before the request; the node
// then derives the headers from them with the very slidingLog code the in-memory
// limiter uses, so the decision and the headers are the same as on one node.

// Store is the store's side: kv.DB on a shared store.
type Store interface {
	RateDecide(ctx context.Context, keys []string, limits []int, window, now int64, record bool) ([][]int64, bool, error)
	SweepRateLogs(ctx context.Context, before int64) error
}

// sharedRateRowsKept is how long a shared log untouched is kept before a sweep drops
// it: longer than every limiter's window (the longest, sign-in's, is ten minutes).
const sharedRateRowsKept = time.Hour

// storeTimeout bounds one shared decision.
const storeTimeout = 10 * time.Second

// ShareIn makes the limiter decide against logs kept in st.
func (r *Limiter) ShareIn(st Store) { r.store = st }

// ShareInAs is ShareIn for a limiter of its own kind (the app's sign-in limits): its
// logs are kept under prefix, apart from the request limits' logs of the same names.
func (r *Limiter) ShareInAs(st Store, prefix string) { r.store, r.storePrefix = st, prefix }

// Store returns the store the limiter decides in, or nil when it decides in memory; a
// limiter of another budget that is to count across the same nodes shares in it too.
func (r *Limiter) Store() Store { return r.store }

// Shared reports whether decisions are made in a shared store (and not off): only then
// does a decision carry the request's credential check along (Store.RateDecide).
func (r *Limiter) Shared() bool { return !r.off && r.store != nil }

// logFrom makes a slidingLog of stored times (ascending).
func logFrom(ts []int64) *slidingLog { return &slidingLog{ts: ts, n: len(ts)} }

// decideShared is decide (or decideIP when org is "") over the store's logs. When
// the store cannot be reached the request is admitted with the limits' headers and no
// record: it will meet the same store, and its own error, right after.
func (r *Limiter) decideShared(ctx context.Context, now time.Time, cred, org string, write, record bool) Decision {
	cc, oc := classRead, classOrgRead
	switch {
	case org == "":
		cc = classIP
	case write:
		cc, oc = classWrite, classOrgWrite
	}
	keys := []string{r.storePrefix + rateClassNames[cc] + ":" + cred}
	limits := []int{r.limit[cc]}
	if org != "" {
		keys = append(keys, r.storePrefix+rateClassNames[oc]+":"+org)
		limits = append(limits, r.limit[oc])
	}
	t := now.UnixNano()
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	logs, admitted, err := r.store.RateDecide(ctx, keys, limits, r.window, t, record)
	if err != nil {
		logs, admitted, record = make([][]int64, len(keys)), true, false
	}
	// The headers, from the logs as they were, exactly as decide makes them.
	cl := logFrom(logs[0])
	cWait := cl.wait(t, r.limit[cc], r.window)
	var ol *slidingLog
	oWait := int64(0)
	if org != "" {
		ol = logFrom(logs[1])
		oWait = ol.wait(t, r.limit[oc], r.window)
	}
	ok := admitted
	if ok && record {
		cl.record(t, r.limit[cc])
		if ol != nil {
			ol.record(t, r.limit[oc])
		}
	}
	var d Decision
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
	return d
}
