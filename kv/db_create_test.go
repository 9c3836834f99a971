package kv

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestOpenFallsBackWithoutScratchOrHardLinks: when the scratch folder is unusable or
// the data folder's filesystem refuses hard links, Open still makes a working data file
// the plain way, leaving nothing stray behind.
func TestOpenFallsBackWithoutScratchOrHardLinks(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refuse := func(errno syscall.Errno, called *int) func(string, string) error {
		return func(oldname, newname string) error {
			*called++
			return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errno}
		}
	}
	var eperm, enotsup, exdev int
	cases := []struct {
		name   string
		opts   Options
		called *int
	}{
		{"ScratchMissing", Options{scratch: filepath.Join(t.TempDir(), "absent")}, nil},
		{"ScratchIsAFile", Options{scratch: notDir}, nil},
		{"LinkEPERM", Options{link: refuse(syscall.EPERM, &eperm)}, &eperm},
		{"LinkENOTSUP", Options{link: refuse(syscall.ENOTSUP, &enotsup)}, &enotsup},
		{"LinkEXDEV", Options{link: refuse(syscall.EXDEV, &exdev)}, &exdev},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			db, err := Open(dir, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.called != nil && *c.called != 1 {
				t.Fatalf("link called %d times", *c.called)
			}
			secret := append([]byte(nil), db.Secret()...)
			if len(secret) != 32 {
				t.Fatalf("secret of %d bytes", len(secret))
			}
			org := mustOrg(t, db, "Fallback")
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
			db, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if !bytes.Equal(db.Secret(), secret) {
				t.Error("the secret changed on reopening")
			}
			if _, err := db.FindOrgByID(context.Background(), org.ID); err != nil {
				t.Fatalf("the org written before reopening: %v", err)
			}
		})
	}
}
