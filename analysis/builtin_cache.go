package analysis

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// DefaultCacheBytes bounds the built-in engine's cache of read interviews, by an
// estimate of the bytes each reading holds (about 150 bytes a sentence, so some 3 KB
// for an interview of twelve short answers): the default holds the reading of about
// 20,000 such interviews; past it the least recently used are evicted.
const DefaultCacheBytes = 64 << 20

// docCache keeps the per-interview reading (sentences, stems, word pairs,
// polarity, and labels once tagged) so a refresh after one more interview reads only that one. Entries are
// keyed by interview id and a hash of the transcript, so an edited or redacted
// transcript is read again; the cache is bounded by an estimate of the bytes its
// entries hold and evicts the least recently used. Safe for concurrent use.
type docCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type cacheEntry struct {
	key  string
	doc  *ivDoc
	size int64
}

func newDocCache(limit int64) *docCache {
	return &docCache{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

// cacheKey names one reading of one transcript.
func cacheKey(iv Interview) string {
	h := sha256.New()
	var n [8]byte
	for _, m := range iv.Messages {
		binary.LittleEndian.PutUint64(n[:], uint64(len(m.Speaker)))
		h.Write(n[:])
		h.Write([]byte(m.Speaker))
		binary.LittleEndian.PutUint64(n[:], uint64(len(m.Text)))
		h.Write(n[:])
		h.Write([]byte(m.Text))
	}
	return iv.ID + "\x00" + string(h.Sum(nil))
}

func (c *docCache) get(key string) (*ivDoc, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).doc, true
}

func (c *docCache) put(key string, doc *ivDoc) {
	if c == nil {
		return
	}
	size := doc.size() + int64(len(key)) + 128
	if size > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, doc: doc, size: size})
	c.used += size
	for c.used > c.limit {
		el := c.order.Back()
		e := el.Value.(*cacheEntry)
		c.order.Remove(el)
		delete(c.items, e.key)
		c.used -= e.size
	}
}

// len reports how many interviews are cached.
func (c *docCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// size estimates the bytes d holds.
func (d *ivDoc) size() int64 {
	n := int64(24)
	for _, m := range d.Msgs {
		n += 32
		for _, s := range m.Sents {
			// A tagged statement's labels (a few in a thousand) are not counted.
			n += 64 + 48 + 16*int64(cap(s.Feats)) + 8*int64(cap(s.Marks))
		}
	}
	return n
}
