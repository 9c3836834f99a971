package kv

import (
	"context"
	"crypto/subtle"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Scopes a credential can hold.
const (
	ScopeStudiesRead   = "studies:read"
	ScopeStudiesWrite  = "studies:write"
	ScopeStudiesGoLive = "studies:golive"
	ScopeLinksRead     = "links:read"
	ScopeLinksWrite    = "links:write"
	ScopeExportRead    = "export:read"
	ScopeAgentRun      = "agent:run"
)

// AllScopes lists every scope in a fixed order.
var AllScopes = []string{ScopeStudiesRead, ScopeStudiesWrite, ScopeStudiesGoLive, ScopeLinksRead, ScopeLinksWrite, ScopeExportRead, ScopeAgentRun}

// KeyExpiryDays are the expiry choices at creation (0 means none).
var KeyExpiryDays = []int{30, 90, 180, 365}

// Key is an API key. Only the SHA-256 of its secret is kept.
type Key struct {
	ID          ID          `json:"id"`
	OrgID       ID          `json:"org_id"`
	UserID      ID          `json:"user_id"`
	Name        string      `json:"name"`
	Environment Environment `json:"environment"`
	Scopes      []string    `json:"scopes"`
	Hint        string      `json:"hint"`
	Hash        []byte      `json:"hash"`
	CreatedAt   time.Time   `json:"created_at"`
	ExpiresAt   *time.Time  `json:"expires_at"`
	RevokedAt   *time.Time  `json:"revoked_at,omitempty"`
}

// KeyInput creates a key.
type KeyInput struct {
	OrgID       ID
	UserID      ID // zero: the organisation's owner
	Name        string
	Environment Environment
	Scopes      []string
	ExpiresDays int // 0, 30, 90, 180 or 365
	// TwoStepPassed: the signed-in user's session passed a two-step check. When the
	// organisation has require_mfa on, a key is only issued to such a session.
	TwoStepPassed bool
	// ByOperator: the machine's operator at the command line, who answers to no
	// organisation policy (require_mfa does not apply).
	ByOperator bool
}

// Credential is an authenticated API key with its organisation.
type Credential struct {
	Key Key
	Org Org
	// memo holds what a caller derives from a cached credential (Derived); nil on a
	// credential the cache did not hand out.
	memo *credMemo
}

type credMemo struct {
	once sync.Once
	v    any
}

// Derived returns what derive makes of c, made once per credential the cache hands
// out (it lives and goes with the cache's entry: a change to the key or its
// organisation makes a new credential), else made on every call. derive must depend on
// c alone.
func (c *Credential) Derived(derive func() any) any {
	if c.memo == nil {
		return derive()
	}
	c.memo.once.Do(func() { c.memo.v = derive() })
	return c.memo.v
}

// CreateKey issues a key and returns it with its secret, the only time the secret
// exists outside the caller. It returns EINVALID for a bad name, environment, scope
// list or expiry, EFORBIDDEN role_forbids_scope when the user's role rules out a scope,
// EFORBIDDEN two_step_required when the organisation requires MFA and the caller has
// not passed a two-step check (TwoStepPassed, or ByOperator), and ENOTFOUND for
// an unknown organisation or a user who is not a member.
func (db *DB) CreateKey(ctx context.Context, in KeyInput) (Key, string, error) {
	k, secret, err := newKey(in, db.Now())
	if err != nil {
		return Key{}, "", err
	}
	if err := db.update(ctx, func(tx Tx) error { return db.putNewKey(tx, &k, in) }); err != nil {
		return Key{}, "", err
	}
	return k, secret, nil
}

// newKey validates in and makes the key record and its secret, not yet stored
// (putNewKey). EINVALID as CreateKey.
func newKey(in KeyInput, now time.Time) (Key, string, error) {
	scopes, fields := validateKeyInput(&in)
	if len(fields) > 0 {
		return Key{}, "", Invalid(fields...)
	}
	secret := newKeySecret(in.Environment)
	hash := HashKeySecret(secret)
	k := Key{
		ID: NewV4(), OrgID: in.OrgID, UserID: in.UserID, Name: strings.TrimSpace(in.Name),
		Environment: in.Environment, Scopes: scopes, Hint: keyHint(secret), Hash: hash[:], CreatedAt: now,
	}
	if in.ExpiresDays > 0 {
		exp := now.AddDate(0, 0, in.ExpiresDays)
		k.ExpiresAt = &exp
	}
	return k, secret, nil
}

// putNewKey stores k inside tx once the rules CreateKey documents hold: the org
// exists, the user is a member whose role allows every scope, and its require_mfa is
// met. It sets k.UserID to the member's (the owner's when in.UserID is zero).
func (db *DB) putNewKey(tx Tx, k *Key, in KeyInput) error {
	org, err := orgByID(tx, in.OrgID)
	if err != nil {
		return err
	}
	m, err := memberFor(tx, in.OrgID, in.UserID)
	if err != nil {
		return err
	}
	k.UserID = m.UserID
	for _, s := range k.Scopes {
		if !m.Role.MayHoldScope(s) {
			return Errorf(EFORBIDDEN, "role_forbids_scope", "A "+strings.ToLower(m.Role.Label())+" cannot hold "+s+".")
		}
	}
	if org.RequireMFA && !in.TwoStepPassed && !in.ByOperator {
		return errTwoStepRequired
	}
	db.authChanged(tx, k.OrgID)
	if err := putJSON(tx.Bucket(bucketKeys), k.ID[:], k); err != nil {
		return err
	}
	return tx.Bucket(bucketKeyHashes).Put(k.Hash, k.ID[:])
}

func validateKeyInput(in *KeyInput) ([]string, []FieldError) {
	var fields []FieldError
	name := strings.TrimSpace(in.Name)
	if name == "" || len([]rune(name)) > 100 {
		fields = append(fields, FieldError{Loc: []any{"name"}, Msg: "Key name must be 1 to 100 characters.", Type: "string_length"})
	}
	if !in.Environment.Valid() {
		fields = append(fields, FieldError{Loc: []any{"environment"}, Msg: "Environment must be 'test' or 'live'.", Type: "enum"})
	}
	if in.ExpiresDays != 0 && !slices.Contains(KeyExpiryDays, in.ExpiresDays) {
		fields = append(fields, FieldError{Loc: []any{"expires_days"}, Msg: "Expiry must be 30, 90, 180 or 365 days, or none.", Type: "enum"})
	}
	seen := map[string]bool{}
	var scopes []string
	for _, s := range in.Scopes {
		s = strings.TrimSpace(s)
		if !slices.Contains(AllScopes, s) {
			fields = append(fields, FieldError{Loc: []any{"scopes"}, Msg: "Unknown scope; expected one of " + strings.Join(AllScopes, ", ") + ".", Type: "enum"})
			continue
		}
		if !seen[s] {
			seen[s] = true
			scopes = append(scopes, s)
		}
	}
	if len(in.Scopes) == 0 {
		fields = append(fields, FieldError{Loc: []any{"scopes"}, Msg: "A key needs at least one scope.", Type: "too_short"})
	}
	sort.Strings(scopes)
	return scopes, fields
}

func memberFor(tx Tx, org, user ID) (Membership, error) {
	b := tx.Bucket(bucketMembers)
	if user.IsZero() { // the organisation's owner
		c := b.Cursor()
		for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
			var m Membership
			if err := jsonUnmarshal(v, &m); err != nil {
				return Membership{}, err
			}
			if m.Role == RoleOwner {
				return m, nil
			}
		}
		return Membership{}, notFound("Owner")
	}
	var m Membership
	ok, err := getJSON(b, append(org[:], user[:]...), &m)
	if err != nil {
		return Membership{}, err
	}
	if !ok {
		return Membership{}, notFound("Membership")
	}
	return m, nil
}

// Authenticate resolves a presented API key secret. It returns EUNAUTHORIZED for a
// malformed, unknown, revoked or expired key (one answer for all, so a caller learns
// nothing about which). The credential may be shared with other callers (it is cached
// until the key or its organisation changes): treat its slices and pointers as read-only.
func (db *DB) Authenticate(ctx context.Context, secret string) (Credential, error) {
	c, err := db.AuthenticateShared(ctx, secret)
	if err != nil {
		return Credential{}, err
	}
	return *c, nil
}

// AuthenticateShared is Authenticate answering with the credential as the cache holds
// it, never to be changed: a caller keeps what it derives from it with Derived.
func (db *DB) AuthenticateShared(ctx context.Context, secret string) (*Credential, error) {
	if len(secret) != keySecretLen {
		return nil, errBadKey
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A cached entry was made from this very secret (the hash covers all of it), after
	// it passed ParseKeySecret: a hit needs only the expiry check.
	hash := HashKeySecret(secret)
	if e, ok := db.cache.credentials.get(hash); ok {
		expired := e.cred.Key.ExpiresAt != nil && !db.Now().Before(*e.cred.Key.ExpiresAt)
		fresh := true
		// On a shared store the entry counts only while the organisation's epoch is
		// unchanged: checked by the request's next statement when ctx has a fence,
		// here otherwise.
		if db.Shared() && (expired || !db.arm(ctx, e.cred.Org.ID, e.epoch, hash, false)) {
			cur, err := db.authEpoch(ctx, e.cred.Org.ID)
			if err != nil {
				return nil, err
			}
			fresh = cur == e.epoch
		}
		switch {
		case !fresh:
			db.cache.credentials.drop(hash) // changed on some node since: read it again below
		case expired:
			db.cache.credentials.drop(hash)
			return nil, errBadKey
		default:
			return e.cred, nil
		}
	}
	env, ok := ParseKeySecret(secret)
	if !ok {
		return nil, errBadKey
	}
	gen := db.cache.credentials.generation()
	var cred Credential
	var epoch uint64
	err := db.view(ctx, func(tx Tx) error {
		id := tx.Bucket(bucketKeyHashes).Get(hash[:])
		if id == nil {
			return errBadKey
		}
		var k Key
		if ok, err := getJSON(tx.Bucket(bucketKeys), id, &k); err != nil || !ok {
			return errBadKey
		}
		if subtle.ConstantTimeCompare(k.Hash, hash[:]) != 1 || k.Environment != env || k.RevokedAt != nil {
			return errBadKey
		}
		if k.ExpiresAt != nil && !db.Now().Before(*k.ExpiresAt) {
			return errBadKey
		}
		org, err := orgByID(tx, k.OrgID)
		if err != nil {
			return errBadKey
		}
		cred = Credential{Key: k, Org: org}
		if db.Shared() {
			epoch = epochOf(tx.Bucket(bucketAuthEpochs).Get(org.ID[:]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &cred
	c.memo = &credMemo{}
	db.cache.credentials.put(hash, c, epoch, gen)
	return c, nil
}

var errBadKey = Errorf(EUNAUTHORIZED, "invalid_token", "The API key is missing, invalid, expired or revoked.")

// FindKeys returns the organisation's keys, oldest first. ENOTFOUND for an unknown org.
func (db *DB) FindKeys(ctx context.Context, org ID) ([]Key, error) {
	var keys []Key
	err := db.view(ctx, func(tx Tx) error {
		if _, err := orgByID(tx, org); err != nil {
			return err
		}
		return tx.Bucket(bucketKeys).ForEach(func(_, v []byte) error {
			var k Key
			if err := jsonUnmarshal(v, &k); err != nil {
				return err
			}
			if k.OrgID == org {
				keys = append(keys, k)
			}
			return nil
		})
	})
	sort.Slice(keys, func(i, j int) bool { return keys[i].CreatedAt.Before(keys[j].CreatedAt) })
	return keys, err
}

// RevokeKey revokes a key at once; later requests with its secret get 401. Revoking an
// already revoked key is a no-op. ENOTFOUND for an unknown key.
func (db *DB) RevokeKey(ctx context.Context, id ID) (Key, error) {
	var k Key
	err := db.update(ctx, func(tx Tx) error {
		ok, err := getJSON(tx.Bucket(bucketKeys), id[:], &k)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("Key")
		}
		if k.RevokedAt != nil {
			return nil
		}
		now := db.Now()
		k.RevokedAt = &now
		db.authChanged(tx, k.OrgID)
		if err := tx.Bucket(bucketKeyHashes).Delete(k.Hash); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketKeys), k.ID[:], k)
	})
	return k, err
}

// FindKeysFor returns the keys of the organisation that user may see, oldest first:
// every key for owners and admins, only their own for members. ENOTFOUND for an unknown
// org or a user who is not a member.
func (db *DB) FindKeysFor(ctx context.Context, org, user ID) ([]Key, error) {
	var keys []Key
	err := db.view(ctx, func(tx Tx) error {
		keys = nil
		if _, err := orgByID(tx, org); err != nil {
			return err
		}
		if user.IsZero() {
			return notFound("Organisation")
		}
		m, err := memberFor(tx, org, user)
		if err != nil {
			return notFound("Organisation")
		}
		return tx.Bucket(bucketKeys).ForEach(func(_, v []byte) error {
			var k Key
			if err := jsonUnmarshal(v, &k); err != nil {
				return err
			}
			if k.OrgID == org && (m.Role.Manages() || k.UserID == user) {
				keys = append(keys, k)
			}
			return nil
		})
	})
	sort.Slice(keys, func(i, j int) bool { return keys[i].CreatedAt.Before(keys[j].CreatedAt) })
	return keys, err
}

// RevokeKeyInput revokes a key on behalf of a signed-in user.
type RevokeKeyInput struct {
	OrgID ID
	Actor ID
	KeyID ID
}

// RevokeKeyAs revokes a key the actor may see (FindKeysFor): any of the organisation's
// for owners and admins, their own for members. A key outside that is ENOTFOUND, as an
// unknown one, so a member learns nothing of others' keys. Revoking a revoked key is a
// no-op.
func (db *DB) RevokeKeyAs(ctx context.Context, in RevokeKeyInput) (Key, error) {
	var k Key
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if k, err = keyVisibleTo(tx, in.OrgID, in.Actor, in.KeyID); err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		now := db.Now()
		k.RevokedAt = &now
		db.authChanged(tx, k.OrgID)
		if err := tx.Bucket(bucketKeyHashes).Delete(k.Hash); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketKeys), k.ID[:], k)
	})
	return k, err
}

// keyVisibleTo returns key id of org when actor may see it (FindKeysFor): any for
// owners and admins, their own for members; ENOTFOUND otherwise, as for an unknown key.
func keyVisibleTo(tx Tx, org, actor, id ID) (Key, error) {
	if actor.IsZero() {
		return Key{}, notFound("Key")
	}
	m, err := memberFor(tx, org, actor)
	if err != nil {
		return Key{}, notFound("Key")
	}
	var k Key
	ok, err := getJSON(tx.Bucket(bucketKeys), id[:], &k)
	if err != nil {
		return Key{}, err
	}
	if !ok || k.OrgID != org || (!m.Role.Manages() && k.UserID != actor) {
		return Key{}, notFound("Key")
	}
	return k, nil
}

var errTwoStepRequired = Errorf(EFORBIDDEN, "two_step_required", "This organisation requires two-step verification: pass a two-step check first.")
