package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestOpenFreshFolder: Open on a folder that does not exist yet makes it, with a data
// file holding every bucket, this schema version and a random 32-byte secret of its
// own; reopening keeps that secret, and nothing else is left in the folder.
func TestOpenFreshFolder(t *testing.T) {
	boltOnly(t)
	var secrets [][]byte
	for range 2 {
		dir := filepath.Join(t.TempDir(), "data")
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		secret := bytes.Clone(db.Secret())
		if len(secret) != 32 || bytes.Equal(secret, make([]byte, 32)) {
			t.Fatalf("secret %x: want 32 random bytes", secret)
		}
		secrets = append(secrets, secret)
		mustOrg(t, db, "Fresh")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != FileName && e.Name() != "blobs" {
				t.Errorf("stray %s left in the data folder", e.Name())
			}
		}
		mustBeCurrent(t, filepath.Join(dir, FileName))

		db, err = Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(db.Secret(), secret) {
			t.Error("the secret changed on reopening")
		}
		if empty, err := db.Empty(t.Context()); err != nil || empty {
			t.Errorf("after reopening: empty=%v, %v; want the organisation written before", empty, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Equal(secrets[0], secrets[1]) {
		t.Fatalf("two data folders share the secret %x", secrets[0])
	}
}

// TestOpenNewerSchema: a data file from a newer interviewd is refused with EINVALID
// schema_newer, and left as it was.
func TestOpenNewerSchema(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("schema"), []byte(itoa(schemaVersion+1)))
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	var ke *Error
	if ErrorCode(err) != EINVALID || !errors.As(err, &ke) || ke.Reason != "schema_newer" {
		t.Fatalf("open: %v; want EINVALID schema_newer", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(schemaVersion+1)) {
		t.Errorf("error %q does not name the file's version", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("refusing a newer file changed it")
	}
}

// mustBeCurrent checks the data file at path: bbolt's consistency check passes, and it
// has every bucket and this schema version.
func mustBeCurrent(t *testing.T, path string) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("bucket %s missing", name)
			}
		}
		if v := string(tx.Bucket(bucketMeta).Get([]byte("schema"))); v != itoa(schemaVersion) {
			return fmt.Errorf("schema %q, want %d", v, schemaVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
