// Package pgx is the part of github.com/jackc/pgx/v5's API that the PostgreSQL store
// uses, with the same names, on pgx's own wire layer (pgconn) alone. pgx's top package
// brings its type system (pgtype: every PostgreSQL type with its codecs, registered at
// start-up): about 2.8 MB of the binary, for a store that reads and writes bytea,
// text, integers, booleans and bigint arrays. Here arguments are sent as text (bytea
// as binary) and results read in binary, decoded into the few Go types the store
// scans into; anything else is an error naming the type.
package pgx

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// ErrNoRows is what Row.Scan returns when the query returned no row.
var ErrNoRows = errors.New("no rows in result set")

// TxIsoLevel is a transaction's isolation level.
type TxIsoLevel string

// TxAccessMode is a transaction's access mode.
type TxAccessMode string

// The isolation levels and access modes.
const (
	Serializable   TxIsoLevel   = "serializable"
	RepeatableRead TxIsoLevel   = "repeatable read"
	ReadCommitted  TxIsoLevel   = "read committed"
	ReadWrite      TxAccessMode = "read write"
	ReadOnly       TxAccessMode = "read only"
)

// TxOptions are how a transaction begins.
type TxOptions struct {
	IsoLevel   TxIsoLevel
	AccessMode TxAccessMode
}

func (o TxOptions) beginSQL() string {
	s := "begin"
	if o.IsoLevel != "" {
		s += " isolation level " + string(o.IsoLevel)
	}
	if o.AccessMode != "" {
		s += " " + string(o.AccessMode)
	}
	return s
}

// ConnConfig is a connection's configuration.
type ConnConfig struct {
	pgconn.Config
}

// Copy returns a deep copy of c.
func (c *ConnConfig) Copy() *ConnConfig { return &ConnConfig{Config: *c.Config.Copy()} }

// ParseConfig parses a PostgreSQL URL or keyword/value connection string (pgconn's
// syntax). pgx's own settings (statement_cache_capacity, description_cache_capacity,
// default_query_exec_mode) are refused: this package has no statement cache to size.
func ParseConfig(connString string) (*ConnConfig, error) {
	c, err := pgconn.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode"} {
		if _, ok := c.RuntimeParams[k]; ok {
			return nil, errors.New("cannot parse `" + redact(connString) + "`: " + k + " is not supported")
		}
	}
	return &ConnConfig{Config: *c}, nil
}

// redact hides a URL's password in an error.
func redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s, "@"); at > i {
			if colon := strings.Index(s[i+3:at], ":"); colon >= 0 {
				return s[:i+3+colon+1] + "xxxxx" + s[at:]
			}
		}
	}
	return s
}

// Conn is one connection. Like pgx's, it is not safe for concurrent use.
type Conn struct {
	pc *pgconn.PgConn
	mu sync.Mutex
	// notes are the notifications received and not yet returned by
	// WaitForNotification.
	notes []*pgconn.Notification
	// stmts are the statements prepared on this connection, by their SQL: a statement
	// run again is bound and executed, not parsed and planned again (as pgx's default
	// statement cache does). Their result columns, described when prepared, stand in
	// for the description PostgreSQL would otherwise send with every result.
	stmts map[string]*pgconn.StatementDescription

	// QueryRaw's direct path (raw.go): the Bind it encodes its parameters into, the
	// buffer that holds its messages, and its cancellation, made once per connection.
	bind      pgproto3.Bind
	wbuf      []byte
	onCancel  func()
	cancelled chan struct{} // onCancel has set the deadline
}

// stmtCacheMax bounds the statements prepared per connection; past it the cache is
// dropped (the statements' SQL is a fixed set in interviewd, so this is a backstop).
const stmtCacheMax = 512

// prepared returns sql prepared on c, preparing it on first use (one round trip, once
// per connection and statement).
func (c *Conn) prepared(ctx context.Context, sql string) (*pgconn.StatementDescription, error) {
	if sd, ok := c.stmts[sql]; ok {
		return sd, nil
	}
	if c.stmts == nil || len(c.stmts) >= stmtCacheMax {
		if len(c.stmts) > 0 {
			if err := c.pc.Exec(ctx, "DEALLOCATE ALL").Close(); err != nil {
				return nil, err
			}
		}
		c.stmts = make(map[string]*pgconn.StatementDescription)
	}
	name := "interviewd_" + strconv.Itoa(len(c.stmts)+1)
	sd, err := c.pc.Prepare(ctx, name, sql, nil)
	if err != nil {
		return nil, err
	}
	c.stmts[sql] = sd
	return sd, nil
}

// ConnectConfig connects with config.
func ConnectConfig(ctx context.Context, config *ConnConfig) (*Conn, error) {
	c := &Conn{}
	cfg := config.Config.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { c.note(n) }
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c.pc = pc
	return c, nil
}

// note keeps n for WaitForNotification.
func (c *Conn) note(n *pgconn.Notification) {
	c.mu.Lock()
	c.notes = append(c.notes, n)
	c.mu.Unlock()
}

// PgConn returns the underlying connection.
func (c *Conn) PgConn() *pgconn.PgConn { return c.pc }

// Close closes the connection.
func (c *Conn) Close(ctx context.Context) error { return c.pc.Close(ctx) }

// Exec runs sql. Without arguments it goes by the simple protocol, as pgx's does, so
// sql may hold several statements.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(args) == 0 {
		res, err := c.pc.Exec(ctx, sql).ReadAll()
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		if len(res) == 0 {
			return pgconn.CommandTag{}, nil
		}
		return res[len(res)-1].CommandTag, nil
	}
	values, formats, err := encodeArgs(args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	sd, err := c.prepared(ctx, sql)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return c.pc.ExecStatement(ctx, sd, values, formats, binaryResults).Close()
}

// Query runs sql and returns its rows; an error is also reported by Rows.Err.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	values, formats, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	sd, err := c.prepared(ctx, sql)
	if err != nil {
		return nil, err
	}
	return &rows{rr: c.pc.ExecStatement(ctx, sd, values, formats, binaryResults)}, nil
}

// QueryRow runs sql for at most one row; its error, or ErrNoRows, comes from Scan.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) Row {
	r, err := c.Query(ctx, sql, args...)
	return &row{r: r, err: err}
}

// Begin begins a transaction.
func (c *Conn) Begin(ctx context.Context) (Tx, error) {
	if _, err := c.Exec(ctx, "begin"); err != nil {
		return nil, err
	}
	return &dbTx{c: c}, nil
}

// WaitForNotification waits for a notification on a channel the connection listens
// on and returns it.
func (c *Conn) WaitForNotification(ctx context.Context) (*pgconn.Notification, error) {
	for {
		c.mu.Lock()
		if len(c.notes) > 0 {
			n := c.notes[0]
			c.notes = c.notes[1:]
			c.mu.Unlock()
			return n, nil
		}
		c.mu.Unlock()
		if err := c.pc.WaitForNotification(ctx); err != nil {
			return nil, err
		}
	}
}

// SendBatch sends every query of b in one round trip.
func (c *Conn) SendBatch(ctx context.Context, b *Batch) BatchResults {
	pb := &pgconn.Batch{}
	for _, q := range b.queued {
		values, formats, err := encodeArgs(q.args)
		if err != nil {
			// Nothing was sent; a rollback of the transaction it would have begun
			// is harmless (PostgreSQL warns that none is in progress).
			return &batchResults{c: c, err: err, closed: true}
		}
		var sd *pgconn.StatementDescription
		if len(q.args) > 0 { // not the BEGIN
			// A statement that cannot be prepared is sent as it is: its error then
			// comes in its place among the batch's results.
			sd, _ = c.prepared(ctx, q.sql)
		}
		if sd == nil {
			pb.ExecParams(q.sql, values, nil, formats, binaryResults)
			continue
		}
		pb.ExecStatement(sd, values, formats, binaryResults)
	}
	// With BeginTx, the BEGIN's result is the first, as in pgx.
	return &batchResults{c: c, mrr: c.pc.ExecBatch(ctx, pb)}
}

// Identifier is a PostgreSQL identifier or a name qualified with its schema.
type Identifier []string

// Sanitize quotes the identifier for use in SQL.
func (ident Identifier) Sanitize() string {
	parts := make([]string, len(ident))
	for i, s := range ident {
		s = strings.ReplaceAll(s, "\x00", "")
		parts[i] = `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return strings.Join(parts, ".")
}

// Tx is a transaction begun on a connection.
type Tx interface {
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

type dbTx struct {
	c    *Conn
	done bool
}

func (t *dbTx) Commit(ctx context.Context) error {
	if t.done {
		return errors.New("tx is closed")
	}
	t.done = true
	tag, err := t.c.Exec(ctx, "commit")
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		// A transaction that failed ends with ROLLBACK whatever was asked.
		return errors.New("commit unexpectedly resulted in rollback")
	}
	return nil
}

func (t *dbTx) Rollback(ctx context.Context) error {
	if t.done {
		return errors.New("tx is closed")
	}
	t.done = true
	_, err := t.c.Exec(ctx, "rollback")
	return err
}

func (t *dbTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.c.Exec(ctx, sql, args...)
}

func (t *dbTx) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	return t.c.Query(ctx, sql, args...)
}

func (t *dbTx) QueryRow(ctx context.Context, sql string, args ...any) Row {
	return t.c.QueryRow(ctx, sql, args...)
}

type queued struct {
	sql  string
	args []any
}

// Batch is queries sent in one round trip.
type Batch struct {
	queued []queued
}

// BeginTx makes the batch begin a transaction with opts before its queries: the
// transaction costs no round trip of its own. It must come before any Queue.
func (b *Batch) BeginTx(opts TxOptions) {
	if len(b.queued) != 0 {
		panic("Batch.BeginTx must be called before any query is queued")
	}
	b.queued = append(b.queued, queued{sql: opts.beginSQL()})
}

// Queue adds a query.
func (b *Batch) Queue(sql string, args ...any) {
	b.queued = append(b.queued, queued{sql: sql, args: args})
}

// BatchResults reads a batch's results in order.
type BatchResults interface {
	Exec() (pgconn.CommandTag, error)
	Query() (Rows, error)
	QueryRow() Row
	Close() error
	// Tx is the transaction the batch began (Batch.BeginTx).
	Tx() Tx
}

type batchResults struct {
	c      *Conn
	mrr    *pgconn.MultiResultReader
	err    error // the first error, which Close returns
	closed bool
}

func (b *batchResults) next() (*pgconn.ResultReader, error) {
	if b.err != nil {
		return nil, b.err
	}
	if !b.mrr.NextResult() {
		err := b.mrr.Close()
		b.closed = true
		if err == nil {
			err = errors.New("no more results in batch")
		}
		b.err = err
		return nil, err
	}
	return b.mrr.ResultReader(), nil
}

func (b *batchResults) Exec() (pgconn.CommandTag, error) {
	rr, err := b.next()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return rr.Close()
}

func (b *batchResults) Query() (Rows, error) {
	rr, err := b.next()
	if err != nil {
		return &rows{err: err, closed: true}, err
	}
	return &rows{rr: rr}, nil
}

func (b *batchResults) QueryRow() Row {
	r, err := b.Query()
	return &row{r: r, err: err}
}

func (b *batchResults) Close() error {
	if b.mrr != nil && !b.closed {
		b.closed = true
		if err := b.mrr.Close(); err != nil && b.err == nil {
			b.err = err
		}
	}
	return b.err
}

func (b *batchResults) Tx() Tx { return &dbTx{c: b.c} }
