package kv

import (
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// timed runs fn through write (Update or Batch) and reports to the commit hook the time
// from fn's last return to write's: the commit and its fsync (for a batch, shared with
// the others in it).
func (db *DB) timed(write func(func(*bolt.Tx) error) error, fn func(*bolt.Tx) error) error {
	var done time.Time
	err := write(func(tx *bolt.Tx) error {
		err := fn(tx)
		done = time.Now()
		return err
	})
	if err == nil && !done.IsZero() {
		db.commit(time.Since(done))
	}
	return err
}

// FileSize returns the database file's size in bytes (0 if it cannot be read).
func (db *DB) FileSize() int64 {
	st, err := os.Stat(filepath.Join(db.dir, FileName))
	if err != nil {
		return 0
	}
	return st.Size()
}
