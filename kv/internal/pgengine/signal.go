package pgengine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Signals between nodes over PostgreSQL's LISTEN/NOTIFY.

// Listener is a connection of its own listening on one channel.
type Listener struct{ conn *pgx.Conn }

// Listen opens a connection of its own (a listening connection cannot go back to the
// pool) listening on channel.
func (e *Engine) Listen(ctx context.Context, channel string) (*Listener, error) {
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return &Listener{conn: conn}, nil
}

// Wait calls fn for every notification the listener receives, until ctx ends or the
// connection fails.
func (l *Listener) Wait(ctx context.Context, fn func()) error {
	for {
		if _, err := l.conn.WaitForNotification(ctx); err != nil {
			return err
		}
		fn()
	}
}

// Close ends the listener's connection.
func (l *Listener) Close(ctx context.Context) { l.conn.Close(ctx) }

// Notify sends a notification on channel.
func (e *Engine) Notify(ctx context.Context, channel string) error {
	return e.exec(ctx, `SELECT pg_notify($1, '')`, channel)
}
