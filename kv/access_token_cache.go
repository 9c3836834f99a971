package kv

import (
	"sync"
	"time"
)

// accessTokenCache remembers resolved OAuth access tokens by the SHA-256 of the token,
// as credentialCache does API keys (see its comment for the reasoning): a request with a
// cached token costs a hash and a map lookup, not a read transaction of four records. Every
// change that could end or narrow a token goes through authChanged (ending a
// connection, a member's role or membership, the organisation), which clears the
// organisation's entries on commit here and, on a shared store, bumps its epoch so
// other nodes' entries stop counting. Expiry is time: every hit checks it.
type accessTokenCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[[32]byte]cachedAccess
}

type cachedAccess struct {
	cred    OAuthCredential
	epoch   uint64
	expires time.Time // the token's end (never past its connection's)
	touched time.Time // when LastUsedAt was last written (zero: never)
}

func newAccessTokenCache() *accessTokenCache {
	return &accessTokenCache{m: make(map[[32]byte]cachedAccess)}
}

func (c *accessTokenCache) get(hash [32]byte) (cachedAccess, bool) {
	c.mu.RLock()
	e, ok := c.m[hash]
	c.mu.RUnlock()
	return e, ok
}

func (c *accessTokenCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put remembers e unless an invalidation happened since gen was read.
func (c *accessTokenCache) put(hash [32]byte, e cachedAccess, gen uint64) {
	c.mu.Lock()
	if c.gen == gen && len(c.m) < credentialCacheMax {
		c.m[hash] = e
	}
	c.mu.Unlock()
}

// touch records that the entry's connection had LastUsedAt written at t.
func (c *accessTokenCache) touch(hash [32]byte, t time.Time) {
	c.mu.Lock()
	if e, ok := c.m[hash]; ok {
		e.touched = t
		c.m[hash] = e
	}
	c.mu.Unlock()
}

func (c *accessTokenCache) drop(hash [32]byte) {
	c.mu.Lock()
	delete(c.m, hash)
	c.mu.Unlock()
}

// invalidateOrg forgets every token of org and fences off reads in flight.
func (c *accessTokenCache) invalidateOrg(org ID) {
	c.mu.Lock()
	c.gen++
	for h, e := range c.m {
		if e.cred.Connection.OrgID == org {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}
