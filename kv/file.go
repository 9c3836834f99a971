package kv

import (
	"context"
	"time"
)

// File is an uploaded file: its raw bytes live in the blob folder, its extracted text here.
type File struct {
	ID        ID          `json:"id"`
	OrgID     ID          `json:"org_id"`
	Env       Environment `json:"env"`
	Filename  string      `json:"filename"`
	ByteSize  int64       `json:"byte_size"`
	Extracted bool        `json:"extracted"`
	Text      string      `json:"text,omitempty"`
	Blob      string      `json:"blob"` // path relative to the blob folder
	CreatedAt time.Time   `json:"created_at"`
}

// CreateFile records an uploaded file. ENOTFOUND for an unknown organisation.
func (db *DB) CreateFile(ctx context.Context, p Partition, f File) (File, error) {
	f.OrgID, f.Env, f.CreatedAt = p.Org, p.Env, db.Now()
	err := db.update(ctx, func(tx Tx) error {
		if _, err := orgByID(tx, p.Org); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketFiles), p.key(f.ID), f)
	})
	return f, err
}

// FindFilesByID returns the files in partition p with the given ids, in order; ids
// outside the partition are ENOTFOUND.
func (db *DB) FindFilesByID(ctx context.Context, p Partition, ids []ID) ([]File, error) {
	files := make([]File, 0, len(ids))
	err := db.view(ctx, func(tx Tx) error {
		for _, id := range ids {
			var f File
			ok, err := getJSON(tx.Bucket(bucketFiles), p.key(id), &f)
			if err != nil {
				return err
			}
			if !ok {
				return notFound("File")
			}
			files = append(files, f)
		}
		return nil
	})
	return files, err
}
