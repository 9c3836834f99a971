package kv

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
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
	conn, _ := db.pg.subscribe(ctx, jobChannel)
	go func() {
		for ctx.Err() == nil {
			if conn != nil {
				_ = db.pg.notifications(ctx, conn, poke)
				conn.Close(context.WithoutCancel(ctx))
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
			conn, _ = db.pg.subscribe(ctx, jobChannel)
		}
	}()
	return ch
}

// SignalJobs wakes the other nodes' job sweeps. A no-op on a one-node store.
func (db *DB) SignalJobs(ctx context.Context) error {
	if db.pg == nil {
		return nil
	}
	return db.pg.exec(ctx, `SELECT pg_notify($1, '')`, jobChannel)
}

// subscribe opens a connection of its own (a listening connection cannot go back to
// the pool) listening on channel.
func (e *pgEngine) subscribe(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// notifications calls fn for every notification conn receives, until ctx ends or the
// connection fails.
func (e *pgEngine) notifications(ctx context.Context, conn *pgx.Conn, fn func()) error {
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		fn()
	}
}
