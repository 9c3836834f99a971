package kv

import (
	"context"
	"time"
)

// Signals between the nodes of a shared store, over PostgreSQL's LISTEN/NOTIFY: a node
// that leaves jobs unfinished (shutting down) signals, and idle nodes sweep for them at
// once instead of at their next periodic sweep. A signal is only a hint: a node that
// misses one (its listening connection dropped) still finds the jobs by sweeping.

const jobChannel = "interviewd_jobs"

// JobSignals returns a channel that receives after another node's SignalJobs, until
// ctx ends. It returns once it listens (when the database answers), so no signal sent
// after it returns is missed. On a one-node store it returns nil (a channel that never
// receives).
func (db *DB) JobSignals(ctx context.Context) <-chan struct{} {
	if db.pg == nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	poke := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	l, _ := db.pg.Listen(ctx, jobChannel)
	go func() {
		for ctx.Err() == nil {
			if l != nil {
				_ = l.Wait(ctx, poke)
				l.Close(context.WithoutCancel(ctx))
			}
			if ctx.Err() != nil {
				return
			}
			poke() // signals may have been missed while disconnected: sweep anyway
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			l, _ = db.pg.Listen(ctx, jobChannel)
		}
	}()
	return ch
}

// SignalJobs wakes the other nodes' job sweeps. A no-op on a one-node store.
func (db *DB) SignalJobs(ctx context.Context) error {
	if db.pg == nil {
		return nil
	}
	return db.pg.Notify(ctx, jobChannel)
}
