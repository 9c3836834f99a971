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
	eng, err := openPostgres(ctx, opts.Store)
	if err != nil {
		return nil, err
	}
	db := &DB{eng: eng, pg: eng, dir: dir, now: opts.Now, creds: &credCache{off: true}, blobs: opts.Blobs}
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
