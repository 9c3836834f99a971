package server

import (
	"sync"

	"interviewd/kv"
)

// principalCacheMax bounds the principals kept; past it the memo starts again empty
// (it only holds what credentials in use map to).
const principalCacheMax = 16384

// principalCache remembers the principal made from each cached API-key credential, by
// the credential's pointer: the store hands out the same pointer for as long as the key
// and its organisation are unchanged and a new one after any change, so a principal
// found here was made from exactly the credential the store just vouched for (validity,
// expiry and, on a shared store, the organisation's epoch are the store's checks, on
// every request). Principals are never changed once made.
type principalCache struct {
	mu sync.RWMutex
	m  map[*kv.Credential]*Principal
}

func newPrincipalCache() *principalCache {
	return &principalCache{m: map[*kv.Credential]*Principal{}}
}

// of returns the principal of cred, making and remembering it on first sight.
func (c *principalCache) of(cred *kv.Credential) *Principal {
	c.mu.RLock()
	p, ok := c.m[cred]
	c.mu.RUnlock()
	if ok {
		return p
	}
	p = principalFromKey(*cred)
	c.mu.Lock()
	if len(c.m) >= principalCacheMax {
		clear(c.m)
	}
	c.m[cred] = p
	c.mu.Unlock()
	return p
}
