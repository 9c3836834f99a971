package kv

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Rate-limit logs shared by the nodes of one store.
//
// On one node the server keeps its sliding windows in memory. Nodes sharing a
// PostgreSQL store must share them too, or each node would admit the full limit: the
// logs live in interviewd_rate, one row per key holding the Unix-nanosecond times of
// its recent admissions, ascending. A decision locks its rows (FOR UPDATE, in key
// order so two decisions never deadlock), so concurrent requests for one credential or
// organisation queue for a moment instead of both seeing room.

// Shared reports whether other nodes may use this store at the same time (the
// PostgreSQL engine): state a node would otherwise keep in memory must then live in the
// store.
func (db *DB) Shared() bool { return db.pg != nil }

// errNotShared answers the shared-state methods on a one-node store.
var errNotShared = errors.New("kv: shared rate logs need a shared store (PostgreSQL)")

// RateLogs runs decide over the stored admission logs of keys (one slice per key, in
// keys' order, ascending; empty for a key never seen) with their rows locked, and
// stores the logs decide returns in their place, in one transaction. now (Unix
// nanoseconds) marks the rows as used, for SweepRateLogs.
func (db *DB) RateLogs(ctx context.Context, keys []string, now int64, decide func(logs [][]int64) [][]int64) error {
	if db.pg == nil {
		return errNotShared
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	// Two round trips: BEGIN, the rows made and locked, read; then the writes and COMMIT.
	conn, err := db.pg.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left inside the transaction by a failure is dropped by the pool.
	defer conn.Release()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	b.Queue(`INSERT INTO interviewd_rate (key, ts, touched) SELECT k, '{}', $2 FROM unnest($1::text[]) AS k
		ON CONFLICT (key) DO NOTHING`, sorted, now)
	b.Queue(`SELECT key, ts FROM interviewd_rate WHERE key = ANY($1) ORDER BY key FOR UPDATE`, sorted)
	res := conn.SendBatch(ctx, b)
	tx := res.Tx()
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	found := make(map[string][]int64, len(sorted))
	err = func() error {
		defer res.Close()
		for range 2 { // BEGIN, INSERT
			if _, err := res.Exec(); err != nil {
				return err
			}
		}
		rows, err := res.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var ts []int64
			if err := rows.Scan(&k, &ts); err != nil {
				return err
			}
			found[k] = ts
		}
		return rows.Err()
	}()
	if err != nil {
		return err
	}
	logs := make([][]int64, len(keys))
	for i, k := range keys {
		logs[i] = found[k]
	}
	logs = decide(logs)
	up := &pgx.Batch{}
	for i, k := range keys {
		if i < len(logs) {
			up.Queue(`UPDATE interviewd_rate SET ts = $2, touched = $3 WHERE key = $1`, k, nonNilTimes(logs[i]), now)
		}
	}
	up.Queue(`COMMIT`)
	if err := tx.SendBatch(ctx, up).Close(); err != nil {
		return err
	}
	committed = true
	return nil
}

func nonNilTimes(ts []int64) []int64 {
	if ts == nil {
		return []int64{}
	}
	return ts
}

// SweepRateLogs deletes the logs of keys unused since before (Unix nanoseconds), so the
// table follows the keys in use.
func (db *DB) SweepRateLogs(ctx context.Context, before int64) error {
	if db.pg == nil {
		return errNotShared
	}
	_, err := db.pg.pool.Exec(ctx, `DELETE FROM interviewd_rate WHERE touched < $1`, before)
	return err
}
