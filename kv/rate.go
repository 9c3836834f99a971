package kv

import (
	"context"
	"encoding/binary"
	"errors"
)

// Rate-limit logs shared by the nodes of one store.
//
// On one node the server keeps its sliding windows in memory. Nodes sharing a
// PostgreSQL store must share them too, or each node would admit the full limit: the
// logs live in interviewd_rate, one row per key holding the Unix-nanosecond times of
// its recent admissions, ascending. A decision is one statement that locks its rows
// (FOR UPDATE, in key order so two decisions never deadlock), decides and records
// (pgengine's rate.go), so concurrent requests for one credential or organisation queue only
// for the statement, never for a round trip to a node.

// Shared reports whether other nodes may use this store at the same time (the
// PostgreSQL engine): state a node would otherwise keep in memory must then live in the
// store.
func (db *DB) Shared() bool { return db.pg != nil }

// errNotShared answers the shared-state methods on a one-node store.
var errNotShared = errors.New("kv: shared rate logs need a shared store (PostgreSQL)")

// RateDecide makes one strict sliding-window decision against the logs kept in the
// store, in one statement (interviewd_rate_decide): a request at now (Unix
// nanoseconds) fits a key's log when fewer than its limit admissions are less than
// window old; it is admitted when it fits every key (one or two: a credential's and its
// organisation's, with their limits), and then, when record, recorded in each. It
// returns the logs as they were before the request (ascending times, one per key) and
// whether it was admitted.
func (db *DB) RateDecide(ctx context.Context, keys []string, limits []int, window, now int64, record bool) (logs [][]int64, admitted bool, err error) {
	if db.pg == nil {
		return nil, false, errNotShared
	}
	if len(keys) < 1 || len(keys) > 2 || len(limits) != len(keys) {
		return nil, false, errors.New("kv: a rate decision takes one or two keys with their limits")
	}
	var k2 *string
	l2 := 0
	if len(keys) == 2 {
		k2, l2 = &keys[1], limits[1]
	}
	// A credential check due under ctx rides on the decision (auth_fence.go): one round
	// trip, and a credential changed since it was cached is neither decided nor recorded.
	ts1, ts2, admitted, err := db.pg.DecideRate(ctx, keys[0], limits[0], k2, l2, window, now, record)
	if err != nil {
		return nil, false, err
	}
	logs = [][]int64{ts1}
	if k2 != nil {
		logs = append(logs, ts2)
	}
	return logs, admitted, nil
}

// epochValue is an epoch as stored (nil for epoch 0: no row yet).
func epochValue(epoch uint64) []byte {
	if epoch == 0 {
		return nil
	}
	return binary.BigEndian.AppendUint64(nil, epoch)
}

// SweepRateLogs deletes the logs of keys unused since before (Unix nanoseconds), so the
// table follows the keys in use.
func (db *DB) SweepRateLogs(ctx context.Context, before int64) error {
	if db.pg == nil {
		return errNotShared
	}
	return db.pg.SweepRates(ctx, before)
}
