package pgengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"interviewd/kv/internal/engine"
	"interviewd/kv/pgtest"
)

// What the engine takes from pgx and pgxpool as they are: pool and query settings given
// in the store URL, transaction-pooling (PgBouncer) modes, a statement cache that
// survives a migration, and the server's notices in the log.

// urlWith returns a fresh database's URL with the settings extra (k=v&k=v) added.
func urlWith(tb testing.TB, extra string) string {
	tb.Helper()
	u := pgtest.URL(tb)
	if extra != "" {
		u += "&" + extra
	}
	return u
}

// testFence is an armed check on the record at key, passing when it reads want.
type testFence struct {
	key, want []byte
	mu        sync.Mutex
	read      [][]byte // what each check read
}

func (f *testFence) Key() []byte  { return f.key }
func (f *testFence) Want() []byte { return f.want }
func (f *testFence) Resolve(v []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read = append(f.read, bytes.Clone(v))
	if !bytes.Equal(v, f.want) {
		return errFenceFailed
	}
	return nil
}

var errFenceFailed = errors.New("the fence's record changed")

type fenceKey struct{}

// fenced returns ctx carrying f as its due check (see fencedOptions).
func fenced(ctx context.Context, f *testFence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// fencedOptions makes the check a context carries due with its every statement.
func fencedOptions() Options {
	return Options{Fences: Fences{Bucket: fenceBucket, Pending: func(ctx context.Context) (Fence, error) {
		if f, ok := ctx.Value(fenceKey{}).(*testFence); ok {
			return f, nil
		}
		return nil, nil
	}}}
}

func TestPoolSettingsFromURL(t *testing.T) {
	t.Run("OK_Honoured", func(t *testing.T) {
		e := openTest(t, urlWith(t, "pool_max_conns=3&pool_min_conns=1&pool_max_conn_lifetime=45m&pool_max_conn_idle_time=7m&statement_cache_capacity=32"), Options{})
		cfg := e.Pool().Config()
		if cfg.MaxConns != 3 || cfg.MinConns != 1 || cfg.MaxConnLifetime != 45*time.Minute || cfg.MaxConnIdleTime != 7*time.Minute {
			t.Errorf("pool max %d min %d lifetime %v idle %v, want 3, 1, 45m, 7m", cfg.MaxConns, cfg.MinConns, cfg.MaxConnLifetime, cfg.MaxConnIdleTime)
		}
		if cfg.ConnConfig.StatementCacheCapacity != 32 {
			t.Errorf("statement cache capacity %d, want 32", cfg.ConnConfig.StatementCacheCapacity)
		}
		// Twenty transactions at once share the three connections.
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			wg.Go(func() {
				err := e.Update(context.Background(), func(tx engine.Tx) error {
					return tx.Bucket([]byte("pooled")).Put(fmt.Appendf(nil, "k%d", i), []byte("v"))
				})
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if st := e.Pool().Stat(); st.MaxConns() != 3 || st.TotalConns() > 3 {
			t.Errorf("pool has %d connections with a maximum of %d, want at most 3", st.TotalConns(), st.MaxConns())
		}
	})
	t.Run("OK_DefaultIsSixteen", func(t *testing.T) {
		e := openTest(t, "", Options{})
		if n := e.Pool().Config().MaxConns; n < 16 {
			t.Errorf("default pool of %d connections, want at least 16", n)
		}
	})
	t.Run("ErrInvalidSetting", func(t *testing.T) {
		_, err := Open(context.Background(), urlWith(t, "pool_max_conns=none"), Options{})
		var ue *URLError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "pool_max_conns") {
			t.Fatalf("open with pool_max_conns=none: %v, want a URLError naming pool_max_conns", err)
		}
	})
}

// Behind PgBouncer in transaction pooling mode a connection's prepared statements do
// not survive its transaction: default_query_exec_mode=simple_protocol (or exec) must
// carry every statement the engine sends, and leave no named statement on the server.
func TestTransactionPoolingModes(t *testing.T) {
	for _, tc := range []struct {
		mode         string
		want         pgx.QueryExecMode
		wantPrepared bool
	}{
		{"simple_protocol", pgx.QueryExecModeSimpleProtocol, false},
		{"exec", pgx.QueryExecModeExec, false},
		{"cache_statement", pgx.QueryExecModeCacheStatement, true}, // the default, for contrast
	} {
		t.Run("OK_"+tc.mode, func(t *testing.T) {
			e := openTest(t, urlWith(t, "pool_max_conns=2&default_query_exec_mode="+tc.mode), fencedOptions())
			if got := e.Pool().Config().ConnConfig.DefaultQueryExecMode; got != tc.want {
				t.Fatalf("query exec mode %v, want %v", got, tc.want)
			}
			exerciseEngine(t, e)

			conn, err := e.Pool().Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Release()
			var prepared int
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_prepared_statements`).Scan(&prepared); err != nil {
				t.Fatal(err)
			}
			if (prepared > 0) != tc.wantPrepared {
				t.Errorf("%d statements prepared on a used connection, want some: %v", prepared, tc.wantPrepared)
			}
		})
	}
}

// exerciseEngine sends each kind of statement the engine sends: transactions with
// their first statement (and a fence) batched behind BEGIN, cursors both ways, single
// reads alone and grouped (arrays of keys), fenced reads, rate decisions (bigint
// arrays, NULLs) plain and fenced, sweeps, and a notification.
func exerciseEngine(t *testing.T, e *Engine) {
	t.Helper()
	ctx := context.Background()
	bucket := []byte("modes")
	org := newKey()
	epoch := []byte{0, 0, 0, 0, 0, 0, 0, 4}
	err := e.Update(ctx, func(tx engine.Tx) error {
		for i := range 5 {
			if err := tx.Bucket(bucket).Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(fenceBucket)).Put(org, epoch)
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &testFence{key: org, want: epoch}
	var walked []string
	err = e.View(fenced(ctx, f), func(tx engine.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			walked = append(walked, string(k))
		}
		return nil
	})
	if err != nil || strings.Join(walked, ",") != "k4,k3,k2,k1,k0" || len(f.read) != 1 {
		t.Fatalf("fenced backward walk: %v (fence read %d times), %v", walked, len(f.read), err)
	}

	calls := []*readCall{
		{bucket: string(bucket), key: []byte("k0")},
		{bucket: string(bucket), key: []byte("missing"), org: org},
		{bucket: string(bucket), key: []byte("k1"), org: org},
	}
	e.reads.send(ctx, calls)
	for i, c := range calls {
		if c.err != nil || c.found != (i != 1) || (i != 1 && len(c.value) == 0) || (c.org != nil && counter(c.epoch) != 4) {
			t.Errorf("grouped read %d: found %v, %d bytes, epoch %d, %v", i, c.found, len(c.value), counter(c.epoch), c.err)
		}
	}
	alone := &readCall{bucket: string(bucket), key: []byte("k2"), org: org}
	if err := e.readAlone(ctx, alone); err != nil || !alone.found || counter(alone.epoch) != 4 {
		t.Errorf("fenced read alone: found %v epoch %d, %v", alone.found, counter(alone.epoch), err)
	}
	if v, err := e.Get(ctx, fenceBucket, org); err != nil || counter(v) != 4 {
		t.Errorf("get: %d, %v; want 4", counter(v), err)
	}
	err = e.ReadOne(fenced(ctx, &testFence{key: org, want: epoch}), bucket, []byte("k3"), func(v []byte) error {
		if string(v) != "v3" {
			return fmt.Errorf("fenced read one: %q", v)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}

	now := time.Now().UnixNano()
	k2 := "org"
	for i, want := range []bool{true, true, false} {
		rctx := ctx
		if i == 1 {
			rctx = fenced(ctx, &testFence{key: org, want: epoch})
		}
		ts1, ts2, admitted, err := e.DecideRate(rctx, "key", 2, &k2, 10, int64(time.Minute), now+int64(i), true)
		if err != nil || admitted != want || len(ts1) != min(i, 2) || len(ts2) != min(i, 2) {
			t.Fatalf("rate decision %d: admitted %v logs %v %v, %v; want admitted %v", i, admitted, ts1, ts2, err, want)
		}
	}
	if _, _, _, err := e.DecideRate(ctx, "solo", 1, nil, 0, int64(time.Minute), now, true); err != nil {
		t.Fatalf("rate decision on one key: %v", err)
	}
	if err := e.SweepRates(ctx, now+int64(time.Hour)); err != nil {
		t.Fatalf("sweep rate logs: %v", err)
	}

	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	l, err := e.Listen(lctx, "exercise")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Notify(ctx, "exercise"); err != nil {
		l.Close(ctx)
		t.Fatalf("notify: %v", err)
	}
	heard, waited := make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(waited)
		_ = l.Wait(lctx, func() {
			select {
			case heard <- struct{}{}:
			default:
			}
		})
	}()
	select {
	case <-heard:
	case <-lctx.Done():
		t.Error("no notification within a minute")
	}
	cancel()
	<-waited // the connection is the waiter's until it returns
	l.Close(ctx)
}

// A fence whose record changed fails the statement it rides on: a write is rolled
// back, a read and a rate decision answer the fence's error.
func TestFence_ChangedRecordFailsTheStatement(t *testing.T) {
	e := openTest(t, "", fencedOptions())
	ctx := context.Background()
	org := newKey()
	if err := e.Update(ctx, func(tx engine.Tx) error {
		return tx.Bucket([]byte(fenceBucket)).Put(org, []byte{0, 0, 0, 0, 0, 0, 0, 2})
	}); err != nil {
		t.Fatal(err)
	}
	stale := func() context.Context { return fenced(ctx, &testFence{key: org, want: []byte{0, 0, 0, 0, 0, 0, 0, 1}}) }
	err := e.Update(stale(), func(tx engine.Tx) error {
		return tx.Bucket([]byte("fenced")).Put([]byte("k"), []byte("v"))
	})
	if !errors.Is(err, errFenceFailed) {
		t.Fatalf("fenced write: %v, want the fence's error", err)
	}
	err = e.ReadOne(stale(), []byte("fenced"), []byte("k"), func([]byte) error { return nil })
	if !errors.Is(err, errFenceFailed) {
		t.Fatalf("fenced read: %v, want the fence's error", err)
	}
	if _, _, _, err := e.DecideRate(stale(), "key", 1, nil, 0, int64(time.Minute), time.Now().UnixNano(), true); !errors.Is(err, errFenceFailed) {
		t.Fatalf("fenced rate decision: %v, want the fence's error", err)
	}
	if v, err := e.Get(ctx, "fenced", []byte("k")); err != nil || v != nil {
		t.Fatalf("the fenced write left %q, %v", v, err)
	}
}

// A migration that changes the type of a column the engine reads, made while the
// engine's pool holds prepared statements: PostgreSQL refuses each stale statement once
// per connection ("cached plan must not change result type"); the engine drops the
// connection's statements and runs again, so no caller sees the error.
func TestColumnTypeChangedUnderOpenPool(t *testing.T) {
	url := pgtest.URL(t)
	e := openTest(t, url+"&pool_max_conns=4", Options{})
	ctx := context.Background()
	bucket := []byte("migrated")
	if err := e.Update(ctx, func(tx engine.Tx) error {
		for i := range 3 {
			if err := tx.Bucket(bucket).Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Every connection of the pool prepares the engine's reads: a transaction's Get, a
	// cursor's page, a read of its own.
	readAll := func(what string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				key := fmt.Appendf(nil, "k%d", g%3)
				err := e.View(ctx, func(tx engine.Tx) error {
					if v := tx.Bucket(bucket).Get(key); v == nil {
						return fmt.Errorf("get %s: missing", key)
					}
					n := 0
					c := tx.Bucket(bucket).Cursor()
					for k, _ := c.First(); k != nil && n < 2; k, _ = c.Next() {
						n++
					}
					if n != 2 {
						return fmt.Errorf("walked %d keys, want 2", n)
					}
					return nil
				})
				if err == nil {
					err = e.ReadOne(ctx, bucket, key, func(v []byte) error {
						if v == nil {
							return fmt.Errorf("read one %s: missing", key)
						}
						return nil
					})
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", what, err)
		}
	}
	readAll("before the migration")

	// pgx alone: a statement prepared before the change fails once, then is prepared
	// again.
	plain, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	var v []byte
	if err := plain.QueryRow(ctx, readOneSQL, string(bucket), []byte("k0")).Scan(&v); err != nil {
		t.Fatal(err)
	}

	// The migration: value becomes a domain over bytea, a new result type for every
	// statement that returns it, the same bytes on the wire.
	if _, err := plain.Exec(ctx, `CREATE DOMAIN interviewd_value AS bytea`); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Exec(ctx, `ALTER TABLE interviewd_kv ALTER COLUMN value TYPE interviewd_value`); err != nil {
		t.Fatal(err)
	}

	err = plain.QueryRow(ctx, readOneSQL, string(bucket), []byte("k0")).Scan(&v)
	if !stalePlan(err) {
		t.Fatalf("pgx's first read after the change: %v, want the stale-statement error", err)
	}
	if err := plain.QueryRow(ctx, readOneSQL, string(bucket), []byte("k0")).Scan(&v); err != nil {
		t.Fatalf("pgx's second read after the change: %v", err)
	}

	// The engine: every read and write goes on as before.
	readAll("after the migration")
	if err := e.Update(ctx, func(tx engine.Tx) error {
		return tx.Bucket(bucket).Put([]byte("after"), []byte("v"))
	}); err != nil {
		t.Errorf("write after the migration: %v", err)
	}
	if e.Replans() == 0 {
		t.Error("no connection met a stale statement: the migration changed nothing the engine had prepared")
	}
}

// lockedBuffer is a log destination the pool's connections may write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// The server's notices reach the engine's log: notices at debug, warnings at info.
func TestNoticesLogged(t *testing.T) {
	url := pgtest.URL(t)
	var out lockedBuffer
	log := zerolog.New(&out).Level(zerolog.DebugLevel)
	openTest(t, url, Options{}).Close()
	// The second open finds the schema table made: CREATE TABLE IF NOT EXISTS notices.
	e := openTest(t, url, Options{Log: log})
	if err := e.exec(context.Background(), `ROLLBACK`); err != nil { // outside a transaction: a warning
		t.Fatal(err)
	}
	logged := out.String()
	for _, want := range []string{
		`{"level":"debug","severity":"NOTICE","code":"42P07","message":"PostgreSQL: relation \"interviewd_schema\" already exists, skipping"}`,
		`{"level":"info","severity":"WARNING","code":"25P01","message":"PostgreSQL: there is no transaction in progress"}`,
	} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %s; it has:\n%s", want, logged)
		}
	}
}
