// Package engine is the seam between kv and its storage engines: the transaction,
// bucket and cursor every kv method speaks, and the engine that runs transactions.
// kv's record code sees only these; the engines (boltengine, pgengine) implement them.
// It imports nothing but the standard library.
//
// Every kv method is one transaction over named buckets of byte-ordered keys. The
// methods speak to the engine only through Tx, Bucket and Cursor, so the same code runs
// over bbolt (one file, the default) and over PostgreSQL (several nodes sharing one
// database). Their semantics are bbolt's, which the PostgreSQL engine reproduces:
//
//   - keys compare bytewise; a cursor walks them in that order;
//   - a slice returned by Get or a cursor is valid until the transaction ends;
//   - a read-write function may run more than once (group commit, serialization
//     retries): it must only touch the transaction and its own result variables,
//     setting them on every run;
//   - a read that fails inside the engine (a lost connection) makes the transaction
//     fail as a whole with that error, whatever the function returns, so a failed read
//     is never mistaken for a missing key.
package engine

import "context"

// Tx is one transaction.
type Tx interface {
	// Bucket returns the named bucket, or nil if it does not exist.
	Bucket(name []byte) Bucket
	// CreateBucketIfNotExists returns the named bucket, creating it if needed.
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	// OnCommit registers fn to run once the transaction has committed (never if it
	// rolls back).
	OnCommit(fn func())
	// Writable reports whether the transaction may write.
	Writable() bool
}

// Bucket is a named set of key/value pairs ordered by key.
type Bucket interface {
	// Get returns the value of key, or nil if there is none.
	Get(key []byte) []byte
	// Put sets key to value; value may be empty but not nil.
	Put(key, value []byte) error
	// Delete removes key; removing a missing key is not an error.
	Delete(key []byte) error
	// Cursor returns a cursor over the bucket's keys in byte order.
	Cursor() Cursor
	// ForEach calls fn for every pair in key order, stopping at fn's first error. fn
	// must not write to the bucket.
	ForEach(fn func(k, v []byte) error) error
}

// Cursor walks a bucket's keys in byte order. Each move returns the key and value it
// lands on, or nil, nil past either end.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	// Seek moves to key, or to the first key after it.
	Seek(key []byte) (k, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
}

// Engine runs transactions. ctx bounds waiting for the engine (a connection, a lock);
// bbolt, which never waits on a network, only checks it before starting.
type Engine interface {
	// View runs fn in a read-only transaction over a consistent snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a read-write transaction and returns once it is committed and
	// durable, or with fn's error (nothing of fn's kept). fn may run more than once.
	Update(ctx context.Context, fn func(Tx) error) error
	// Close ends the engine; transactions after it fail.
	Close() error
}
