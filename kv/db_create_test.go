package kv

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenFreshFolderThenReopen: a fresh folder gets a ready data file and no stray
// temporary; reopening it keeps the secret and writes nothing.
func TestOpenFreshFolderThenReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	secret := append([]byte(nil), db.Secret()...)
	if len(secret) != 32 {
		t.Fatalf("secret of %d bytes", len(secret))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), FileName+".") {
			t.Errorf("stray file %s left in the data folder", e.Name())
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(db.Secret(), secret) {
		t.Error("the secret changed on reopening")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("reopening a prepared file wrote to it")
	}
}
