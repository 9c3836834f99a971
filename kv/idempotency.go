package kv

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Idempotency keys are remembered this long.
const IdemTTL = 7 * 24 * time.Hour

// idemStaleAfter frees a claim whose request never finished (the process died
// mid-request), so the key does not stay "in flight" for seven days.
const idemStaleAfter = 5 * time.Minute

// IdemWrite is the response a mutation records under its Idempotency-Key, committed in
// the same transaction as the mutation itself.
type IdemWrite struct {
	Partition   Partition
	Key         string
	Fingerprint [32]byte
	Status      int
	Body        []byte
}

type idemRecord struct {
	Fingerprint [32]byte  `json:"fp"`
	Done        bool      `json:"done"`
	Status      int       `json:"status,omitempty"`
	Body        []byte    `json:"body,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// IdemOutcome is what a claim found.
type IdemOutcome int

const (
	IdemClaimed  IdemOutcome = iota // first use (or expired): go ahead
	IdemReplay                      // same key and fingerprint, finished: replay Status/Body
	IdemReused                      // same key, different fingerprint
	IdemInFlight                    // same key and fingerprint, still running
)

func idemKey(p Partition, key string) []byte { return append(p.prefix(), key...) }

// ClaimIdem claims key for a request with fingerprint fp, or reports what an earlier
// request under the key left. On IdemReplay it returns the recorded status and body.
func (db *DB) ClaimIdem(ctx context.Context, p Partition, key string, fp [32]byte) (IdemOutcome, int, []byte, error) {
	var (
		out    IdemOutcome
		status int
		body   []byte
	)
	err := db.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIdempotency)
		now := db.Now()
		var rec idemRecord
		ok, err := getJSON(b, idemKey(p, key), &rec)
		if err != nil {
			return err
		}
		if ok && now.Sub(rec.CreatedAt) <= IdemTTL && (rec.Done || now.Sub(rec.CreatedAt) < idemStaleAfter) {
			switch {
			case rec.Fingerprint != fp:
				out = IdemReused
			case !rec.Done:
				out = IdemInFlight
			default:
				out, status, body = IdemReplay, rec.Status, rec.Body
			}
			return nil
		}
		out = IdemClaimed
		return putJSON(b, idemKey(p, key), idemRecord{Fingerprint: fp, CreatedAt: now})
	})
	return out, status, body, err
}

// ReleaseIdem forgets an unfinished claim so a retry with the key can run: requests
// that failed validation, conflicted, were limited or failed are not remembered. A
// finished record is left alone.
func (db *DB) ReleaseIdem(ctx context.Context, p Partition, key string) error {
	return db.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIdempotency)
		var rec idemRecord
		ok, err := getJSON(b, idemKey(p, key), &rec)
		if err != nil || !ok || rec.Done {
			return err
		}
		return b.Delete(idemKey(p, key))
	})
}

// writeIdem finishes a claim inside the mutation's own transaction (w may be nil).
func (db *DB) writeIdem(tx *bolt.Tx, w *IdemWrite) error {
	if w == nil {
		return nil
	}
	b := tx.Bucket(bucketIdempotency)
	rec := idemRecord{Fingerprint: w.Fingerprint, Done: true, Status: w.Status, Body: w.Body, CreatedAt: db.Now()}
	var claim idemRecord
	if ok, err := getJSON(b, idemKey(w.Partition, w.Key), &claim); err == nil && ok {
		rec.CreatedAt = claim.CreatedAt // the key is remembered from its first use
	}
	return putJSON(b, idemKey(w.Partition, w.Key), rec)
}

// SweepIdem deletes records older than IdemTTL and returns how many went.
func (db *DB) SweepIdem(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *bolt.Tx) error {
		now := db.Now()
		b := tx.Bucket(bucketIdempotency)
		var expired [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var rec idemRecord
			if err := jsonUnmarshal(v, &rec); err != nil || now.Sub(rec.CreatedAt) > IdemTTL {
				expired = append(expired, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(expired)
		return nil
	})
	return n, err
}
