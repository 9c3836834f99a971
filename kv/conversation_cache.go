package kv

import (
	"bytes"
	"slices"
	"strings"
	"sync"
)

// Conversations without their transcript, as committed, for the read every participant
// turn starts with (FindConversationHead): a hit is a map lookup instead of a read
// transaction, four record reads and two JSON decodes.
//
// Only a store no other process writes has one (bbolt). Its entries are kept exact by
// what the engine itself sees: the read that fills an entry records every key it
// read (its dependencies), every read-write transaction records every key it writes,
// and once that transaction commits, before its writers are answered, each entry that
// depends on a written key is dropped. There is no list of writers to keep up to date:
// a new writer of links, sessions, interviews or briefs invalidates what it must
// because it writes through the same Bucket.
//
// A turn rewrites its interview's record, so dropping the entry would make every turn
// a miss. The turn's writer says what the record it wrote decodes to (throughInterview),
// and the commit replaces the entry's interview instead of dropping it, unless another
// of the entry's keys was written in the same commit.
//
// A read that started before a commit may have read what that commit then replaced.
// Each commit advances gen and stamps the keys it wrote with it; a read caches what it
// read only if none of its keys was stamped after the gen it saw before reading.

// conversationCacheMax bounds the cached conversations (a link, an interview record and a
// brief each: a few KB); when it is full it starts over.
const conversationCacheMax = 4096

// convStampsMax bounds the written-key stamps; when it is full they are dropped and
// every read that began before is treated as stale (floor).
const convStampsMax = 1 << 15

type conversationCache struct {
	mu      sync.RWMutex
	gen     uint64
	floor   uint64            // reads that began before this gen never cache
	stamps  map[string]uint64 // key (bucket and key) → gen of the last commit that wrote it
	entries map[string]*convEntry
	// deps lists, for each key, the entries that read it. A dropped entry leaves the
	// lists of its other keys lazily; linked counts what the lists hold, so that they
	// are rebuilt from the live entries before they grow past a bound.
	deps   map[string][]*convEntry
	linked int
}

// convEntry is one cached conversation. A commit that rewrites its interview with a
// described record updates it in place, under the cache's lock.
type convEntry struct {
	id      string // token and session hash
	conv    Conversation
	keys    []string // every key its read read
	ivKey   string   // the key of its interview record
	removed bool
}

func newConversationCache() *conversationCache {
	return &conversationCache{stamps: map[string]uint64{}, entries: map[string]*convEntry{}, deps: map[string][]*convEntry{}}
}

// convID is the cache key of a session's conversation through a link. It holds the
// session itself, so that a hit needs no hash; the cache lives in memory only, where
// the session also passes on every request. A token holding a NUL byte (none is made)
// could make two pairs one id: such a token is never looked up in the cache.
func convID(token, session string) string {
	return token + "\x00" + session
}

// depKey names key in bucket as the cache and the write log name it.
func depKey(bucket, key []byte) string {
	b := make([]byte, 0, len(bucket)+1+len(key))
	b = append(append(append(b, bucket...), 0), key...)
	return string(b)
}

// get returns the cached conversation id names. The caller must not write to anything
// the conversation points at, except its brief, which is a copy.
func (c *conversationCache) get(id string) (Conversation, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	var conv Conversation
	if ok {
		conv = e.conv
	}
	c.mu.RUnlock()
	if !ok {
		return Conversation{}, false
	}
	conv.Brief = conv.Brief.clone()
	return conv, true
}

// holds reports whether the cached conversation id names has the interview record
// record, that is whether that record is the committed one.
func (c *conversationCache) holds(id string, record []byte) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[id]
	return ok && bytes.Equal(e.conv.record, record)
}

// generation returns the count of commits so far, to pass to put.
func (c *conversationCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put caches conv, read after generation returned gen by a read that read keys, unless
// a commit since wrote one of them.
func (c *conversationCache) put(id string, conv Conversation, keys []string, ivKey string, gen uint64) {
	conv.Brief = conv.Brief.clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen < c.floor {
		return
	}
	for _, k := range keys {
		if c.stamps[k] > gen {
			return
		}
	}
	c.insert(id, conv, keys, ivKey)
}

// putCommitted caches conv as the commit being heard made it (see cacheOnCommit).
func (c *conversationCache) putCommitted(id string, conv Conversation, keys []string, ivKey string) {
	conv.Brief = conv.Brief.clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.insert(id, conv, keys, ivKey)
}

// insert links a new entry; c.mu is held.
func (c *conversationCache) insert(id string, conv Conversation, keys []string, ivKey string) {
	if len(c.entries) >= conversationCacheMax {
		clear(c.entries)
		clear(c.deps)
		c.linked = 0
	}
	if old := c.entries[id]; old != nil {
		old.removed = true
	}
	e := &convEntry{id: id, conv: conv, keys: keys, ivKey: ivKey}
	c.entries[id] = e
	for _, k := range keys {
		c.deps[k] = append(c.deps[k], e)
	}
	c.linked += len(keys)
	if c.linked > 16*conversationCacheMax {
		c.relink()
	}
}

// relink rebuilds the dependency lists from the live entries.
func (c *conversationCache) relink() {
	clear(c.deps)
	c.linked = 0
	for _, e := range c.entries {
		for _, k := range e.keys {
			c.deps[k] = append(c.deps[k], e)
		}
		c.linked += len(e.keys)
	}
}

// writtenInterview is what a writer said the interview record it wrote decodes to.
type writtenInterview struct {
	iv     Interview
	record []byte
}

// committed hears the keys one transaction wrote, in order, once it has committed;
// through holds, for keys whose last write was an interview record its writer
// described, what that record decodes to.
func (c *conversationCache) committed(written []string, through map[string]writtenInterview) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(c.stamps)+len(written) > convStampsMax {
		clear(c.stamps)
		c.floor = c.gen
	}
	for _, k := range written {
		c.stamps[k] = c.gen
	}
	for _, k := range written {
		list, ok := c.deps[k]
		if !ok {
			continue
		}
		keep := list[:0]
		for _, e := range list {
			if e.removed {
				continue
			}
			if w, ok := through[k]; ok && k == e.ivKey && c.onlyWritten(e, k) {
				e.conv.Interview, e.conv.record = w.iv, w.record
				keep = append(keep, e)
				continue
			}
			e.removed = true
			delete(c.entries, e.id)
		}
		c.linked -= len(list) - len(keep)
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(c.deps, k)
		} else {
			c.deps[k] = keep
		}
	}
}

// onlyWritten reports whether key is the only one of e's keys the commit being heard
// wrote (stamped with the current gen).
func (c *conversationCache) onlyWritten(e *convEntry, key string) bool {
	for _, k := range e.keys {
		if k != key && c.stamps[k] == c.gen {
			return false
		}
	}
	return true
}

func (c *conversationCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// convBucket reports whether a conversation's read may read bucket: only writes to
// these are logged (a turn's transcript lines, most of what it writes, are not), and a
// read of any other bucket is not cached.
func convBucket(name []byte) bool {
	switch string(name) {
	case string(bucketLinks), string(bucketSessions), string(bucketInterviews), string(bucketBriefs), string(bucketStudies):
		return true
	}
	return false
}

// recordingTx is a read-only transaction that records the key of every Get, for a
// cache entry's dependencies. A read it cannot describe by keys (a cursor, a walk, a
// missing bucket) makes it uncacheable.
type recordingTx struct {
	Tx
	keys        []string
	uncacheable bool
}

func (t *recordingTx) Bucket(name []byte) Bucket {
	b := t.Tx.Bucket(name)
	if b == nil || !convBucket(name) {
		t.uncacheable = true
		return b
	}
	return recordingBucket{Bucket: b, name: name, tx: t}
}

type recordingBucket struct {
	Bucket
	name []byte
	tx   *recordingTx
}

func (b recordingBucket) Get(key []byte) []byte {
	b.tx.keys = append(b.tx.keys, depKey(b.name, key))
	return b.Bucket.Get(key)
}

func (b recordingBucket) Cursor() Cursor {
	b.tx.uncacheable = true
	return b.Bucket.Cursor()
}

func (b recordingBucket) ForEach(fn func(k, v []byte) error) error {
	b.tx.uncacheable = true
	return b.Bucket.ForEach(fn)
}

// writeLog is what one read-write transaction wrote, for the conversation cache once
// it commits.
type writeLog struct {
	written []string
	through map[string]writtenInterview
}

// logWrites wraps a read-write transaction of the bbolt engine, once per transaction
// and before its group's writers see it (boltengine.Options.WrapWrite), so that it logs
// the key of every Put and Delete and hands the log to c once it commits.
func (c *conversationCache) logWrites(tx Tx) Tx { return &loggingTx{tx: tx, cache: c} }

// loggingTx is a read-write transaction that logs what it writes to the conversation
// cache's buckets.
type loggingTx struct {
	tx    Tx
	cache *conversationCache
	log   *writeLog // what this transaction wrote; nil until its first write
}

func (t *loggingTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return loggingBucket{b: b, name: name, tx: t}
}

func (t *loggingTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return loggingBucket{b: b, name: name, tx: t}, nil
}

func (t *loggingTx) OnCommit(fn func()) { t.tx.OnCommit(fn) }
func (t *loggingTx) Writable() bool     { return true }

// wrote logs a write of key in bucket, and registers the log's delivery with the
// transaction's first write.
func (t *loggingTx) wrote(bucket, key []byte) {
	if !convBucket(bucket) {
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

type loggingBucket struct {
	b    Bucket
	name []byte
	tx   *loggingTx
}

func (b loggingBucket) Get(key []byte) []byte { return b.b.Get(key) }

func (b loggingBucket) Put(key, value []byte) error {
	if err := b.b.Put(key, value); err != nil {
		return err
	}
	b.tx.wrote(b.name, key)
	return nil
}

func (b loggingBucket) Delete(key []byte) error {
	if err := b.b.Delete(key); err != nil {
		return err
	}
	b.tx.wrote(b.name, key)
	return nil
}

func (b loggingBucket) Cursor() Cursor                           { return b.b.Cursor() }
func (b loggingBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

// throughInterview tells the conversation cache, if tx has one, that the record just
// put at key in bucketInterviews decodes to iv. It must directly follow that Put.
func throughInterview(tx Tx, key []byte, iv Interview, record []byte) {
	w, ok := tx.(*loggingTx)
	if !ok || w.log == nil {
		return
	}
	if w.log.through == nil {
		w.log.through = map[string]writtenInterview{}
	}
	w.log.through[depKey(bucketInterviews, key)] = writtenInterview{iv: iv, record: record}
}

// conversationKeys returns the keys readConversation reads for conv's head through
// token with the session whose hash is hash, for a conversation whose design version is
// stored (TestConversationKeysAreWhatTheReadReads holds the two together).
func conversationKeys(token string, hash [32]byte, conv Conversation) []string {
	p := conv.Interview.Partition()
	keys := make([]string, 0, 5)
	keys = append(keys, depKey(bucketLinks, []byte(token)))
	if conv.Link.Audience != AudiencePerson {
		keys = append(keys, depKey(bucketSessions, sessionKey(token, hash)))
	}
	return append(keys,
		depKey(bucketSessions, interviewSessionKey(conv.Interview.ID, hash)),
		depKey(bucketInterviews, p.key(conv.Interview.ID)),
		depKey(bucketBriefs, briefKey(p, conv.Interview.StudyID, conv.Interview.DesignVersion)))
}

// cacheOnCommit caches conv, the head that session (whose hash is hash) will read
// through token, once tx commits: a writer that has just made the conversation (a new
// interview and its opening) spares its first turn the read. conv must be what that
// read would return after the commit. Nothing is cached when a later writer of the
// same commit wrote one of its keys, or when tx logs no writes (not the bbolt
// engine's).
func cacheOnCommit(tx Tx, token, session string, hash [32]byte, conv Conversation) {
	w, ok := tx.(*loggingTx)
	if !ok || conv.Interview.DesignVersion < 1 || strings.IndexByte(token, 0) >= 0 {
		return
	}
	conv.token, conv.session, conv.hash, conv.head, conv.Transcript = token, session, hash, true, nil
	keys := conversationKeys(token, hash, conv)
	ivKey := keys[len(keys)-2]
	pos := 0
	if w.log != nil {
		pos = len(w.log.written)
	}
	cache := w.cache
	w.tx.OnCommit(func() {
		// Runs after the write log's own delivery (registered at the transaction's
		// first write, before this), still inside the commit: no other commit can
		// come between, and any read that began before has a stale generation.
		if w.log != nil {
			for _, k := range w.log.written[pos:] {
				if slices.Contains(keys, k) {
					return
				}
			}
		}
		cache.putCommitted(convID(token, session), conv, keys, ivKey)
	})
}
