package kv

import (
	"bytes"
	"fmt"
	"sync"
)

// A design version is never changed once written (a refinement writes the next
// version), yet every participant turn needs the brief its interview started with.
// briefCache keeps recently read versions decoded, each with the stored bytes it was
// decoded from: a turn still reads the record, but only compares it with those bytes
// instead of decoding it again. A version that is gone or different (a restored
// backup, another node's store) never matches, so the cache can only save work, never
// answer something the store no longer holds.
type briefCache struct {
	mu sync.Mutex
	m  map[string]cachedBrief
}

type cachedBrief struct {
	raw   []byte
	brief Brief
}

// maxCachedBriefs bounds the cache; when it is full it starts over, which costs one
// decode per version in use.
const maxCachedBriefs = 1024

// get returns the brief decoded from raw if it was cached under key.
func (c *briefCache) get(key, raw []byte) (Brief, bool) {
	c.mu.Lock()
	e, ok := c.m[string(key)]
	c.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return Brief{}, false
	}
	return e.brief.clone(), true
}

// put keeps b, decoded from raw, under key.
func (c *briefCache) put(key, raw []byte, b Brief) {
	e := cachedBrief{raw: bytes.Clone(raw), brief: b.clone()}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedBriefs {
		c.m = make(map[string]cachedBrief)
	}
	c.m[string(key)] = e
	c.mu.Unlock()
}

// clone returns a copy of b that shares nothing writable with it, so a caller may
// change its brief without touching the cached one.
func (b Brief) clone() Brief {
	out := b.Normalised()
	if b.Title != nil {
		t := *b.Title
		out.Title = &t
	}
	if b.EstimatedDurationMinutes != nil {
		n := *b.EstimatedDurationMinutes
		out.EstimatedDurationMinutes = &n
	}
	return out
}

// conversationBrief returns the normalised brief of design version v of study id in p,
// from the cache when the stored version is the one cached. ENOTFOUND when the version
// is not stored.
func (db *DB) conversationBrief(tx Tx, p Partition, id ID, v int) (Brief, error) {
	if v < 1 {
		return Brief{}, notFound("Design version")
	}
	key := briefKey(p, id, v)
	raw := tx.Bucket(bucketBriefs).Get(key)
	if raw == nil {
		return Brief{}, notFound("Design version")
	}
	if b, ok := db.cache.briefs.get(key, raw); ok {
		return b, nil
	}
	var bv BriefVersion
	if err := jsonUnmarshal(raw, &bv); err != nil {
		return Brief{}, fmt.Errorf("decode record %x: %w", key, err)
	}
	b := bv.Brief.Normalised()
	db.cache.briefs.put(key, raw, b)
	return b, nil
}
