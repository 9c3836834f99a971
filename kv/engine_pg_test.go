package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"interviewd/kv/pgtest"
)

// What the PostgreSQL engine takes from pgx and pgxpool as they are: pool and query
// settings given in the --store URL, transaction-pooling (PgBouncer) modes, a statement
// cache that survives a migration, and the server's notices in the log. These run in
// the PostgreSQL round only.

// pgStoreURL returns a fresh database's URL with the settings extra (k=v&k=v) added,
// skipping tb in the bbolt round.
func pgStoreURL(tb testing.TB, extra string) string {
	tb.Helper()
	if !testPostgres {
		tb.Skip("PostgreSQL engine only")
	}
	u := pgtest.URL(tb)
	if extra != "" {
		u += "&" + extra
	}
	return u
}

func openPGStore(tb testing.TB, url string, opts Options) *DB {
	tb.Helper()
	opts.Store = url
	db, err := Open(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("open %s: %v", RedactStore(url), err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestPostgres_PoolSettingsFromURL(t *testing.T) {
	t.Run("OK_Honoured", func(t *testing.T) {
		db := openPGStore(t, pgStoreURL(t, "pool_max_conns=3&pool_min_conns=1&pool_max_conn_lifetime=45m&pool_max_conn_idle_time=7m&statement_cache_capacity=32"), Options{})
		cfg := db.pg.pool.Config()
		if cfg.MaxConns != 3 || cfg.MinConns != 1 || cfg.MaxConnLifetime != 45*time.Minute || cfg.MaxConnIdleTime != 7*time.Minute {
			t.Errorf("pool max %d min %d lifetime %v idle %v, want 3, 1, 45m, 7m", cfg.MaxConns, cfg.MinConns, cfg.MaxConnLifetime, cfg.MaxConnIdleTime)
		}
		if cfg.ConnConfig.StatementCacheCapacity != 32 {
			t.Errorf("statement cache capacity %d, want 32", cfg.ConnConfig.StatementCacheCapacity)
		}
		// Twenty requests at once share the three connections.
		org := mustOrg(t, db, "pooled")
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 20 {
			wg.Go(func() {
				if _, err := db.FindOrgByID(context.Background(), org.ID); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if st := db.pg.pool.Stat(); st.MaxConns() != 3 || st.TotalConns() > 3 {
			t.Errorf("pool has %d connections with a maximum of %d, want at most 3", st.TotalConns(), st.MaxConns())
		}
	})
	t.Run("OK_DefaultIsSixteen", func(t *testing.T) {
		db := openPGStore(t, pgStoreURL(t, ""), Options{})
		if n := db.pg.pool.Config().MaxConns; n < 16 {
			t.Errorf("default pool of %d connections, want at least 16", n)
		}
	})
	t.Run("ErrInvalidSetting", func(t *testing.T) {
		u := strings.Replace(pgStoreURL(t, "pool_max_conns=none"), "postgres@", "postgres:sekrit@", 1)
		_, err := Open(t.TempDir(), Options{Store: u})
		var ke *Error
		if !errors.As(err, &ke) || ke.Code != EINVALID || !strings.Contains(err.Error(), "pool_max_conns") {
			t.Fatalf("open with pool_max_conns=none: %v, want EINVALID naming pool_max_conns", err)
		}
		if strings.Contains(err.Error(), "sekrit") {
			t.Errorf("the error shows the password: %v", err)
		}
	})
}

// Behind PgBouncer in transaction pooling mode a connection's prepared statements do
// not survive its transaction: default_query_exec_mode=simple_protocol (or exec) must
// carry the whole engine, and leave no named statement on the server.
func TestPostgres_TransactionPoolingModes(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		want          pgx.QueryExecMode
		wantPrepared  bool
		extraSettings string
	}{
		{"simple_protocol", pgx.QueryExecModeSimpleProtocol, false, ""},
		{"exec", pgx.QueryExecModeExec, false, ""},
		{"cache_statement", pgx.QueryExecModeCacheStatement, true, ""}, // the default, for contrast
	} {
		t.Run("OK_"+tc.mode, func(t *testing.T) {
			db := openPGStore(t, pgStoreURL(t, "pool_max_conns=2&default_query_exec_mode="+tc.mode), Options{})
			if got := db.pg.pool.Config().ConnConfig.DefaultQueryExecMode; got != tc.want {
				t.Fatalf("query exec mode %v, want %v", got, tc.want)
			}
			exerciseStore(t, db)

			conn, err := db.pg.pool.Acquire(context.Background())
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

// exerciseStore runs each kind of statement the engine sends: transactions with their
// first statement batched behind BEGIN, cursors, keyset pages, single reads alone and
// grouped (arrays of keys), fenced reads, rate decisions (bigint arrays, NULLs),
// sweeps and a job signal.
func exerciseStore(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	org := mustOrg(t, db, "modes")
	p := Partition{Org: org.ID, Env: EnvLive}
	var ids []ID
	for i := range 5 {
		ids = append(ids, mustStudy(t, db, p, fmt.Sprint("study ", i)).ID)
	}
	var paged []ID
	cursor := ""
	for {
		pg, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatalf("find studies: %v", err)
		}
		for _, s := range pg.Items {
			paged = append(paged, s.ID)
		}
		if pg.Next == "" {
			break
		}
		cursor = pg.Next
	}
	if len(paged) != len(ids) || paged[0] != ids[len(ids)-1] {
		t.Errorf("paged %v, want the %d studies newest first", paged, len(ids))
	}
	for _, id := range ids {
		if s, err := db.FindStudyByID(ctx, p, id); err != nil || s.ID != id {
			t.Fatalf("find study %v: %v", id, err)
		}
	}
	if n, err := db.AddCredits(ctx, org.ID, 5); err != nil || n <= 0 {
		t.Fatalf("add credits: %d, %v", n, err)
	}

	// The grouped statement, with and without an epoch, present and missing records.
	if err := db.update(ctx, func(tx Tx) error {
		return tx.Bucket(bucketAuthEpochs).Put(org.ID[:], binary.BigEndian.AppendUint64(nil, 4))
	}); err != nil {
		t.Fatal(err)
	}
	studies := string(bucketStudies)
	calls := []*readCall{
		{bucket: studies, key: p.key(ids[0])},
		{bucket: studies, key: []byte("missing"), org: org.ID[:]},
		{bucket: studies, key: p.key(ids[1]), org: org.ID[:]},
	}
	db.pg.reads.send(ctx, calls)
	for i, c := range calls {
		if c.err != nil || c.found != (i != 1) || (i != 1 && len(c.value) == 0) || (c.org != nil && epochOf(c.epoch) != 4) {
			t.Errorf("grouped read %d: found %v, %d bytes, epoch %d, %v", i, c.found, len(c.value), epochOf(c.epoch), c.err)
		}
	}
	alone := &readCall{bucket: studies, key: p.key(ids[2]), org: org.ID[:]}
	if err := db.pg.readAlone(ctx, alone); err != nil || !alone.found || epochOf(alone.epoch) != 4 {
		t.Errorf("fenced read alone: found %v epoch %d, %v", alone.found, epochOf(alone.epoch), err)
	}
	if e, err := db.authEpoch(ctx, org.ID); err != nil || e != 4 {
		t.Errorf("epoch %d, %v; want 4", e, err)
	}

	now := time.Now().UnixNano()
	for i, want := range []bool{true, true, false} {
		logs, admitted, err := db.RateDecide(ctx, []string{"key:" + org.ID.String(), "org:" + org.ID.String()}, []int{2, 10}, int64(time.Minute), now+int64(i), true)
		if err != nil || admitted != want || len(logs) != 2 || len(logs[0]) != min(i, 2) {
			t.Fatalf("rate decision %d: admitted %v logs %v, %v; want admitted %v", i, admitted, logs, err, want)
		}
	}
	if _, _, err := db.RateDecide(ctx, []string{"solo"}, []int{1}, int64(time.Minute), now, true); err != nil {
		t.Fatalf("rate decision on one key: %v", err)
	}
	if err := db.SweepRateLogs(ctx, now+int64(time.Hour)); err != nil {
		t.Fatalf("sweep rate logs: %v", err)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	signals := db.JobSignals(sctx)
	if err := db.SignalJobs(ctx); err != nil {
		t.Fatalf("signal jobs: %v", err)
	}
	select {
	case <-signals:
	case <-sctx.Done():
		t.Fatal("no job signal within a minute")
	}
}

// A migration that changes the type of a column the engine reads, made while the
// store's pool holds prepared statements: PostgreSQL refuses each stale statement once
// per connection ("cached plan must not change result type"); the engine drops the
// connection's statements and runs again, so no caller sees the error.
func TestPostgres_ColumnTypeChangedUnderOpenPool(t *testing.T) {
	url := pgStoreURL(t, "")
	db := openPGStore(t, url+"&pool_max_conns=4", Options{})
	ctx := context.Background()
	org := mustOrg(t, db, "migrated")
	p := Partition{Org: org.ID, Env: EnvLive}
	var ids []ID
	for i := range 3 {
		ids = append(ids, mustStudy(t, db, p, fmt.Sprint("study ", i)).ID)
	}
	// Every connection of the pool prepares the engine's reads.
	readAll := func(what string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				id := ids[g%len(ids)]
				if s, err := db.FindStudyByID(ctx, p, id); err != nil || s.ID != id {
					errs <- fmt.Errorf("find study: %v", err)
				}
				if pg, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2}); err != nil || len(pg.Items) != 2 {
					errs <- fmt.Errorf("find studies: %d, %v", len(pg.Items), err)
				}
				if _, err := db.FindOrgByID(ctx, org.ID); err != nil {
					errs <- fmt.Errorf("find org: %v", err)
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
	if err := plain.QueryRow(ctx, readOneSQL, string(bucketStudies), p.key(ids[0])).Scan(&v); err != nil {
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

	err = plain.QueryRow(ctx, readOneSQL, string(bucketStudies), p.key(ids[0])).Scan(&v)
	if !stalePlan(err) {
		t.Fatalf("pgx's first read after the change: %v, want the stale-statement error", err)
	}
	if err := plain.QueryRow(ctx, readOneSQL, string(bucketStudies), p.key(ids[0])).Scan(&v); err != nil {
		t.Fatalf("pgx's second read after the change: %v", err)
	}

	// The store: every read and write goes on as before.
	readAll("after the migration")
	if _, err := db.AddCredits(ctx, org.ID, 1); err != nil {
		t.Errorf("add credits after the migration: %v", err)
	}
	mustStudy(t, db, p, "after")
	if db.pg.replans.Load() == 0 {
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

// The server's notices reach the store's log: notices at debug, warnings at info.
func TestPostgres_NoticesLogged(t *testing.T) {
	url := pgStoreURL(t, "")
	var out lockedBuffer
	log := zerolog.New(&out).Level(zerolog.DebugLevel)
	openPGStore(t, url, Options{}).Close()
	// The second open finds the schema table made: CREATE TABLE IF NOT EXISTS notices.
	db := openPGStore(t, url, Options{Log: log})
	if err := db.pg.exec(context.Background(), `ROLLBACK`); err != nil { // outside a transaction: a warning
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
