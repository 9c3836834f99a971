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
// bucket, the schema version and the secret. bbolt syncs a file it creates and every
// commit twice, and grows it with one more: four syncs, the slowest part of a first
// start. Instead the file is prepared where a sync costs nothing (memory-backed
// /dev/shm, where there is one), written under a temporary name in the data folder,
// synced once and linked into place, then the folder is synced: two syncs, and a crash
// midway leaves at most a stray temporary file, never a half-made data file. When
// another process creates the file first, its file wins.
//
// This is only a shortcut: when the scratch folder cannot be used, or the data folder's
// filesystem has no hard links (EPERM, ENOTSUP, EXDEV...), createFile leaves no file
// and Open takes the plain path, bolt.Open creating the file and prepareOnce preparing
// it, slower but sound. Any fault of the data folder itself shows up there. scratch and
// link replace the scratch folder and os.Link when set.
func createFile(path, scratch string, link func(oldname, newname string) error) error {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there already, or an error bolt.Open will report
	}
	if link == nil {
		link = os.Link
	}
	img, err := preparedImage(scratch)
	if err != nil {
		return nil // no usable scratch folder: the plain path
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, FileName+".new-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(img)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil // no hard links here: the plain path (the deferred Remove drops tmp)
	}
	return syncPath(dir) // the new name is durable before anything is written under it
}

// preparedImage returns the bytes of a freshly prepared data file, made in a scratch
// folder (scratch if set, else /dev/shm when it exists, else the system's temporary
// folder) without syncs beyond the one bbolt makes at creation, and removed afterwards.
func preparedImage(scratch string) ([]byte, error) {
	if scratch == "" {
		scratch = os.TempDir()
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			scratch = "/dev/shm"
		}
	}
	f, err := os.CreateTemp(scratch, "interviewd-new-*.db")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Close(); err != nil {
		return nil, err
	}
	b, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, NoGrowSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	db := &DB{bolt: b}
	err = b.Update(db.prepare)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(tmp)
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
