package kv

import (
	"context"
	"errors"
	"sync"

	"interviewd/kv/internal/pgengine"
)

// The credential fence: on a shared store, the check that a cached credential is still
// current (its organisation's epoch, see credentialCache) rides on the request's first
// statement instead of costing a round trip of its own.
//
// A request that opts in (WithAuthFence) and is answered from the credential cache
// leaves the fence armed with the epoch the entry was read at. The next statement the
// request sends under that context, a single read (readOne), a transaction's first
// statement or a rate decision, reads the organisation's epoch in the same round trip and
// snapshot: equal, the fence is passed and the request goes on; different, the
// statement fails with ErrCredentialChanged (a write is rolled back) and the cache entry
// is forgotten, so the caller authenticates again from the store. A caller that may
// finish without sending a statement settles the fence (SettleAuth) before it answers.
// A revocation committed before the check is therefore seen by it, exactly as with the
// separate read, and nothing the request read or wrote escapes the check.

// ErrCredentialChanged reports that the cached credential a request was admitted with
// changed on some node since it was cached: the request did nothing and must
// authenticate again.
var ErrCredentialChanged = errors.New("kv: the credential changed since it was cached; authenticate again")

type fenceState uint8

const (
	fenceOpen   fenceState = iota // nothing cached was admitted yet
	fenceArmed                    // a cached credential awaits its check
	fencePassed                   // checked and current (or never needed)
	fenceStale                    // checked and changed: the request must start over
	fenceClosed                   // the request is over: later statements ignore it
)

// AuthFence is one request's fence. It is safe for concurrent use.
type AuthFence struct {
	mu    sync.Mutex
	state fenceState
	org   ID
	epoch uint64
	// hash and access name the cache entry to forget when the check fails.
	hash   [32]byte
	access bool
	db     *DB
}

type fenceKey struct{}

// WithAuthFence returns ctx carrying a fresh fence for one request. Close it when the
// request ends, so work that outlives the request under ctx is not held to it.
func WithAuthFence(ctx context.Context) (context.Context, *AuthFence) {
	f := &AuthFence{}
	return context.WithValue(ctx, fenceKey{}, f), f
}

// Close ends the fence: statements under its context no longer check it.
func (f *AuthFence) Close() {
	f.mu.Lock()
	f.state = fenceClosed
	f.mu.Unlock()
}

func fenceOf(ctx context.Context) *AuthFence {
	f, _ := ctx.Value(fenceKey{}).(*AuthFence)
	return f
}

// arm defers the check of a cached credential of org read at epoch to the request's
// next statement; false when ctx has no open fence (the caller checks now).
func (db *DB) arm(ctx context.Context, org ID, epoch uint64, hash [32]byte, access bool) bool {
	f := fenceOf(ctx)
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != fenceOpen {
		return false
	}
	f.state, f.org, f.epoch, f.hash, f.access, f.db = fenceArmed, org, epoch, hash, access, db
	return true
}

// pendingFence returns ctx's fence when its check is due with the next statement, or
// ErrCredentialChanged when it already failed.
func pendingFence(ctx context.Context) (*AuthFence, error) {
	f := fenceOf(ctx)
	if f == nil {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case fenceArmed:
		return f, nil
	case fenceStale:
		return nil, ErrCredentialChanged
	}
	return nil, nil
}

// resolve records the epoch the check read: the fence passes when it is the cached
// one; otherwise the cache entry is forgotten and ErrCredentialChanged returned.
func (f *AuthFence) resolve(cur uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case fenceArmed:
	case fenceStale:
		return ErrCredentialChanged
	default:
		return nil // passed meanwhile by a concurrent statement, or closed
	}
	if cur == f.epoch {
		f.state = fencePassed
		return nil
	}
	f.state = fenceStale
	if f.access {
		f.db.cache.accessTokens.drop(f.hash)
	} else {
		f.db.cache.credentials.drop(f.hash)
	}
	return ErrCredentialChanged
}

// fenceCheck is a fence as the PostgreSQL engine carries it on a statement
// (pgengine.Fence): the record it reads is the organisation's epoch.
type fenceCheck struct{ f *AuthFence }

func (c fenceCheck) Key() []byte                { return c.f.org[:] }
func (c fenceCheck) Want() []byte               { return epochValue(c.f.epoch) }
func (c fenceCheck) Resolve(value []byte) error { return c.f.resolve(epochOf(value)) }

// pendingCheck is pendingFence for the engine (pgengine.Fences.Pending).
func pendingCheck(ctx context.Context) (pgengine.Fence, error) {
	f, err := pendingFence(ctx)
	if f == nil {
		return nil, err
	}
	return fenceCheck{f}, nil
}

// SettleAuth checks ctx's fence now if its check is still due (one round trip), and
// returns ErrCredentialChanged if it failed, now or before. A request admitted with a
// fence settles it before it answers or acts outside the store.
func (db *DB) SettleAuth(ctx context.Context) error {
	f, err := pendingFence(ctx)
	if f == nil || err != nil {
		return err
	}
	cur, err := db.authEpoch(ctx, f.org)
	if err != nil {
		return err
	}
	return f.resolve(cur)
}
