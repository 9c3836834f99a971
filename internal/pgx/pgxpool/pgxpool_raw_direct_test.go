package pgxpool_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"interviewd/internal/pgx/pgxpool"
)

// QueryRaw speaks the extended protocol itself for small statements on an idle
// connection (internal/pgx/raw.go). These tests drive that path against a real server
// through what can go wrong in it: the server's errors, fatal ones included, a
// connection that dies while a statement waits, and cancellation before, during and
// just after a statement.

// int8Of decodes a one-column bigint row.
func int8Of(v [][]byte) (int64, error) {
	if len(v) != 1 || len(v[0]) != 8 {
		return 0, errors.New("not one bigint")
	}
	return int64(binary.BigEndian.Uint64(v[0])), nil
}

// queryInt8 runs a one-row bigint query on c, its parameters in binary, and returns
// its value.
func queryInt8(ctx context.Context, c *pgxpool.Conn, sql string, params ...[]byte) (int64, error) {
	var n int64
	rows := 0
	err := c.QueryRaw(ctx, sql, params, []int16{1}, func(v [][]byte) error {
		rows++
		var err error
		n, err = int8Of(v)
		return err
	})
	if err == nil && rows != 1 {
		err = errors.New("not one row")
	}
	return n, err
}

// TestQueryRawServerErrors: an error the server reports at Bind (a malformed binary
// parameter) comes back as its PgError and leaves the connection serving; a fatal one
// (the backend terminated by its own statement) comes back as its PgError too, and the
// connection is closed, so the pool replaces it.
func TestQueryRawServerErrors(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	c := acquire(t, ctx, p)
	var pe *pgconn.PgError
	// Three bytes are no bigint: the server refuses the Bind.
	err := c.QueryRaw(ctx, `SELECT $1::int8`, [][]byte{{1, 2, 3}}, []int16{1}, func([][]byte) error { return nil })
	if !errors.As(err, &pe) || pe.Code != "08P01" {
		t.Fatalf("malformed binary parameter: %v", err)
	}
	if n, err := queryInt8(ctx, c, `SELECT $1::int8 + 1`, binary.BigEndian.AppendUint64(nil, 41)); err != nil || n != 42 {
		t.Fatalf("after a refused Bind: %d, %v", n, err)
	}

	err = c.QueryRaw(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`, nil, nil, func([][]byte) error { return nil })
	if !errors.As(err, &pe) || pe.Code != "57P01" || !strings.EqualFold(pe.Severity, "FATAL") {
		t.Fatalf("terminated backend: %v", err)
	}
	if !c.PgConn().IsClosed() {
		t.Fatal("connection not closed after a fatal error")
	}
	c.Release()

	c = acquire(t, ctx, p)
	if n, err := queryInt8(ctx, c, `SELECT 7::int8`); err != nil || n != 7 {
		t.Fatalf("the pool's next connection: %d, %v", n, err)
	}
}

// acquire returns a connection of p, released when the test ends if it has not been
// (Release is safe to call twice): a failed test must not leave the pool's Close
// waiting.
func acquire(t *testing.T, ctx context.Context, p *pgxpool.Pool) *pgxpool.Conn {
	t.Helper()
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return c
}

// blockedRead starts QueryRaw on c with a statement that waits for the advisory lock
// holder holds, and returns once the server reports it waiting; the statement's error
// comes on the channel.
func blockedRead(t *testing.T, ctx, stmtCtx context.Context, holder, c *pgxpool.Conn) <-chan error {
	t.Helper()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- c.QueryRaw(stmtCtx, `SELECT pg_advisory_lock(4242)`, nil, nil, func([][]byte) error { return nil })
	}()
	pid := int64(c.PgConn().PID())
	for {
		var waiting bool
		err := holder.QueryRow(ctx, `SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return done
		}
		select {
		case err := <-done:
			t.Fatalf("the statement ended before it waited: %v", err)
		case <-time.After(5 * time.Millisecond): // poll the server's view, no deadline
		}
	}
}

// TestQueryRawConnectionDies: a statement whose connection breaks under it (closed at
// the socket, or its backend terminated by another session) fails instead of waiting
// forever, the connection is closed, and the pool goes on with a fresh one.
func TestQueryRawConnectionDies(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill func(holder, c *pgxpool.Conn) error
	}{
		{"SocketClosed", func(_, c *pgxpool.Conn) error { return c.PgConn().Conn().Close() }},
		{"BackendTerminated", func(holder, c *pgxpool.Conn) error {
			_, err := holder.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int64(c.PgConn().PID()))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, "pool_max_conns=2")
			ctx := ctxT(t)
			holder := acquire(t, ctx, p)
			c := acquire(t, ctx, p)
			done := blockedRead(t, ctx, ctx, holder, c)
			if err := tc.kill(holder, c); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err == nil {
				t.Fatal("a statement on a dead connection succeeded")
			}
			if !c.PgConn().IsClosed() {
				t.Fatal("dead connection not closed")
			}
			c.Release()
			c = acquire(t, ctx, p)
			if n, err := queryInt8(ctx, c, `SELECT 3::int8`); err != nil || n != 3 {
				t.Fatalf("the pool's next connection: %d, %v", n, err)
			}
		})
	}
}

// TestQueryRawCancel: a context ended before the statement sends nothing and leaves
// the connection as it was; one ended while the statement waits interrupts it with the
// context's error and closes the connection (its answer is still to come), as pgconn
// does; one ended as the answer is read leaves no deadline behind on the connection.
func TestQueryRawCancel(t *testing.T) {
	p := newPool(t, "pool_max_conns=2")
	ctx := ctxT(t)
	c := acquire(t, ctx, p)

	ended, end := context.WithCancel(ctx)
	end()
	if _, err := queryInt8(ended, c, `SELECT 1::int8`); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
	if n, err := queryInt8(ctx, c, `SELECT 2::int8`); err != nil || n != 2 {
		t.Fatalf("after an ended context: %d, %v", n, err)
	}

	// Ended while the answer is read: the one-row answer is in the reader's buffer
	// already, so the statement completes; the deadline the cancellation set must not
	// fail the connection's next statement.
	during, endDuring := context.WithCancel(ctx)
	rows := 0
	err := c.QueryRaw(during, `SELECT 5::int8`, nil, nil, func(v [][]byte) error {
		endDuring()
		rows++
		return nil
	})
	if err != nil || rows != 1 {
		t.Fatalf("ended during the read: %d rows, %v", rows, err)
	}
	if n, err := queryInt8(ctx, c, `SELECT 6::int8`); err != nil || n != 6 {
		t.Fatalf("after a context ended during the read: %d, %v", n, err)
	}

	holder := acquire(t, ctx, p)
	waiting, endWaiting := context.WithCancel(ctx)
	done := blockedRead(t, ctx, waiting, holder, c)
	endWaiting()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ended while waiting: %v", err)
	}
	if !c.PgConn().IsClosed() {
		t.Fatal("interrupted connection not closed")
	}
	c.Release()
	c = acquire(t, ctx, p)
	if n, err := queryInt8(context.Background(), c, `SELECT 8::int8`); err != nil || n != 8 {
		t.Fatalf("the pool's next connection: %d, %v", n, err)
	}
}

// TestQueryRawNotificationKept: a notification that arrives in a statement's answer
// (here the statement's own, delivered before its ReadyForQuery) is kept for
// WaitForNotification, not dropped.
func TestQueryRawNotificationKept(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	c := acquire(t, ctx, p)
	if _, err := c.Exec(ctx, `LISTEN raw_direct`); err != nil {
		t.Fatal(err)
	}
	rows := 0
	if err := c.QueryRaw(ctx, `SELECT pg_notify('raw_direct', 'hello')`, nil, nil, func([][]byte) error { rows++; return nil }); err != nil || rows != 1 {
		t.Fatalf("notify: %d rows, %v", rows, err)
	}
	// An ended context: WaitForNotification returns at once unless it already holds
	// the notification.
	ended, end := context.WithCancel(ctx)
	end()
	n, err := c.WaitForNotification(ended)
	if err != nil || n.Channel != "raw_direct" || n.Payload != "hello" {
		t.Fatalf("notification: %+v, %v", n, err)
	}
}

// TestQueryRawRowPanics: a row function that panics leaves the answer half read; the
// panic goes on to the caller and the connection is closed, so the pool does not hand
// it, mid-answer, to the next statement.
func TestQueryRawRowPanics(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	c := acquire(t, ctx, p)
	func() {
		defer func() {
			if r := recover(); r != "row" {
				t.Fatalf("recovered %v, want the row's panic", r)
			}
		}()
		_ = c.QueryRaw(ctx, `SELECT i::int8 FROM generate_series(1, 3) i`, nil, nil, func([][]byte) error { panic("row") })
	}()
	if !c.PgConn().IsClosed() {
		t.Fatal("connection left open mid-answer")
	}
	c.Release()
	c = acquire(t, ctx, p)
	if n, err := queryInt8(ctx, c, `SELECT 9::int8`); err != nil || n != 9 {
		t.Fatalf("the pool's next connection: %d, %v", n, err)
	}
}

// TestQueryRawLargeParameters: parameters past what the direct path sends go by
// pgconn's path, with the same answer.
func TestQueryRawLargeParameters(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	c := acquire(t, ctx, p)
	for _, size := range []int{0, 100, 64 << 10} {
		v := bytes.Repeat([]byte{0xa5}, size)
		n, err := queryInt8(context.Background(), c, `SELECT length($1::bytea)::int8`, v)
		if err != nil || n != int64(size) {
			t.Errorf("%d bytes: length %d, %v", size, n, err)
		}
	}
}
