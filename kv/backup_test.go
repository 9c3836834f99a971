package kv

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestBackupWhileWritingThenRestore(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Backed", Email: "b@example.com", Credits: 5})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "B")
	iv := mustInterview(t, db, st, "erin", true)
	_, artifact := mustArtifact(t, db, p, st, iv)
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blobs", "plugins", "p.wasm"), []byte("\x00asm"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Writers keep committing while the backup is taken.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var written atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := db.CreateStudy(ctx, StudyInput{Partition: p, Brief: testBrief("during")}); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	for written.Load() < 3 { // the backup starts with writes under way
		time.Sleep(time.Millisecond)
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	man, err := db.BackupToFile(ctx, out, false)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range man.Files {
		names[f.Path] = true
	}
	if !names[FileName] || !names["blobs/"+filepath.ToSlash(artifact)] || !names["blobs/plugins/p.wasm"] {
		t.Fatalf("manifest %+v", man.Files)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Restore into a folder holding other data: that data is kept aside.
	target := t.TempDir()
	other, err := Open(target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	otherOrg := mustOrg(t, other, "Other")
	other.Close()
	rc, err := Restore(target, out, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Checked || rc.KeptAside == "" || rc.Files != len(man.Files) {
		t.Fatalf("receipt %+v", rc)
	}
	if _, err := os.Stat(filepath.Join(rc.KeptAside, FileName)); err != nil {
		t.Fatalf("the previous file was not kept aside: %v", err)
	}
	back, err := Open(target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := back.FindOrgByID(ctx, otherOrg.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatal("the restored folder still answers with the replaced data")
	}
	if conv, err := back.FindConversation(ctx, st.LinkToken, "erin"); err != nil || len(conv.Transcript) != 2 {
		t.Fatalf("restored interview: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(target, "blobs", artifact)); len(got) == 0 {
		t.Fatal("the artifact was not restored")
	}
	if err := back.bolt.File().View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreRefuses(t *testing.T) {
	boltOnly(t)
	src := t.TempDir()
	db, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustOrg(t, db, "Src")
	good := filepath.Join(t.TempDir(), "good.tar")
	if _, err := db.BackupToFile(context.Background(), good, false); err != nil {
		t.Fatal(err)
	}
	db.Close()

	t.Run("ErrLockedByServer", func(t *testing.T) {
		dir := t.TempDir()
		held, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		if _, err := Restore(dir, good, time.Now()); ErrorCode(err) != ELOCKED {
			t.Fatalf("restore under a running server: %v", err)
		}
	})
	t.Run("ErrTamperedEntry", func(t *testing.T) {
		bad := rewriteTar(t, good, func(name string, body []byte) []byte {
			if name == FileName {
				body[len(body)-1] ^= 0xff
			}
			return body
		})
		dir := t.TempDir()
		if _, err := Restore(dir, bad, time.Now()); ErrorCode(err) != EINVALID {
			t.Fatalf("tampered backup: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
			t.Fatal("a refused restore changed the folder")
		}
	})
	t.Run("ErrCorruptFile", func(t *testing.T) {
		// A bare database file whose pages are overwritten: the consistency check
		// (or the open) must refuse it.
		raw := filepath.Join(t.TempDir(), "raw.db")
		var bare []byte
		rewriteTar(t, good, func(name string, body []byte) []byte {
			if name == FileName {
				bare = append([]byte(nil), body...)
			}
			return body
		})
		pageSize := os.Getpagesize()
		for i := 2 * pageSize; i < len(bare); i++ {
			bare[i] = 0xA5
		}
		if err := os.WriteFile(raw, bare, 0o600); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := Restore(dir, raw, time.Now()); ErrorCode(err) != EINVALID {
			t.Fatalf("corrupt file: %v", err)
		}
	})
	t.Run("OK_BareFile", func(t *testing.T) {
		raw := filepath.Join(t.TempDir(), "raw.db")
		rewriteTar(t, good, func(name string, body []byte) []byte {
			if name == FileName {
				if err := os.WriteFile(raw, body, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return body
		})
		dir := t.TempDir()
		rc, err := Restore(dir, raw, time.Now())
		if err != nil || !rc.Checked || rc.KeptAside != "" {
			t.Fatalf("%+v %v", rc, err)
		}
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if empty, _ := db.Empty(context.Background()); empty {
			t.Fatal("restored file has no organisation")
		}
	})
}

// rewriteTar copies a tar through edit and returns the new file's path.
func rewriteTar(tb testing.TB, from string, edit func(name string, body []byte) []byte) string {
	tb.Helper()
	in, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	outPath := filepath.Join(tb.TempDir(), "edited.tar")
	out, err := os.Create(outPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	tr, tw := tar.NewReader(in), tar.NewWriter(out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		body = edit(h.Name, body)
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return outPath
}

func TestPruneBackups(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		if err := os.WriteFile(filepath.Join(dir, BackupName(base.Add(time.Duration(i)*6*time.Hour))), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deleted, err := PruneBackups(dir, 2)
	if err != nil || len(deleted) != 3 || filepath.Base(deleted[0]) != BackupName(base) {
		t.Fatalf("%v %v", deleted, err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 3 { // two newest + notes.txt
		t.Fatalf("%d files left", len(left))
	}
	if _, err := os.Stat(filepath.Join(dir, BackupName(base.Add(24*time.Hour)))); err != nil {
		t.Fatal("the newest backup was pruned")
	}
}

// TestBackupSkipsUploadsInProgress: blobs/tmp holds uploads still being received, which
// grow while copied and would fail the whole backup; they are no part of it.
func TestBackupSkipsUploadsInProgress(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, f := range []string{"tmp/upload-123", "kept.bin"} {
		p := filepath.Join(dir, "blobs", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial upload"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	man, err := db.BackupToFile(context.Background(), out, false)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range man.Files {
		listed = append(listed, f.Path)
	}
	in, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var entries []string
	tr := tar.NewReader(in)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name)
	}
	if !slices.Contains(listed, "blobs/kept.bin") || !slices.Contains(entries, "blobs/kept.bin") {
		t.Fatalf("the stored blob is missing: manifest %q, archive %q", listed, entries)
	}
	for _, name := range append(listed, entries...) {
		if strings.HasPrefix(name, "blobs/tmp/") {
			t.Fatalf("the backup carries the upload in progress %s: manifest %q, archive %q", name, listed, entries)
		}
	}
}
