package pgxpool_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"interviewd/internal/pgx"
	"interviewd/internal/pgx/pgxpool"
	"interviewd/kv/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

func newPool(t *testing.T, extra string) *pgxpool.Pool {
	t.Helper()
	u := pgtest.URL(t)
	if extra != "" {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + extra
	}
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestValuesRoundTrip: the types the store sends and scans come back as they went,
// bytea byte for byte (empty is not NULL), NULL as nil.
func TestValuesRoundTrip(t *testing.T) {
	p := newPool(t, "")
	ctx := ctxT(t)
	if _, err := p.Exec(ctx, `CREATE TABLE kv (k bytea PRIMARY KEY, v bytea, n bigint, s text, b boolean)`); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0, 1, 2, 0xff, '\\', 'x', 0}
	for _, r := range []struct {
		k, v []byte
	}{{[]byte("empty"), []byte{}}, {[]byte("null"), nil}, {bin, bin}} {
		if _, err := p.Exec(ctx, `INSERT INTO kv (k, v, n, s, b) VALUES ($1, $2, $3, $4, $5)`, r.k, r.v, int64(-1<<40), "naïve 'quote'", true); err != nil {
			t.Fatal(err)
		}
		var v []byte
		var n int64
		var s string
		var b bool
		if err := p.QueryRow(ctx, `SELECT v, n, s, b FROM kv WHERE k = $1`, r.k).Scan(&v, &n, &s, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, r.v) || (v == nil) != (r.v == nil) || n != -1<<40 || s != "naïve 'quote'" || !b {
			t.Errorf("%q: got %#v %d %q %v", r.k, v, n, s, b)
		}
	}
	var one, small int
	if err := p.QueryRow(ctx, `SELECT 1::int4, 7::int2`).Scan(&one, &small); err != nil || one != 1 || small != 7 {
		t.Errorf("ints: %d %d %v", one, small, err)
	}
	var none []byte
	if err := p.QueryRow(ctx, `SELECT v FROM kv WHERE k = $1`, []byte("absent")).Scan(&none); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("absent row: %v", err)
	}
	var a, empty, null []int64
	if err := p.QueryRow(ctx, `SELECT ARRAY[3, -2, 1099511627776]::bigint[], '{}'::bigint[], NULL::bigint[]`).Scan(&a, &empty, &null); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, []int64{3, -2, 1 << 40}) || empty == nil || len(empty) != 0 || null != nil {
		t.Errorf("arrays: %v %#v %#v", a, empty, null)
	}
	var k2 *string
	var got *string
	if err := p.QueryRow(ctx, `SELECT $1::text`, "x").Scan(&got); err == nil {
		t.Error("scan into *(*string) succeeded")
	} else if !strings.Contains(err.Error(), "cannot scan into **string") {
		t.Errorf("unsupported destination: %v", err)
	}
	var isNull bool
	var sum int
	if err := p.QueryRow(ctx, `SELECT $1::text IS NULL, $2::int + 1`, k2, 41).Scan(&isNull, &sum); err != nil || !isNull || sum != 42 {
		t.Errorf("nil *string and int: %v %d %v", isNull, sum, err)
	}
	var pe *pgconn.PgError
	if _, err := p.Exec(ctx, `INSERT INTO kv (k) VALUES ($1)`, bin); !errors.As(err, &pe) || pe.Code != "23505" {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestBatchTransaction: a batch that begins a transaction commits with it, rows read
// in it come back in order, and a failed statement leaves nothing; a connection
// released inside a transaction is closed, never handed to the next caller.
func TestBatchTransaction(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	if _, err := p.Exec(ctx, `CREATE TABLE kv (k bytea PRIMARY KEY, v bytea NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	run := func(stmts ...string) error {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		b := &pgx.Batch{}
		b.BeginTx(pgx.TxOptions{IsoLevel: pgx.Serializable})
		b.Queue(stmts[0], []byte("a"), []byte("1"))
		br := c.SendBatch(ctx, b)
		tx := br.Tx()
		if _, err := br.Exec(); err != nil { // the BEGIN
			t.Fatal(err)
		}
		_, err = br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		for _, s := range stmts[1:] {
			if err != nil {
				break
			}
			_, err = tx.Exec(ctx, s, []byte("b"), []byte("2"))
		}
		if err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		return tx.Commit(ctx)
	}
	insert := `INSERT INTO kv (k, v) VALUES ($1, $2)`
	if err := run(insert, insert); err != nil {
		t.Fatal(err)
	}
	if err := run(`INSERT INTO kv (k, v) VALUES ($1, $2 || 'x')`, insert); err == nil {
		t.Fatal("a duplicate key committed")
	}
	rows, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rows.Query(ctx, `SELECT k, v FROM kv ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r.Next() {
		var k, v []byte
		if err := r.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, string(k)+"="+string(v))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Release()
	if strings.Join(got, ",") != "a=1,b=2" {
		t.Errorf("rows: %v", got)
	}

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	left := c.PgConn()
	c.Release()
	if !left.IsClosed() {
		t.Error("a connection released inside a transaction was kept")
	}
	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if c.PgConn() == left || c.PgConn().TxStatus() != 'I' {
		t.Error("the next caller got the connection left in a transaction")
	}
}

// TestNotifications: a connection of its own listening on a channel receives what
// pg_notify sends through the pool.
func TestNotifications(t *testing.T) {
	p := newPool(t, "")
	ctx := ctxT(t)
	conn, err := pgx.ConnectConfig(ctx, p.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{`jobs "x"`}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, `SELECT pg_notify($1, 'hello')`, `jobs "x"`); err != nil {
		t.Fatal(err)
	}
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Channel != `jobs "x"` || n.Payload != "hello" {
		t.Errorf("notification %+v", n)
	}
}

// TestParseConfig: pgxpool's settings in the URL set the pool and are not sent to the
// server; the ones not offered are refused by name.
func TestParseConfig(t *testing.T) {
	cfg, err := pgxpool.ParseConfig("postgres://u:secret@localhost/db?pool_max_conns=9&pool_max_conn_idle_time=5m&application_name=x")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 9 || cfg.MaxConnIdleTime != 5*time.Minute || cfg.MaxConnLifetime != time.Hour {
		t.Errorf("config %+v", cfg)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["pool_max_conns"]; ok || cfg.ConnConfig.RuntimeParams["application_name"] != "x" {
		t.Errorf("runtime params %v", cfg.ConnConfig.RuntimeParams)
	}
	for _, bad := range []string{"pool_min_conns=1", "pool_max_conns=0", "statement_cache_capacity=5"} {
		_, err := pgxpool.ParseConfig("postgres://u:secret@localhost/db?" + bad)
		if err == nil || !strings.Contains(err.Error(), strings.Split(bad, "=")[0]) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestCloseWaitsForAcquired: Close refuses new Acquires at once and returns once the
// connection that was out is released.
func TestCloseWaitsForAcquired(t *testing.T) {
	p := newPool(t, "pool_max_conns=2")
	ctx := ctxT(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	for { // until Close has begun
		c2, err := p.Acquire(ctx)
		if err != nil {
			if !strings.Contains(err.Error(), "closed pool") {
				t.Fatalf("Acquire after Close: %v", err)
			}
			break
		}
		c2.Release()
	}
	pc := c.PgConn()
	c.Release()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return after the connection was released")
	}
	if !pc.IsClosed() {
		t.Error("the connection released after Close was kept open")
	}
}

// TestUnsupportedArgument: an argument of a type not encoded is an error naming it,
// before anything is sent; the transaction the batch would have begun rolls back
// harmlessly and the connection serves the next statement.
func TestUnsupportedArgument(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{IsoLevel: pgx.Serializable})
	b.Queue(`SELECT $1`, struct{}{})
	br := c.SendBatch(ctx, b)
	tx := br.Tx()
	if _, err := br.Exec(); err == nil || !strings.Contains(err.Error(), "struct {}") {
		t.Errorf("batch: %v", err)
	}
	if err := br.Close(); err == nil {
		t.Error("Close reported no error")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Errorf("rollback: %v", err)
	}
	if _, err := c.Exec(ctx, `SELECT $1::int`, time.Second); err == nil || !strings.Contains(err.Error(), "time.Duration") {
		t.Errorf("exec: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT $1::int`, 5).Scan(&n); err != nil || n != 5 {
		t.Errorf("next statement: %d %v", n, err)
	}
}

// A statement run again on a connection is executed as prepared there, not parsed and
// planned again: one prepared statement per distinct SQL, whatever the arguments.
func TestStatementsPreparedOncePerConnection(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	for i := range 5 {
		var n int64
		if err := p.QueryRow(ctx, `SELECT $1::bigint + 1`, int64(i)).Scan(&n); err != nil || n != int64(i)+1 {
			t.Fatalf("run %d: %d, %v", i, n, err)
		}
		if _, err := p.Exec(ctx, `SELECT $1::text`, "x"); err != nil {
			t.Fatal(err)
		}
	}
	var prepared int64
	err := p.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement IN ('SELECT $1::bigint + 1', 'SELECT $1::text')`).Scan(&prepared)
	if err != nil || prepared != 2 {
		t.Fatalf("%d statements prepared on the connection (%v), want 2", prepared, err)
	}
}
