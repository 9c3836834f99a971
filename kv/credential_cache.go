package kv

import (
	"context"
	"encoding/binary"
	"sync"
)

// credentialCacheMax bounds the resolved credentials kept in memory. Only valid keys are ever
// cached, so this is a bound on keys in use, reached only by very large installations;
// past it a miss is simply not remembered.
const credentialCacheMax = 16384

// credentialCache remembers resolved credentials by the SHA-256 of their secret, so an
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
// On a store shared by several nodes (PostgreSQL) a write on another node cannot clear
// this node's entries. There every transaction that calls authChanged also bumps the
// organisation's epoch in the store (bucket auth_epochs), an entry remembers the epoch
// its credential was read at, and a hit counts only if the store's epoch is still that
// one: one single-row read instead of a transaction of three, and a key revoked on any
// node is refused by every node from the moment the revocation commits.
type credentialCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[[32]byte]cachedCred
}

// cachedCred is an entry: the credential and, on a shared store, its organisation's
// epoch when it was read.
type cachedCred struct {
	cred  *Credential // never changed once cached
	epoch uint64
}

func newCredentialCache() *credentialCache { return &credentialCache{m: make(map[[32]byte]cachedCred)} }

func (c *credentialCache) get(hash [32]byte) (cachedCred, bool) {
	c.mu.RLock()
	e, ok := c.m[hash]
	c.mu.RUnlock()
	return e, ok
}

// generation returns the value put must be given for a read that starts now.
func (c *credentialCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put remembers cred (read at epoch) unless an invalidation happened since gen was
// read.
func (c *credentialCache) put(hash [32]byte, cred *Credential, epoch, gen uint64) {
	c.mu.Lock()
	if c.gen == gen && len(c.m) < credentialCacheMax {
		c.m[hash] = cachedCred{cred: cred, epoch: epoch}
	}
	c.mu.Unlock()
}

// drop forgets one secret's entry (an expired key).
func (c *credentialCache) drop(hash [32]byte) {
	c.mu.Lock()
	delete(c.m, hash)
	c.mu.Unlock()
}

// invalidateOrg forgets every credential of org and fences off reads in flight.
func (c *credentialCache) invalidateOrg(org ID) {
	c.mu.Lock()
	c.gen++
	for h, e := range c.m {
		if e.cred.Org.ID == org || e.cred.Key.OrgID == org {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}

// len returns how many credentials are cached (for tests).
func (c *credentialCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// authChanged must be called by every transaction that writes a key, a key hash or an
// organisation record, or ends an OAuth connection: once tx commits (and before the
// writer's call returns) the organisation's cached credentials and access tokens are
// gone. A rolled-back transaction changes
// nothing and invalidates nothing.
func (db *DB) authChanged(tx Tx, org ID) {
	tx.OnCommit(func() {
		db.cache.credentials.invalidateOrg(org)
		db.cache.accessTokens.invalidateOrg(org)
	})
	if db.Shared() {
		// A failed read or write here fails the transaction (the engine keeps the error).
		b := tx.Bucket(bucketAuthEpochs)
		_ = b.Put(org[:], binary.BigEndian.AppendUint64(nil, epochOf(b.Get(org[:]))+1))
	}
}

// bucketAuthEpochs holds, on a shared store, each organisation's credential epoch:
// bumped by every transaction that changes a key or the organisation.
var bucketAuthEpochs = []byte("auth_epochs")

func epochOf(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// authEpoch reads org's credential epoch in a statement of its own (one round trip).
func (db *DB) authEpoch(ctx context.Context, org ID) (uint64, error) {
	v, err := db.pg.Get(ctx, string(bucketAuthEpochs), org[:])
	return epochOf(v), err
}
