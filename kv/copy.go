package kv

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Copying a store to another engine (interviewd migrate): every record of every bucket,
// the schema version and the signing secret with them, so links, cursors and signed
// URLs issued before the move keep working after it.

// CopyReport is what a copy moved and verified.
type CopyReport struct {
	// Buckets counts the records of each bucket, equal on both sides.
	Buckets map[string]int `json:"buckets"`
	Records int            `json:"records"`
}

// CopyTo copies every record of db into dst in one transaction of dst (a copy that
// fails leaves dst as it was), from one consistent read of db, then checks that each
// bucket holds the same records on both sides (count and SHA-256 of the pairs in key
// order). dst must hold no organisation yet: EINVALID store_not_empty otherwise.
func (db *DB) CopyTo(ctx context.Context, dst *DB) (CopyReport, error) {
	empty, err := dst.Empty(ctx)
	if err != nil {
		return CopyReport{}, err
	}
	if !empty {
		return CopyReport{}, Errorf(EINVALID, "store_not_empty", "The destination already holds organisations; copy into an empty database or data folder.")
	}
	err = db.view(ctx, func(src Tx) error {
		return dst.update(ctx, func(out Tx) error {
			for _, name := range allBuckets {
				from := src.Bucket(name)
				if from == nil {
					continue
				}
				to, err := out.CreateBucketIfNotExists(name)
				if err != nil {
					return err
				}
				c := from.Cursor()
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if err := to.Put(k, v); err != nil {
						return fmt.Errorf("copy %s/%x: %w", name, k, err)
					}
				}
			}
			if dst.Shared() {
				return indexOpenJobs(out)
			}
			return nil
		})
	})
	if err != nil {
		return CopyReport{}, err
	}
	dst.secret = append([]byte(nil), db.secret...)
	return db.verifyCopy(ctx, dst)
}

// verifyCopy compares every bucket of db and dst.
func (db *DB) verifyCopy(ctx context.Context, dst *DB) (CopyReport, error) {
	a, err := db.bucketDigests(ctx)
	if err != nil {
		return CopyReport{}, err
	}
	b, err := dst.bucketDigests(ctx)
	if err != nil {
		return CopyReport{}, err
	}
	rep := CopyReport{Buckets: map[string]int{}}
	for _, name := range allBuckets {
		x, y := a[string(name)], b[string(name)]
		if x != y {
			return CopyReport{}, fmt.Errorf("copy check failed: bucket %s has %d records here and %d in the copy, or different contents", name, x.n, y.n)
		}
		rep.Buckets[string(name)] = x.n
		rep.Records += x.n
	}
	return rep, nil
}

type bucketDigest struct {
	n   int
	sum [32]byte
}

func (db *DB) bucketDigests(ctx context.Context) (map[string]bucketDigest, error) {
	out := map[string]bucketDigest{}
	err := db.view(ctx, func(tx Tx) error {
		for _, name := range allBuckets {
			b := tx.Bucket(name)
			if b == nil {
				continue
			}
			h := sha256.New()
			n := 0
			var lens [16]byte
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				binary.BigEndian.PutUint64(lens[:8], uint64(len(k)))
				binary.BigEndian.PutUint64(lens[8:], uint64(len(v)))
				h.Write(lens[:])
				h.Write(k)
				h.Write(v)
				n++
			}
			var d bucketDigest
			d.n = n
			copy(d.sum[:], h.Sum(nil))
			out[string(name)] = d
		}
		return nil
	})
	return out, err
}
