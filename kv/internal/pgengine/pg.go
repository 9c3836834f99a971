// Package pgengine is kv's engine for a store shared by several nodes: PostgreSQL
// through pgx and pgxpool. It implements the seam (kv/internal/engine) with bbolt's
// semantics, and adds what only a shared store needs: its schema and migrations, the
// server's notices in the log, grouped single-record reads (read_group.go), the
// rate-limit statements shared by the nodes and LISTEN/NOTIFY between them. Only kv
// imports it.
package pgengine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"interviewd/kv/internal/engine"
)

// The PostgreSQL engine: every bucket lives in one table, interviewd_kv (bucket, key,
// value), keyed by (bucket, key). bytea compares bytewise, shorter first on a common
// prefix, exactly as bbolt orders keys, so cursors, prefixes and keyset pages are the
// same on both engines.
//
// Read-write transactions are SERIALIZABLE: PostgreSQL then guarantees what bbolt's
// single writer did, that the outcome is that of running the transactions one at a
// time. A transaction PostgreSQL cannot serialize (SQLSTATE 40001) or that deadlocks
// (40P01) rolls back and runs again, as the group commit may already run a function
// twice. Read-only transactions are REPEATABLE READ READ ONLY: one snapshot, as a bbolt
// view.

// pgRetries bounds how often one transaction is retried after serialization failures
// before the caller gets the failure (ctx usually ends the wait first).
const pgRetries = 100

// Engine is an open pool on one database.
type Engine struct {
	pool *pgxpool.Pool
	// fences says which check may ride on a statement (fence.go).
	fences Fences
	// retries counts transactions run again after a serialization failure or deadlock
	// (for the store's metrics and tests).
	retries atomic.Uint64
	// replans counts the times a connection's statements were dropped after a stale
	// statement (replan), for tests.
	replans atomic.Uint64
	// reads groups concurrent single-record reads (read_group.go).
	reads readGroup
	// ungrouped sends each single-record read alone: for BenchmarkReadOne, which
	// shows what the grouping buys (SetUngrouped).
	ungrouped bool
}

// Options configures Open.
type Options struct {
	// Log hears the server's notices. The zero Logger discards them.
	Log zerolog.Logger
	// Fences names the checks that ride on statements (fence.go); the zero value has
	// none.
	Fences Fences
}

// URLError reports a store URL pgxpool cannot read.
type URLError struct{ Err error }

func (e *URLError) Error() string { return "not a valid PostgreSQL URL: " + e.Err.Error() }
func (e *URLError) Unwrap() error { return e.Err }

// Open connects to the database at url (Migrate then prepares its tables). The
// URL is pgxpool's: pool settings (pool_max_conns, pool_max_conn_lifetime, ...) and
// pgx's (default_query_exec_mode=exec or simple_protocol behind a transaction-pooling
// PgBouncer, statement_cache_capacity) are honoured as pgxpool.ParseConfig reads them.
// The server's notices go to opts.Log. A URL pgxpool cannot read is a *URLError.
func Open(ctx context.Context, url string, opts Options) (*Engine, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, &URLError{Err: err}
	}
	if !strings.Contains(url, "pool_max_conns") && cfg.MaxConns < 16 {
		// Requests wait on the database, not the CPU: more connections than cores,
		// unless the URL says how many.
		cfg.MaxConns = 16
	}
	cfg.ConnConfig.OnNotice = noticeLogger(opts.Log)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	e := &Engine{pool: pool, fences: opts.Fences}
	e.reads.pg = e
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return e, nil
}

// Close closes the pool.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}

// View runs fn in a REPEATABLE READ READ ONLY transaction.
func (e *Engine) View(ctx context.Context, fn func(engine.Tx) error) error {
	return e.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// Update runs fn in a SERIALIZABLE transaction, again after each serialization
// failure or deadlock.
func (e *Engine) Update(ctx context.Context, fn func(engine.Tx) error) error {
	return e.run(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn)
}

// Retries returns how many transactions ran again after a serialization failure or a
// deadlock since open.
func (e *Engine) Retries() uint64 { return e.retries.Load() }

// Replans returns how many times a connection's statements were dropped after a stale
// statement, for tests.
func (e *Engine) Replans() uint64 { return e.replans.Load() }

// Pool returns the engine's pool, for tests that look at its settings or send
// statements of their own.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool }

// SetUngrouped makes every single-record read a statement of its own (BenchmarkReadOne,
// the comparison the read group must keep winning). Call it before any read.
func (e *Engine) SetUngrouped(alone bool) { e.ungrouped = alone }

// run runs fn in a transaction with opts, again after each serialization failure, and
// once more on the same connection after a stale statement (replan).
func (e *Engine) run(ctx context.Context, opts pgx.TxOptions, fn func(engine.Tx) error) error {
	var conn *pgxpool.Conn // the connection the last attempt ran on, while it is kept
	defer func() {
		if conn != nil {
			conn.Release()
		}
	}()
	replanned := false
	for attempt := 0; ; attempt++ {
		var err error
		conn, err = e.once(ctx, opts, fn, conn)
		if !replanned && conn != nil && e.replan(ctx, conn, err) {
			replanned = true
			continue
		}
		if conn != nil {
			conn.Release()
			conn = nil
		}
		if err == nil || !retryable(err) || attempt >= pgRetries {
			return err
		}
		e.retries.Add(1)
		// Jittered exponential backoff: the transactions that collided retry apart.
		wait := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// once runs fn in one transaction: committed if fn and every statement succeeded,
// rolled back otherwise. The transaction begins with its first statement, in the same
// round trip (pgx.Batch.BeginTx); a function that ran no statement costs nothing. It
// runs on conn when given one, else on one acquired by its first statement, and
// returns the connection it ran on (nil if none) for the caller to release.
func (e *Engine) once(ctx context.Context, opts pgx.TxOptions, fn func(engine.Tx) error, conn *pgxpool.Conn) (used *pgxpool.Conn, err error) {
	tx := &pgTx{ctx: ctx, pool: e.pool, fences: &e.fences, conn: conn, opts: opts, writable: opts.AccessMode != pgx.ReadOnly}
	defer func() {
		if p := recover(); p != nil {
			tx.rollback()
			used, err = tx.conn, fmt.Errorf("kv: panic in a transaction: %v", p)
		}
	}()
	ferr := fn(tx)
	if tx.err != nil {
		// A statement failed: that is the outcome, whatever fn made of the nil it read.
		ferr = tx.err
	}
	if ferr != nil {
		tx.rollback()
		return tx.conn, ferr
	}
	if tx.tx != nil {
		if err := tx.tx.Commit(ctx); err != nil {
			return tx.conn, err
		}
	}
	for _, f := range tx.onCommit {
		f()
	}
	return tx.conn, nil
}

// stalePlan reports PostgreSQL's refusal to run a prepared statement whose result's
// columns changed type since it was prepared ("cached plan must not change result
// type", raised while revalidating the cached plan): a migration altered a table under
// a connection's statement cache.
func stalePlan(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "0A000" && pe.Routine == "RevalidateCachedQuery"
}

// replan reports whether err was a stale statement on conn, after dropping every
// statement conn has prepared (pgx forgets only the statement that failed, and its
// siblings are as stale): run again on conn, each statement is prepared afresh. The
// pool's other connections each meet the change once, and are renewed the same way.
func (e *Engine) replan(ctx context.Context, conn *pgxpool.Conn, err error) bool {
	if !stalePlan(err) || conn.Conn().PgConn().TxStatus() != 'I' {
		return false
	}
	if conn.Conn().DeallocateAll(ctx) != nil {
		return false
	}
	e.replans.Add(1)
	return true
}

// withConn runs fn, one or more statements outside a transaction, on a connection of
// the pool, and once more after a stale statement (replan).
func (e *Engine) withConn(ctx context.Context, fn func(*pgxpool.Conn) error) error {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	err = fn(conn)
	if e.replan(ctx, conn, err) {
		err = fn(conn)
	}
	return err
}

// queryRow runs sql, outside a transaction, for at most one row into dest
// (pgx.ErrNoRows for none).
func (e *Engine) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return e.withConn(ctx, func(c *pgxpool.Conn) error { return c.QueryRow(ctx, sql, args...).Scan(dest...) })
}

// exec runs sql, a statement returning no rows, outside a transaction.
func (e *Engine) exec(ctx context.Context, sql string, args ...any) error {
	return e.withConn(ctx, func(c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, sql, args...)
		return err
	})
}

// retryable reports a serialization failure or a deadlock: the transaction did
// nothing and may simply run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// pgTx is one PostgreSQL transaction. The first failed statement is kept in err: every
// later statement is skipped, and the transaction ends with that error.
type pgTx struct {
	ctx      context.Context
	pool     *pgxpool.Pool
	fences   *Fences
	opts     pgx.TxOptions
	conn     *pgxpool.Conn // acquired by the first statement unless given; the caller releases it
	tx       pgx.Tx        // begun by the first statement
	writable bool
	err      error
	onCommit []func()
	// writes counts the statements that changed rows, so a cursor knows its prefetched
	// rows may be stale.
	writes int
}

func (t *pgTx) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// first sends the transaction's first statement with its BEGIN, in one round trip,
// and returns the batch positioned on the statement's result. A credential check due
// under the transaction's context (fence.go) rides in the same batch, before the
// statement: the transaction's snapshot is the check's, and a failed check fails the
// transaction, whatever the statement did.
func (t *pgTx) first(sql string, args ...any) (pgx.BatchResults, error) {
	f, err := t.fences.pending(t.ctx)
	if err != nil {
		return nil, err
	}
	if t.conn == nil {
		conn, err := t.pool.Acquire(t.ctx)
		if err != nil {
			return nil, err
		}
		t.conn = conn
	}
	b := &pgx.Batch{}
	b.BeginTx(t.opts)
	if f != nil {
		b.Queue(fenceSQL, t.fences.Bucket, f.Key())
	}
	b.Queue(sql, args...)
	br := t.conn.SendBatch(t.ctx, b)
	t.tx = br.Tx()
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	if f != nil {
		var epoch []byte
		err := br.QueryRow().Scan(&epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		if err == nil {
			err = f.Resolve(epoch)
		}
		if err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	return br, nil
}

// scanRow runs a query returning at most one row into dest (pgx.ErrNoRows for none).
func (t *pgTx) scanRow(sql string, args []any, dest ...any) error {
	if t.tx != nil {
		return t.tx.QueryRow(t.ctx, sql, args...).Scan(dest...)
	}
	br, err := t.first(sql, args...)
	if err != nil {
		return err
	}
	err = br.QueryRow().Scan(dest...)
	if cerr := br.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && cerr != nil {
		err = cerr
	}
	return err
}

// exec runs a statement that returns no rows.
func (t *pgTx) exec(sql string, args ...any) error {
	if t.tx != nil {
		_, err := t.tx.Exec(t.ctx, sql, args...)
		return err
	}
	br, err := t.first(sql, args...)
	if err != nil {
		return err
	}
	_, err = br.Exec()
	return errors.Join(err, br.Close())
}

// query runs a query and calls each for every row.
func (t *pgTx) query(sql string, args []any, each func(pgx.Rows) error) error {
	var rows pgx.Rows
	var br pgx.BatchResults
	var err error
	if t.tx != nil {
		rows, err = t.tx.Query(t.ctx, sql, args...)
	} else if br, err = t.first(sql, args...); err == nil {
		rows, err = br.Query()
	}
	if err == nil {
		for rows.Next() {
			if err = each(rows); err != nil {
				break
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if br != nil {
		err = errors.Join(err, br.Close())
	}
	return err
}

// rollback ends a transaction that began, keeping nothing.
func (t *pgTx) rollback() {
	if t.tx != nil {
		_ = t.tx.Rollback(context.WithoutCancel(t.ctx))
	}
}

func (t *pgTx) Bucket(name []byte) engine.Bucket { return &pgBucket{tx: t, name: string(name)} }

// CreateBucketIfNotExists: every bucket exists on this engine (rows name their bucket).
func (t *pgTx) CreateBucketIfNotExists(name []byte) (engine.Bucket, error) {
	return t.Bucket(name), nil
}

func (t *pgTx) OnCommit(fn func()) { t.onCommit = append(t.onCommit, fn) }
func (t *pgTx) Writable() bool     { return t.writable }

type pgBucket struct {
	tx   *pgTx
	name string
}

func (b *pgBucket) Get(key []byte) []byte {
	t := b.tx
	if t.err != nil {
		return nil
	}
	var v []byte
	err := t.scanRow(`SELECT value FROM interviewd_kv WHERE bucket = $1 AND key = $2`, []any{b.name, key}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		t.fail(err)
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}

func (b *pgBucket) Put(key, value []byte) error {
	t := b.tx
	if t.err != nil {
		return t.err
	}
	if len(key) == 0 {
		return errors.New("kv: key required")
	}
	if value == nil {
		value = []byte{}
	}
	t.writes++
	err := t.exec(`INSERT INTO interviewd_kv (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`, b.name, key, value)
	if err != nil {
		t.fail(err)
	}
	return err
}

func (b *pgBucket) Delete(key []byte) error {
	t := b.tx
	if t.err != nil {
		return t.err
	}
	t.writes++
	err := t.exec(`DELETE FROM interviewd_kv WHERE bucket = $1 AND key = $2`, b.name, key)
	if err != nil {
		t.fail(err)
	}
	return err
}

func (b *pgBucket) Cursor() engine.Cursor { return &pgCursor{b: b} }

func (b *pgBucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return b.tx.err
}

// Cursor batches: the first fetch in a direction is small (most walks read a handful
// of rows under a prefix), later ones grow so a long walk costs few round trips.
const (
	pgFirstBatch = 8
	pgMaxBatch   = 512
)

// pgCursor walks a bucket with keyset queries, prefetching rows in the direction of
// travel. rows[i] is the current row; rows run forward when fwd, backward otherwise.
type pgCursor struct {
	b      *pgBucket
	rows   []pgRow
	i      int
	fwd    bool
	batch  int
	end    bool // the last fetch returned fewer rows than asked: nothing lies beyond
	cur    []byte
	writes int // the transaction's write count when rows were fetched
}

type pgRow struct{ k, v []byte }

func (c *pgCursor) First() ([]byte, []byte) { return c.fetch(nil, true, true) }
func (c *pgCursor) Last() ([]byte, []byte)  { return c.fetch(nil, false, true) }
func (c *pgCursor) Seek(key []byte) ([]byte, []byte) {
	return c.fetch(key, true, true)
}

func (c *pgCursor) Next() ([]byte, []byte) { return c.step(true) }
func (c *pgCursor) Prev() ([]byte, []byte) { return c.step(false) }

// step moves one row in the direction fwd, from the prefetched rows when they are
// still valid, with a fetch after the current key otherwise.
func (c *pgCursor) step(fwd bool) ([]byte, []byte) {
	if c.cur == nil {
		return nil, nil // before the first positioning, or past an end
	}
	if fwd == c.fwd && c.writes == c.b.tx.writes {
		if c.i+1 < len(c.rows) {
			c.i++
			r := c.rows[c.i]
			c.cur = r.k
			return r.k, r.v
		}
		if c.end {
			c.cur = nil
			return nil, nil
		}
		c.batch = min(c.batch*4, pgMaxBatch)
	} else {
		c.batch = pgFirstBatch
	}
	return c.fetchFrom(c.cur, fwd, false)
}

// fetch positions the cursor: at from (or the first key after it) going forward, or
// at the end going backward; from nil means the bucket's first or last key.
func (c *pgCursor) fetch(from []byte, fwd, inclusive bool) ([]byte, []byte) {
	c.batch = pgFirstBatch
	return c.fetchFrom(from, fwd, inclusive)
}

func (c *pgCursor) fetchFrom(from []byte, fwd, inclusive bool) ([]byte, []byte) {
	t := c.b.tx
	c.rows, c.i, c.fwd, c.cur, c.end, c.writes = c.rows[:0], 0, fwd, nil, false, t.writes
	if t.err != nil {
		return nil, nil
	}
	var q string
	args := []any{c.b.name, c.batch}
	switch {
	case from == nil && fwd:
		q = `SELECT key, value FROM interviewd_kv WHERE bucket = $1 ORDER BY key LIMIT $2`
	case from == nil:
		q = `SELECT key, value FROM interviewd_kv WHERE bucket = $1 ORDER BY key DESC LIMIT $2`
	case fwd && inclusive:
		q = `SELECT key, value FROM interviewd_kv WHERE bucket = $1 AND key >= $3 ORDER BY key LIMIT $2`
	case fwd:
		q = `SELECT key, value FROM interviewd_kv WHERE bucket = $1 AND key > $3 ORDER BY key LIMIT $2`
	default:
		q = `SELECT key, value FROM interviewd_kv WHERE bucket = $1 AND key < $3 ORDER BY key DESC LIMIT $2`
	}
	if from != nil {
		args = append(args, from)
	}
	err := t.query(q, args, func(rows pgx.Rows) error {
		var r pgRow
		if err := rows.Scan(&r.k, &r.v); err != nil {
			return err
		}
		if r.v == nil {
			r.v = []byte{}
		}
		c.rows = append(c.rows, r)
		return nil
	})
	if err != nil {
		t.fail(err)
		c.rows = c.rows[:0]
		return nil, nil
	}
	c.end = len(c.rows) < c.batch
	if len(c.rows) == 0 {
		return nil, nil
	}
	c.cur = c.rows[0].k
	return c.rows[0].k, c.rows[0].v
}
