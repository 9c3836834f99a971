package kv

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"interviewd/kv/internal/pgengine"
)

// pgOpenTimeout bounds connecting and migrating at open (another node's migration
// holds the schema lock meanwhile).
const pgOpenTimeout = 2 * time.Minute

// IsPostgres reports whether a --store value names a PostgreSQL database.
func IsPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// openPostgresDB opens the store on the PostgreSQL database at opts.Store. A request's
// credential check rides on its next statement there (auth_fence.go).
func openPostgresDB(dir string, opts Options) (*DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgOpenTimeout)
	defer cancel()
	eng, err := pgengine.Open(ctx, opts.Store, pgengine.Options{
		Log:    opts.Log,
		Fences: pgengine.Fences{Bucket: string(bucketAuthEpochs), Pending: pendingCheck},
	})
	var ue *pgengine.URLError
	if errors.As(err, &ue) {
		return nil, Errorf(EINVALID, "store_invalid", "The --store address is not a valid PostgreSQL URL: "+ue.Err.Error())
	}
	if err != nil {
		return nil, err
	}
	db := &DB{eng: eng, pg: eng, dir: dir, now: opts.Now, blobs: opts.Blobs, cache: caches{
		credentials:  newCredentialCache(),
		accessTokens: newAccessTokenCache(),
	}}
	err = eng.Migrate(ctx, db.prepare)
	var newer *pgengine.NewerSchemaError
	if errors.As(err, &newer) {
		err = Errorf(EINVALID, "schema_newer", newer.Error())
	}
	if err != nil {
		_ = eng.Close()
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
	return db.pg.Retries()
}

// readOne calls fn with the value of key in bucket (nil when there is none), read on
// its own. One read needs no transaction to be consistent, so on PostgreSQL it is one
// statement in one round trip, shared with the reads that arrive meanwhile, and a
// credential check due under ctx (auth_fence.go) is read by the same statement
// (pgengine.ReadOne).
func (db *DB) readOne(ctx context.Context, bucket, key []byte, fn func(v []byte) error) error {
	if db.pg == nil {
		return db.view(ctx, func(tx Tx) error { return fn(tx.Bucket(bucket).Get(key)) })
	}
	return db.pg.ReadOne(ctx, bucket, key, fn)
}
