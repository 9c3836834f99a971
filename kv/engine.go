package kv

import "interviewd/kv/internal/engine"

// The engine seam (kv/internal/engine): every method here is one transaction over named
// buckets of byte-ordered keys, spoken through Tx, Bucket and Cursor, so the same code
// runs over bbolt (kv/internal/boltengine: one file, the default) and PostgreSQL
// (kv/internal/pgengine: several nodes sharing one database). A read-write function may
// run more than once (group commit, serialization retries): it must only touch the
// transaction and its own result variables, setting them on every run.

// Tx is one transaction.
type Tx = engine.Tx

// Bucket is a named set of key/value pairs ordered by key.
type Bucket = engine.Bucket

// Cursor walks a bucket's keys in byte order.
type Cursor = engine.Cursor
