package kv

import (
	"sync"
)

// credCacheMax bounds the resolved credentials kept in memory. Only valid keys are ever
// cached, so this is a bound on keys in use, reached only by very large installations;
// past it a miss is simply not remembered.
const credCacheMax = 16384

// credCache remembers resolved credentials by the SHA-256 of their secret, so an
// authenticated request costs a hash and a map lookup instead of a read transaction and
// two JSON decodes. The hash is the whole presented secret, environment prefix included:
// an entry can only ever answer the very secret that produced it, so nothing crosses
// organisations or environments.
//
// Correctness rests on invalidation from the write path, not the HTTP path: every
// transaction that writes a key, a key hash or an organisation registers
// invalidateOrg(org) with tx.OnCommit (see authChanged), so the change is visible to the
// next Authenticate before the writer's call returns, whoever the writer is (API, admin
// socket, web app, a background job). Expiry is time, not a write: Authenticate checks
// it on every hit against the store's clock.
//
// gen closes the race between a reader filling the cache and a writer invalidating it:
// a reader notes gen before its read transaction and stores its result only if no
// invalidation happened since, so a credential read before a revocation committed can
// never be stored after the revocation cleared the cache.
//
// The cache is off on a store shared by several nodes (PostgreSQL): a revocation
// committed by another node would not invalidate this node's entries, so every request
// reads the key from the store.
type credCache struct {
	off bool
	mu  sync.RWMutex
	gen uint64
	m   map[[32]byte]Credential
}

func newCredCache() *credCache { return &credCache{m: make(map[[32]byte]Credential)} }

func (c *credCache) get(hash [32]byte) (Credential, bool) {
	if c.off {
		return Credential{}, false
	}
	c.mu.RLock()
	cred, ok := c.m[hash]
	c.mu.RUnlock()
	return cred, ok
}

// generation returns the value put must be given for a read that starts now.
func (c *credCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put remembers cred unless an invalidation happened since gen was read.
func (c *credCache) put(hash [32]byte, cred Credential, gen uint64) {
	if c.off {
		return
	}
	c.mu.Lock()
	if c.gen == gen && len(c.m) < credCacheMax {
		c.m[hash] = cred
	}
	c.mu.Unlock()
}

// drop forgets one secret's entry (an expired key).
func (c *credCache) drop(hash [32]byte) {
	c.mu.Lock()
	delete(c.m, hash)
	c.mu.Unlock()
}

// invalidateOrg forgets every credential of org and fences off reads in flight.
func (c *credCache) invalidateOrg(org ID) {
	c.mu.Lock()
	c.gen++
	for h, cred := range c.m {
		if cred.Org.ID == org || cred.Key.OrgID == org {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}

// len returns how many credentials are cached (for tests).
func (c *credCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// authChanged must be called by every transaction that writes a key, a key hash or an
// organisation record: once tx commits (and before the writer's call returns) the
// organisation's cached credentials are gone. A rolled-back transaction changes
// nothing and invalidates nothing.
func (db *DB) authChanged(tx Tx, org ID) {
	tx.OnCommit(func() { db.creds.invalidateOrg(org) })
}
