package kv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/blobs"
	"interviewd/kv/internal/boltengine"
	"interviewd/kv/internal/engine"
	"interviewd/kv/internal/pgengine"
)

// FileName is the database file inside the data folder.
const FileName = "interviewd.db"

// schemaVersion is the version the migrations below bring a file to.
const schemaVersion = 3

// migrations[i] moves a file from schema version i to i+1. Each runs in the opening
// transaction, so a file is never left between versions.
var migrations = []func(tx Tx) error{
	func(Tx) error { return nil }, // 0 → 1: the buckets, created at open
	indexStudies,                  // 1 → 2: the compact list rows of studies
	indexPeople,                   // 2 → 3: users' membership index, two-step defaults
}

// Options configures Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock another process holds.
	LockTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoSync skips fsync on commit: for bulk loads in benchmarks only, never serving
	// (a crash could lose committed writes).
	NoSync bool
	// SoloCommits makes every mutation commit alone, as before group commit: for
	// comparing the two in benchmarks only (it is slower and no safer).
	SoloCommits bool
	// Blobs is where uploads, export artifacts and plugins are kept; nil means the fs
	// store in DIR/blobs.
	Blobs blobs.Store
	// Store, when it is a postgres:// URL, keeps the records in that PostgreSQL
	// database instead of DIR/interviewd.db; DIR still holds the blobs unless Blobs
	// names another store.
	Store string
	// Log hears what the store reports on its own: on PostgreSQL, the server's
	// notices. The zero Logger discards them.
	Log zerolog.Logger
	// OnCommit, when set, hears how long each committed write took from the end of its
	// work to its commit being on disk (for the commit-latency metric).
	OnCommit func(time.Duration)
}

// DB is the store. Every public method is one transaction of its engine.
type DB struct {
	eng    engine.Engine
	bolt   *boltengine.Engine // the bbolt engine; nil on other engines
	pg     *pgengine.Engine   // the PostgreSQL engine; nil on other engines
	dir    string
	now    func() time.Time
	ids    idSource
	secret []byte // per-instance secret for signing (download URLs, sessions)
	cache  caches
	blobs  blobs.Store
}

// caches are the store's in-memory caches, one file each (*_cache.go). Each is kept
// exact by the transactions that change what it holds (invalidated on commit, before
// the writer returns), or can only save work, never answer what the store no longer
// holds (briefs).
type caches struct {
	credentials  *credentialCache  // resolved API keys (credential_cache.go)
	accessTokens *accessTokenCache // resolved OAuth access tokens (access_token_cache.go)
	// studies holds study records as committed, on an engine no other process writes;
	// nil on a shared store (study_cache.go).
	studies *studyCache
	// conversations holds conversation heads as committed, on an engine no other
	// process writes; nil on a shared store (conversation_cache.go).
	conversations *conversationCache
	briefs        briefCache // decoded design versions (brief_cache.go)
}

// Open opens (creating if needed) DIR/interviewd.db and DIR/blobs/, creates every bucket
// and runs migrations. It returns an ELOCKED error when another process holds the file
// beyond opts.LockTimeout, and an EINVALID error for a file from a newer interviewd.
func Open(dir string, opts Options) (*DB, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Blobs == nil {
		fs, err := blobs.NewFS(filepath.Join(dir, "blobs"))
		if err != nil {
			return nil, err
		}
		opts.Blobs = fs
	}
	if IsPostgres(opts.Store) {
		return openPostgresDB(dir, opts)
	}
	db := &DB{dir: dir, now: opts.Now, blobs: opts.Blobs, cache: caches{
		credentials:   newCredentialCache(),
		accessTokens:  newAccessTokenCache(),
		studies:       newStudyCache(),
		conversations: newConversationCache(),
	}}
	eng, err := boltengine.Open(filepath.Join(dir, FileName), boltengine.Options{
		LockTimeout: opts.LockTimeout,
		NoSync:      opts.NoSync,
		Solo:        opts.SoloCommits,
		OnCommit:    opts.OnCommit,
		WrapWrite:   db.cache.conversations.logWrites,
	}, db.prepare)
	if errors.Is(err, boltengine.ErrLocked) {
		return nil, Errorf(ELOCKED, "data_locked", fmt.Sprintf("data folder %s is in use by another interviewd process", dir))
	}
	if err != nil {
		return nil, err
	}
	db.eng, db.bolt = eng, eng
	return db, nil
}

// prepare creates every bucket, runs the migrations the store lacks and takes (or
// makes) the instance secret.
func (db *DB) prepare(tx Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	v := 0
	if raw := meta.Get([]byte("schema")); raw != nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
	}
	if v > schemaVersion {
		return Errorf(EINVALID, "schema_newer", fmt.Sprintf("data file has schema version %d; this interviewd understands up to %d", v, schemaVersion))
	}
	for ; v < schemaVersion; v++ {
		if err := migrations[v](tx); err != nil {
			return fmt.Errorf("migrate schema %d→%d: %w", v, v+1, err)
		}
	}
	if err := meta.Put([]byte("schema"), []byte(itoa(schemaVersion))); err != nil {
		return err
	}
	secret := meta.Get([]byte("secret"))
	if secret == nil {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return err
		}
		if err := meta.Put([]byte("secret"), secret); err != nil {
			return err
		}
	}
	db.secret = append([]byte(nil), secret...)
	return nil
}

// Close answers the writers already waiting for a commit, then closes the file. Writes
// that arrive later fail.
func (db *DB) Close() error {
	return db.eng.Close()
}

// Dir returns the data folder.
func (db *DB) Dir() string { return db.dir }

// BlobDir returns DATA/blobs: the fs store's folder by default, and always the home of
// the scratch folder (blobs.ScratchDir) where uploads and exports are written before
// they are stored.
func (db *DB) BlobDir() string { return filepath.Join(db.dir, "blobs") }

// Blobs returns the store of uploads, export artifacts and plugins.
func (db *DB) Blobs() blobs.Store { return db.blobs }

// blobsInFolder reports whether the blob store is the fs store in DATA/blobs, whose files
// a backup carries.
func (db *DB) blobsInFolder() bool {
	f, ok := db.blobs.(*blobs.FS)
	return ok && filepath.Clean(f.Dir()) == filepath.Clean(db.BlobDir())
}

// Secret returns the instance's 32-byte signing secret, created at first open.
func (db *DB) Secret() []byte { return db.secret }

// Now returns the store's clock reading.
func (db *DB) Now() time.Time { return db.now().UTC() }

// NewID returns a fresh UUIDv7 for the store's clock.
func (db *DB) NewID() ID { return db.ids.newV7(db.now()) }

// Backup writes a consistent copy of the whole file to w while the store stays online.
func (db *DB) Backup(w io.Writer) error {
	if db.bolt == nil {
		return errNotBolt("backup")
	}
	return db.bolt.Snapshot(func(_ int64, writeTo func(io.Writer) (int64, error)) error {
		_, err := writeTo(w)
		return err
	})
}

// Empty reports whether the store holds no organisation yet.
func (db *DB) Empty(ctx context.Context) (bool, error) {
	empty := true
	err := db.view(ctx, func(tx Tx) error {
		k, _ := tx.Bucket(bucketOrgs).Cursor().First()
		empty = k == nil
		return nil
	})
	return empty, err
}

func (db *DB) view(ctx context.Context, fn func(tx Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.eng.View(ctx, fn)
}

// update runs fn in a read-write transaction and returns once it is committed and
// durable, or with fn's error (nothing of fn's is kept). Concurrent callers share one
// commit and one fsync (bbolt's group commit), so fn may run more than once: it must only touch
// the transaction and its own result variables, setting them on every run.
func (db *DB) update(ctx context.Context, fn func(tx Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.eng.Update(ctx, fn)
}

func getJSON(b Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode record %x: %w", key, err)
	}
	return true, nil
}

func putJSON(b Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// errNotBolt answers what only the bbolt engine can do (a file-level backup): the
// PostgreSQL engine's database is backed up with PostgreSQL's own tools.
func errNotBolt(what string) *Error {
	return Errorf(EINVALID, "not_supported", what+" copies the bbolt data file; back a PostgreSQL store up with pg_dump or pg_basebackup.")
}

func notFound(what string) *Error {
	return Errorf(ENOTFOUND, "not_found", what+" not found.")
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// CommitStats counts the store's read-write commits since it was opened.
type CommitStats struct {
	// Commits is the number of read-write transactions committed (each one commit and
	// its fsyncs, unless NoSync).
	Commits uint64
	// Writes is the number of mutations those commits acknowledged; Writes/Commits is
	// how many writers shared a commit on average.
	Writes uint64
}

// CommitStats returns the commit counters of the bbolt engine's group commit (zero on
// other engines).
func (db *DB) CommitStats() CommitStats {
	if db.bolt == nil {
		return CommitStats{}
	}
	commits, writes := db.bolt.Stats()
	return CommitStats{Commits: commits, Writes: writes}
}
