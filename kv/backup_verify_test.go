package kv

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustBackup writes a backup of a folder with an organisation and one blob, and
// returns its path and the blob's name inside it.
func mustBackup(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustOrg(t, db, "Backed")
	blob := filepath.Join(dir, "blobs", "plugins", "p.wasm")
	if err := os.MkdirAll(filepath.Dir(blob), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, bytes.Repeat([]byte("\x00asm"), 300), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	if _, err := db.BackupToFile(context.Background(), out, false); err != nil {
		t.Fatal(err)
	}
	return out, "blobs/plugins/p.wasm"
}

// entryOffsets returns where each entry's data starts in the tar at p, and its size.
func entryOffsets(t *testing.T, p string) map[string][2]int64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &countingReader{r: f}
	tr := tar.NewReader(c) // unbuffered: after Next, c.n is where the entry's data starts
	at := map[string][2]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return at
		}
		if err != nil {
			t.Fatal(err)
		}
		at[h.Name] = [2]int64{c.n, h.Size}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// damaged copies the backup at p with edit applied to its bytes.
func damaged(t *testing.T, p string, edit func([]byte) []byte) string {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "damaged.tar")
	if err := os.WriteFile(out, edit(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyBackup(t *testing.T) {
	boltOnly(t)
	good, blob := mustBackup(t)
	at := entryOffsets(t, good)
	dbAt, blobAt, manAt := at[FileName], at[blob], at[ManifestName]
	if dbAt[1] == 0 || blobAt[1] == 0 || manAt[1] == 0 {
		t.Fatalf("the backup lacks an entry: %v", at)
	}

	t.Run("OK", func(t *testing.T) {
		rc, err := VerifyBackup(good)
		if err != nil {
			t.Fatal(err)
		}
		if !rc.OK || rc.Files != 2 || rc.Schema != schemaVersion || rc.DBBytes != dbAt[1] || rc.BackupAt.IsZero() || rc.Bare {
			t.Fatalf("receipt %+v", rc)
		}
	})
	t.Run("OK_BareFile", func(t *testing.T) {
		bare := damaged(t, good, func(b []byte) []byte { return b[dbAt[0] : dbAt[0]+dbAt[1]] })
		rc, err := VerifyBackup(bare)
		if err != nil || !rc.OK || !rc.Bare || rc.Schema != schemaVersion {
			t.Fatalf("%+v %v", rc, err)
		}
	})

	flip := func(off int64) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= 0x10; return b }
	}
	cut := func(n int64) func([]byte) []byte {
		return func(b []byte) []byte { return b[:n] }
	}
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"ErrBitFlippedDatabase", flip(dbAt[0] + dbAt[1]/2), "The backup's interviewd.db does not match its manifest (SHA-256 differs)."},
		{"ErrBitFlippedBlob", flip(blobAt[0] + 7), "The backup's " + blob + " does not match its manifest (SHA-256 differs)."},
		{"ErrBitFlippedHeader", flip(blobAt[0] - 512 + 3), "The backup is not a readable tar file"},
		{"ErrTruncatedInDatabase", cut(dbAt[0] + dbAt[1]/2), "The backup's entry interviewd.db is truncated: unexpected EOF"},
		{"ErrTruncatedBeforeManifest", cut(manAt[0] - 512), "The backup has no manifest.json: it is incomplete."},
		{"ErrTruncatedToNothing", cut(0), "The backup file is empty."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := damaged(t, good, c.edit)
			rc, err := VerifyBackup(bad)
			if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), c.want) || rc.OK {
				t.Fatalf("verify of a damaged backup: %+v, %v; want %q", rc, err, c.want)
			}
		})
	}

	t.Run("ErrCorruptBareFile", func(t *testing.T) {
		// A bare file carries no hashes: bbolt's check over its pages is what finds it.
		bare := damaged(t, good, func(b []byte) []byte {
			b = b[dbAt[0] : dbAt[0]+dbAt[1]]
			for i := 2 * os.Getpagesize(); i < len(b); i++ {
				b[i] = 0xA5
			}
			return b
		})
		rc, err := VerifyBackup(bare)
		if ErrorCode(err) != EINVALID || rc.OK ||
			!(strings.Contains(err.Error(), "fails the consistency check") || strings.Contains(err.Error(), "cannot be opened")) {
			t.Fatalf("corrupt bare file: %+v %v", rc, err)
		}
	})
	t.Run("ErrUnlistedEntry", func(t *testing.T) {
		bad := appendEntry(t, good, "blobs/extra.bin", []byte("not in the manifest"))
		if _, err := VerifyBackup(bad); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "blobs/extra.bin, which its manifest does not list") {
			t.Fatalf("unlisted entry: %v", err)
		}
	})
	t.Run("ErrManifestSchemaDiffers", func(t *testing.T) {
		bad := rewriteTar(t, good, func(name string, body []byte) []byte {
			if name == ManifestName {
				return bytes.Replace(body, []byte(`"schema": `+itoa(schemaVersion)), []byte(`"schema": `+itoa(schemaVersion-1)), 1)
			}
			return body
		})
		if _, err := VerifyBackup(bad); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "manifest names schema version") {
			t.Fatalf("manifest and database disagree on the schema: %v", err)
		}
	})
	t.Run("ErrMissingFile", func(t *testing.T) {
		if _, err := VerifyBackup(filepath.Join(t.TempDir(), "none.tar")); err == nil || !os.IsNotExist(err) {
			t.Fatalf("missing file: %v", err)
		}
	})
}

// appendEntry copies the tar at p with one more entry before the manifest.
func appendEntry(t *testing.T, p, name string, body []byte) string {
	t.Helper()
	var added bool
	return rewriteTarEntries(t, p, func(tw *tar.Writer, h *tar.Header) {
		if h.Name == ManifestName && !added {
			added = true
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// rewriteTarEntries copies a tar, calling before ahead of each entry.
func rewriteTarEntries(t *testing.T, from string, before func(tw *tar.Writer, h *tar.Header)) string {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	outPath := filepath.Join(t.TempDir(), "entries.tar")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	tr, tw := tar.NewReader(in), tar.NewWriter(out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		before(tw, h)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return outPath
}

func TestBackupToFileRefusesExisting(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustOrg(t, db, "Kept")
	folder := t.TempDir()
	out := filepath.Join(folder, "b.tar")
	if err := os.WriteFile(out, []byte("someone's file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BackupToFile(context.Background(), out, false); ErrorCode(err) != ECONFLICT || !strings.Contains(err.Error(), out+" already exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "someone's file" {
		t.Fatalf("the existing file was changed: %q", b)
	}
	if _, err := db.BackupToFile(context.Background(), out, true); err != nil {
		t.Fatal(err)
	}
	if rc, err := VerifyBackup(out); err != nil || !rc.OK {
		t.Fatalf("the replacing backup: %+v %v", rc, err)
	}
	left, _ := os.ReadDir(folder)
	if len(left) != 1 {
		t.Fatalf("the folder holds %d files, want the backup alone (no temporary file left)", len(left))
	}
}
