package kv

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// The bbolt engine: Tx, Bucket and Cursor are bbolt's own, behind one-pointer wrappers
// (stored in an interface without an allocation).

type boltTx struct{ tx *bolt.Tx }

func (t boltTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

func (t boltTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
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
func (b boltBucket) Cursor() Cursor                           { return boltCursor{b.b.Cursor()} }
func (b boltBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

type boltCursor struct{ c *bolt.Cursor }

func (c boltCursor) First() ([]byte, []byte)        { return c.c.First() }
func (c boltCursor) Last() ([]byte, []byte)         { return c.c.Last() }
func (c boltCursor) Seek(k []byte) ([]byte, []byte) { return c.c.Seek(k) }
func (c boltCursor) Next() ([]byte, []byte)         { return c.c.Next() }
func (c boltCursor) Prev() ([]byte, []byte)         { return c.c.Prev() }

// boltEngine reads through bbolt directly and writes through the group committer.
type boltEngine struct {
	db    *bolt.DB
	group *committer
}

func (e *boltEngine) view(_ context.Context, fn func(Tx) error) error {
	return e.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

func (e *boltEngine) update(_ context.Context, fn func(Tx) error) error { return e.group.do(fn) }

func (e *boltEngine) close() error {
	e.group.close()
	return e.db.Close()
}

// boltWriteTx is a read-write transaction of the bbolt engine. When the store keeps a
// conversation cache, it logs the key of every Put and Delete and hands the log to the
// cache once the transaction commits (conversation_cache.go).
type boltWriteTx struct {
	tx    *bolt.Tx
	cache *convCache // nil: nothing listens
	log   *writeLog  // what this transaction wrote; nil until its first write
}

func newBoltWriteTx(tx *bolt.Tx, cache *convCache) *boltWriteTx {
	return &boltWriteTx{tx: tx, cache: cache}
}

func (t *boltWriteTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltWriteBucket{b: b, name: name, tx: t}
}

func (t *boltWriteTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return boltWriteBucket{b: b, name: name, tx: t}, nil
}

func (t *boltWriteTx) OnCommit(fn func()) { t.tx.OnCommit(fn) }
func (t *boltWriteTx) Writable() bool     { return true }

// wrote logs a write of key in bucket, and registers the log's delivery with the
// transaction's first write.
func (t *boltWriteTx) wrote(bucket, key []byte) {
	if t.cache == nil || !convBucket(bucket) {
		return
	}
	if t.log == nil {
		t.log = &writeLog{}
		log, cache := t.log, t.cache
		t.tx.OnCommit(func() { cache.committed(log.written, log.through) })
	}
	k := depKey(bucket, key)
	t.log.written = append(t.log.written, k)
	delete(t.log.through, k) // a described interview record stays described only until rewritten
}

type boltWriteBucket struct {
	b    *bolt.Bucket
	name []byte
	tx   *boltWriteTx
}

func (b boltWriteBucket) Get(key []byte) []byte { return b.b.Get(key) }

func (b boltWriteBucket) Put(key, value []byte) error {
	if err := b.b.Put(key, value); err != nil {
		return err
	}
	b.tx.wrote(b.name, key)
	return nil
}

func (b boltWriteBucket) Delete(key []byte) error {
	if err := b.b.Delete(key); err != nil {
		return err
	}
	b.tx.wrote(b.name, key)
	return nil
}

func (b boltWriteBucket) Cursor() Cursor                           { return boltCursor{b.b.Cursor()} }
func (b boltWriteBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }
