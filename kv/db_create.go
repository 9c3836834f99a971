package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// createFile makes the data file at path when there is none, ready to serve: every
// bucket, the schema version and the secret. It prepares the file under a temporary
// name without syncing each step, syncs it once and links it into place: a fresh
// server pays three syncs (bbolt's creation, the file, the folder) instead of the four
// of bbolt creating the file, growing it and committing the first transaction, and a
// crash midway leaves at most a stray temporary file, never a half-made data file.
// When another process creates the file first, its file wins.
func createFile(path string) (err error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there already, or an error bolt.Open will report
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, FileName+".new-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Close(); err != nil {
		return err
	}
	b, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, NoGrowSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	db := &DB{bolt: b}
	err = b.Update(db.prepare)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := syncPath(tmp); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return syncPath(dir) // the new name is durable before anything is written under it
}

// syncPath fsyncs the file or folder at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// prepareOnce makes sure the open file has every bucket, this schema version and the
// secret, writing only when something is missing.
func (db *DB) prepareOnce() error {
	ready := false
	if err := db.bolt.View(func(tx *bolt.Tx) error { ready = db.prepared(tx); return nil }); err != nil {
		return err
	}
	if ready {
		return nil
	}
	return db.bolt.Update(db.prepare)
}

// prepared reports whether the open file already has everything prepare makes (every
// bucket, this schema version, the secret), taking the secret if so: a restart then
// opens without writing, where an empty update would still cost a commit's two syncs.
func (db *DB) prepared(tx *bolt.Tx) bool {
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return false
		}
	}
	meta := tx.Bucket(bucketMeta)
	secret := meta.Get([]byte("secret"))
	if string(meta.Get([]byte("schema"))) != itoa(schemaVersion) || secret == nil {
		return false
	}
	db.secret = append([]byte(nil), secret...)
	return true
}
