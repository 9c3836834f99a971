package kv

import (
	"sync"
)

// studyCacheMax bounds the cached study records: at a few KB each, a few MB at most.
const studyCacheMax = 4096

// studyCache keeps study records as committed, for the read every research client
// repeats most (GET a study): a hit is a map lookup instead of a read transaction.
// Only a store no other process writes has one (bbolt); on a shared store another
// node's write could not reach it. putStudy, the only writer of study records,
// invalidates an entry once its transaction commits, before the writer returns.
//
// A reader that read a record just before a write committed must not cache what it
// read after the write's invalidation ran: every invalidation advances gen, and a
// reader caches only if gen is what it was before it read.
type studyCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[string][]byte
}

func newStudyCache() *studyCache { return &studyCache{m: map[string][]byte{}} }

func (c *studyCache) get(key []byte) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	raw, ok := c.m[string(key)]
	return raw, ok
}

// generation returns the count of invalidations so far, to pass to put.
func (c *studyCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put caches a copy of raw under key if nothing was invalidated since gen.
func (c *studyCache) put(key, raw []byte, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.m) >= studyCacheMax {
		clear(c.m) // rare: a few thousand studies read in turn; they come back on use
	}
	c.m[string(key)] = append([]byte(nil), raw...)
}

func (c *studyCache) invalidate(key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, string(key))
}

func (c *studyCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
