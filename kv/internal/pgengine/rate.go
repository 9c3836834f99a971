package pgengine

import (
	"context"
	"errors"
)

// The rate-limit logs shared by the nodes (the functions are in rate_sql.go, installed
// by the schema): one statement per decision, so concurrent requests for one key queue
// only for the statement, never for a round trip to a node.

// DecideRate makes one strict sliding-window decision in one statement
// (interviewd_rate_decide) for key k1 with limit l1 and, unless k2 is nil, k2 with l2:
// see rateDecideSQL. A check due under ctx (fence.go) rides on it: a request whose
// check fails is neither decided nor recorded. It returns both logs as they were before
// the request (ts2 empty without k2) and whether it was admitted.
func (e *Engine) DecideRate(ctx context.Context, k1 string, l1 int, k2 *string, l2 int, window, now int64, record bool) (ts1, ts2 []int64, admitted bool, err error) {
	f, err := e.fences.pending(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	if f == nil {
		err = e.queryRow(ctx, `SELECT ts1, ts2, admitted FROM interviewd_rate_decide($1, $2, $3, $4, $5, $6, $7)`,
			[]any{k1, l1, k2, l2, window, now, record}, &ts1, &ts2, &admitted)
		if err != nil {
			return nil, nil, false, err
		}
		return ts1, ts2, admitted, nil
	}
	// The request's check rides on its decision: one round trip.
	var value []byte
	var decided bool
	err = e.queryRow(ctx, rateDecideFencedSQL, []any{k1, l1, k2, l2, window, now, record,
		e.fences.Bucket, f.Key(), f.Want()}, &value, &ts1, &ts2, &decided, &admitted)
	if err != nil {
		return nil, nil, false, err
	}
	if err := f.Resolve(value); err != nil {
		return nil, nil, false, err
	}
	if !decided {
		return nil, nil, false, errors.New("kv: a fenced rate decision was not made")
	}
	return ts1, ts2, admitted, nil
}

// rateDecideFencedSQL calls interviewd_rate_decide_fenced (rate_sql.go).
const rateDecideFencedSQL = `SELECT epoch, ts1, ts2, admitted IS NOT NULL, coalesce(admitted, false)
	FROM interviewd_rate_decide_fenced($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// SweepRates deletes the logs of keys unused since before (Unix nanoseconds).
func (e *Engine) SweepRates(ctx context.Context, before int64) error {
	return e.exec(ctx, `DELETE FROM interviewd_rate WHERE touched < $1`, before)
}
