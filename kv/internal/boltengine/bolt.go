// Package boltengine is kv's default storage engine: one bbolt file, written through a
// group committer (commit.go) so concurrent writers share a commit and its fsyncs. It
// implements the seam (kv/internal/engine) and keeps bbolt's types to itself; only kv
// imports it.
package boltengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"interviewd/kv/internal/engine"
)

// ErrLocked reports that another process holds the file beyond the lock timeout.
var ErrLocked = errors.New("boltengine: the file is locked by another process")

// Options configures Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock another process holds.
	LockTimeout time.Duration
	// NoSync skips fsync on commit (bulk loads in benchmarks only).
	NoSync bool
	// Solo makes every write commit alone, without group commit (benchmarks only).
	Solo bool
	// OnCommit, when set, hears how long each commit took from the end of its writers'
	// work to its being on disk.
	OnCommit func(time.Duration)
	// WrapWrite, when set, wraps each read-write transaction once, before the writers
	// of its group see it: kv's conversation cache logs what a transaction writes this
	// way. The transaction the writers get is what it returns.
	WrapWrite func(engine.Tx) engine.Tx
}

// Engine is an open bbolt file. Reads go to bbolt directly; writes go through the
// group committer.
type Engine struct {
	db    *bolt.DB
	group *committer
}

// Open opens (creating if needed) the file at path and runs prepare (the buckets,
// migrations, the instance secret) in one read-write transaction before any writer is
// taken. A file it creates is made durable with its folder's entry (unless NoSync). It
// returns ErrLocked when another process holds the file beyond opts.LockTimeout, and
// prepare's error as it is.
func Open(path string, opts Options, prepare func(engine.Tx) error) (*Engine, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	b.NoSync = opts.NoSync
	if err := b.Update(func(tx *bolt.Tx) error { return prepare(boltTx{tx}) }); err != nil {
		_ = b.Close()
		return nil, err
	}
	if created && !opts.NoSync {
		// bbolt syncs the new file, not the folder holding its name: without this a
		// power cut could lose the file and its secret after Open said it was there.
		dir := filepath.Dir(path)
		if err := syncFolders(dir, filepath.Dir(dir)); err != nil {
			_ = b.Close()
			return nil, err
		}
	}
	group := newCommitter(b, opts.Solo)
	group.observe = opts.OnCommit
	group.wrap = opts.WrapWrite
	group.start()
	return &Engine{db: b, group: group}, nil
}

// syncFolders fsyncs each folder, where folders can be synced (not on Windows).
func syncFolders(dirs ...string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			return fmt.Errorf("sync folder %s: %w", d, err)
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync folder %s: %w", d, err)
		}
	}
	return nil
}

// View runs fn in a read-only bbolt transaction.
func (e *Engine) View(_ context.Context, fn func(engine.Tx) error) error {
	return e.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// Update runs fn through the group committer.
func (e *Engine) Update(_ context.Context, fn func(engine.Tx) error) error {
	return e.group.do(fn)
}

// Close answers the writers already waiting for a commit, then closes the file.
// Writes that arrive later fail.
func (e *Engine) Close() error {
	e.group.close()
	return e.db.Close()
}

// Stats returns the read-write transactions committed since open and the writes they
// acknowledged.
func (e *Engine) Stats() (commits, writes uint64) {
	return e.group.commits.Load(), e.group.writes.Load()
}

// Snapshot calls fn, within one read transaction (writers carry on meanwhile), with
// the size of a consistent copy of the whole file and a function that writes that copy.
func (e *Engine) Snapshot(fn func(size int64, writeTo func(io.Writer) (int64, error)) error) error {
	return e.db.View(func(tx *bolt.Tx) error { return fn(tx.Size(), tx.WriteTo) })
}

// File returns the bbolt handle, for tests that reach under the engine (a file made to
// look like an older schema, a writer lock held on purpose).
func (e *Engine) File() *bolt.DB { return e.db }

// Hold takes the lock of the existing file at path, waiting at most timeout, and
// returns the function that lets it go: ErrLocked when another process holds it. A
// file too damaged to open returns its error.
func Hold(path string, timeout time.Duration) (release func() error, err error) {
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return b.Close, nil
}

// maxProblems bounds the consistency-check problems Inspect reports.
const maxProblems = 5

// Inspect opens the file at path read-only and, in one read transaction, runs bbolt's
// consistency check over every page and calls fn with the file's size, the first few
// problems found (none when it passes) and the transaction, for fn to read what it
// needs. An error opening the file is bbolt's, as it is.
func Inspect(path string, fn func(size int64, problems []string, tx engine.Tx) error) error {
	b, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return &OpenError{Err: err}
	}
	defer b.Close()
	return b.View(func(tx *bolt.Tx) error {
		var problems []string
		for err := range tx.Check() {
			if len(problems) < maxProblems {
				problems = append(problems, err.Error())
			}
		}
		return fn(tx.Size(), problems, boltTx{tx})
	})
}

// OpenError is Inspect's failure to open a file at all.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// The transaction, bucket and cursor are bbolt's own, behind one-pointer wrappers
// (stored in an interface without an allocation).

type boltTx struct{ tx *bolt.Tx }

func (t boltTx) Bucket(name []byte) engine.Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

func (t boltTx) CreateBucketIfNotExists(name []byte) (engine.Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return boltBucket{b}, nil
}

func (t boltTx) OnCommit(fn func()) { t.tx.OnCommit(fn) }
func (t boltTx) Writable() bool     { return t.tx.Writable() }

type boltBucket struct{ b *bolt.Bucket }

func (b boltBucket) Get(key []byte) []byte                    { return b.b.Get(key) }
func (b boltBucket) Put(key, value []byte) error              { return b.b.Put(key, value) }
func (b boltBucket) Delete(key []byte) error                  { return b.b.Delete(key) }
func (b boltBucket) Cursor() engine.Cursor                    { return boltCursor{b.b.Cursor()} }
func (b boltBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

type boltCursor struct{ c *bolt.Cursor }

func (c boltCursor) First() ([]byte, []byte)        { return c.c.First() }
func (c boltCursor) Last() ([]byte, []byte)         { return c.c.Last() }
func (c boltCursor) Seek(k []byte) ([]byte, []byte) { return c.c.Seek(k) }
func (c boltCursor) Next() ([]byte, []byte)         { return c.c.Next() }
func (c boltCursor) Prev() ([]byte, []byte)         { return c.c.Prev() }
