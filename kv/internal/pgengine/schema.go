package pgengine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"interviewd/kv/internal/engine"
)

// PostgreSQL schema. pgSchema[i] moves the database from version i to i+1; the applied
// version is the highest row of interviewd_schema. Every node runs the missing steps at
// open in one transaction under an advisory lock, so the first node to start migrates
// and the others wait for it and find nothing left to do. The lock is the
// transaction's (pg_advisory_xact_lock), never the session's: behind a
// transaction-pooling PgBouncer consecutive transactions of one connection may run on
// different server connections, and a session lock could outlive its unlock there. The
// kv-level migrations (the migrations slice in kv's db.go, over buckets) run after them
// in a serializable transaction: nodes that start together may both run them, and all but
// one then roll back and find nothing left to do.
var pgSchema = []string{
	// 0 → 1: the buckets.
	`CREATE TABLE interviewd_kv (
		bucket text COLLATE "C" NOT NULL,
		key    bytea NOT NULL,
		value  bytea NOT NULL,
		PRIMARY KEY (bucket, key)
	)`,
	// 1 → 2: rate-limit logs shared by the nodes (rate.go). UNLOGGED: a database crash
	// forgets the last minute's admissions, which only relaxes the limits briefly.
	`CREATE UNLOGGED TABLE interviewd_rate (
		key     text COLLATE "C" PRIMARY KEY,
		ts      bigint[] NOT NULL,
		touched bigint NOT NULL
	)`,
	// 2 → 3: one rate-limit decision in one statement (rate.go), so the rows' locks
	// are held for the statement, not for a round trip to the node and back.
	rateDecideSQL,
	// 3 → 4: a rate decision that also checks a cached credential (rate.go), so a
	// request under shared limits still checks its credential in the same round trip.
	rateDecideFencedCreateSQL,
}

// pgSchemaLock is the advisory lock key every node takes while migrating
// (the bytes of "intervwd").
const pgSchemaLock = 0x696e74657276776e

// SchemaVersion is the schema version this engine brings a database to.
func SchemaVersion() int { return len(pgSchema) }

// NewerSchemaError reports a database migrated by a newer interviewd.
type NewerSchemaError struct{ Have, Know int }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database has schema version %d; this interviewd understands up to %d", e.Have, e.Know)
}

// Migrate brings the database to this version's schema, then runs prepare (the
// buckets' migrations and the instance secret) in one serializable transaction. A
// database from a newer interviewd is a *NewerSchemaError.
func (e *Engine) Migrate(ctx context.Context, prepare func(engine.Tx) error) error {
	if err := e.migrateSchema(ctx); err != nil {
		return err
	}
	return e.Update(ctx, prepare)
}

// migrateSchema runs the missing schema steps in one transaction, under the schema lock.
// The transaction is READ COMMITTED: each statement sees what was committed before it,
// the version read after the lock included.
func (e *Engine) migrateSchema(ctx context.Context) error {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // after Commit, a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgSchemaLock)); err != nil {
		return fmt.Errorf("take the schema lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS interviewd_schema (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("create the schema table: %w", err)
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM interviewd_schema`).Scan(&v); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if v > len(pgSchema) {
		return &NewerSchemaError{Have: v, Know: len(pgSchema)}
	}
	for ; v < len(pgSchema); v++ {
		if _, err := tx.Exec(ctx, pgSchema[v]); err != nil {
			return fmt.Errorf("migrate database schema %d→%d: %w", v, v+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO interviewd_schema (version) VALUES ($1)`, v+1); err != nil {
			return fmt.Errorf("migrate database schema %d→%d: %w", v, v+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate database schema: %w", err)
	}
	return nil
}
