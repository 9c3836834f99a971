package kv

import (
	"context"
	"net/url"
	"time"
)

// pgOpenTimeout bounds connecting and migrating at open (another node's migration
// holds the schema lock meanwhile).
const pgOpenTimeout = 2 * time.Minute

// openPostgresDB opens the store on the PostgreSQL database at opts.Store.
func openPostgresDB(dir string, opts Options) (*DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgOpenTimeout)
	defer cancel()
	eng, err := openPostgres(ctx, opts.Store, opts.Log)
	if err != nil {
		return nil, err
	}
	db := &DB{eng: eng, pg: eng, dir: dir, now: opts.Now, creds: newCredCache(), access: newAccessCache(), blobs: opts.Blobs}
	if err := eng.migrate(ctx, db.prepare); err != nil {
		_ = eng.close()
		return nil, err
	}
	return db, nil
}

// RedactStore returns store with any password replaced, for logs and errors.
func RedactStore(store string) string {
	u, err := url.Parse(store)
	if err != nil || u.User == nil {
		if err != nil {
			return "(unparsable)"
		}
		return store
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// StoreRetries returns how many transactions the PostgreSQL engine ran again after a
// serialization failure or a deadlock since open (0 on bbolt): a steadily rising rate
// means nodes contend for the same records.
func (db *DB) StoreRetries() uint64 {
	if db.pg == nil {
		return 0
	}
	return db.pg.retries.Load()
}

// readOne calls fn with the value of key in bucket (nil when there is none), read on
// its own. One read needs no transaction to be consistent, so on PostgreSQL it is one
// statement in one round trip, where a transaction would add its BEGIN and COMMIT,
// shared with the reads that arrive meanwhile (read_group.go); a credential check due
// under ctx (auth_fence.go) is read by the same statement.
func (db *DB) readOne(ctx context.Context, bucket, key []byte, fn func(v []byte) error) error {
	if db.pg == nil {
		return db.view(ctx, func(tx Tx) error { return fn(tx.Bucket(bucket).Get(key)) })
	}
	f, err := pendingFence(ctx)
	if err != nil {
		return err
	}
	var org []byte
	if f != nil {
		org = f.org[:]
	}
	c := newReadCall(string(bucket), key, org)
	defer c.release()
	read := db.pg.reads.read
	if db.pg.ungrouped {
		read = db.pg.readAlone
	}
	if err := read(ctx, c); err != nil {
		return err
	}
	if f != nil {
		if err := f.resolve(epochOf(c.epoch)); err != nil {
			return err
		}
	}
	switch {
	case !c.found:
		return fn(nil)
	case c.value == nil:
		return fn([]byte{})
	}
	return fn(c.value)
}

// readOneFencedSQL reads a record ($1, $2) and an organisation's credential epoch ($3,
// $4) in one statement; found tells a missing record from an empty value.
const readOneFencedSQL = `SELECT r.key IS NOT NULL, r.value, e.value
	FROM (VALUES (1)) AS one (x)
	LEFT JOIN interviewd_kv r ON r.bucket = $1 AND r.key = $2
	LEFT JOIN interviewd_kv e ON e.bucket = $3 AND e.key = $4`
