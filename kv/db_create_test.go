package kv

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestOpenFreshFolderThenReopen: a fresh folder gets a ready data file and no stray
// temporary; reopening it keeps the secret and writes nothing.
func TestOpenFreshFolderThenReopen(t *testing.T) {
	boltOnly(t)
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
	boltOnly(t)
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

// freshImage returns the bytes of a data file Open made in a fresh folder and nothing
// was ever written to.
func freshImage(t *testing.T) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// newestTxid returns the highest txid of a valid meta page in b, or -1 when neither is.
func newestTxid(b []byte) int64 {
	best := int64(-1)
	for _, off := range []int{0, os.Getpagesize()} {
		if m, ok := readMeta(b, off); ok {
			best = max(best, int64(m.txid))
		}
	}
	return best
}

// TestPreparedTxid: a prepared file stands at preparedTxid and is not unfinished; the
// first acknowledged write takes it past preparedTxid, which is what marks a file
// that has held data.
func TestPreparedTxid(t *testing.T) {
	boltOnly(t)
	img := freshImage(t)
	if got := newestTxid(img); got != preparedTxid {
		t.Fatalf("a prepared file is at txid %d, want preparedTxid = %d", got, preparedTxid)
	}
	if unfinished(img) {
		t.Fatal("a whole prepared file was judged unfinished")
	}
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustOrg(t, db, "First")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if got := newestTxid(written); got <= preparedTxid {
		t.Fatalf("after an acknowledged write the file is at txid %d, want > %d", got, preparedTxid)
	}
	if unfinished(written) {
		t.Fatal("a file with a committed write was judged unfinished")
	}
}

// syncLog records the folder syncs a store pays, standing in for fsync.
type syncLog struct {
	mu    sync.Mutex
	paths []string
	fail  int // fail this many calls first
}

func (l *syncLog) sync(path string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail > 0 {
		l.fail--
		return syscall.EIO
	}
	l.paths = append(l.paths, path)
	return nil
}

func (l *syncLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paths)
}

// TestOpenOwesFolderSyncUntilFirstWrite: a new data file is made without syncs, and the
// first write is not answered before the data folder (which holds the file's name) and
// its parent are synced; later writes do not sync them again. A store reopened before
// anything was written still owes it; one with a committed write owes nothing. A failed
// sync fails the write it was paid for and stays owed.
func TestOpenOwesFolderSyncUntilFirstWrite(t *testing.T) {
	boltOnly(t)
	for _, solo := range []bool{false, true} {
		t.Run(map[bool]string{false: "GroupCommit", true: "SoloCommits"}[solo], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			log := &syncLog{}
			db, err := Open(dir, Options{syncDir: log.sync, SoloCommits: solo})
			if err != nil {
				t.Fatal(err)
			}
			if n := log.count(); n != 0 {
				t.Fatalf("%d folder syncs at open, want none", n)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			log = &syncLog{fail: 1}
			db, err = Open(dir, Options{syncDir: log.sync, SoloCommits: solo})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := db.CreateOrg(context.Background(), OrgInput{Name: "Unsynced", Email: "u@example.com"}); err == nil {
				t.Fatal("a write whose folder sync failed was acknowledged")
			}
			mustOrg(t, db, "First")
			want := []string{dir, filepath.Dir(dir)}
			if !slices.Equal(log.paths, want) {
				t.Fatalf("first write synced %q, want %q", log.paths, want)
			}
			mustOrg(t, db, "Second")
			if n := log.count(); n != 2 {
				t.Fatalf("%d folder syncs after the second write, want still 2", n)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			log = &syncLog{}
			db, err = Open(dir, Options{syncDir: log.sync, SoloCommits: solo})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustOrg(t, db, "Third")
			if n := log.count(); n != 0 {
				t.Fatalf("a store with committed writes synced its folders %d times", n)
			}
		})
	}
}

// damage is one state a power cut could leave an unsynced new data file in: pages
// that never reached the disk read as zeros, and the file may be cut short.
type damage struct {
	name  string
	bytes func(img []byte) []byte
}

// unsyncedDamages lists every page subset zeroed, every cut at a 512-byte sector, and
// meta pages torn at a sector.
func unsyncedDamages(img []byte) []damage {
	page := os.Getpagesize()
	pages := len(img) / page
	var ds []damage
	for mask := 1; mask < 1<<pages; mask++ {
		ds = append(ds, damage{fmt.Sprintf("ZeroPages%0*b", pages, mask), func(img []byte) []byte {
			b := bytes.Clone(img)
			for p := range pages {
				if mask&(1<<p) != 0 {
					clear(b[p*page : (p+1)*page])
				}
			}
			return b
		}})
	}
	for cut := 0; cut < len(img); cut += 512 {
		ds = append(ds, damage{fmt.Sprintf("CutAt%d", cut), func(img []byte) []byte { return bytes.Clone(img[:cut]) }})
	}
	for _, meta := range []int{0, 1} {
		for _, keep := range []int{512, 1024, 2048} {
			ds = append(ds, damage{fmt.Sprintf("TornMeta%dAt%d", meta, keep), func(img []byte) []byte {
				b := bytes.Clone(img)
				clear(b[meta*page+keep : (meta+1)*page])
				return b
			}})
		}
	}
	return ds
}

// TestOpenAfterPowerCutBeforeFirstWrite puts the data file in every state a power cut
// could leave a never-synced new file in, and opens it: Open always gives a working
// store that passes bbolt's check, keeps any file it replaced beside the new one byte
// for byte, and replaces only files bbolt could not use as they are.
func TestOpenAfterPowerCutBeforeFirstWrite(t *testing.T) {
	boltOnly(t)
	img := freshImage(t)
	for _, d := range unsyncedDamages(img) {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			damaged := d.bytes(img)
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			org := mustOrg(t, db, "After")
			if _, err := db.FindOrgByID(context.Background(), org.ID); err != nil {
				t.Fatalf("read back: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			mustPassCheck(t, path)
			aside, err := filepath.Glob(path + ".unfinished-*")
			if err != nil {
				t.Fatal(err)
			}
			if unfinished(damaged) != (len(aside) == 1) || len(aside) > 1 {
				t.Fatalf("unfinished=%v but %d files set aside", unfinished(damaged), len(aside))
			}
			if len(aside) == 1 {
				kept, err := os.ReadFile(aside[0])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(kept, damaged) {
					t.Fatal("the file set aside is not the damaged file byte for byte")
				}
			}
		})
	}
}

// TestOpenLeavesWrittenFilesAlone: a file that has held data is never set aside,
// whatever is wrong with it; bbolt reports what it reports, and the file is untouched.
func TestOpenLeavesWrittenFilesAlone(t *testing.T) {
	boltOnly(t)
	img := freshImage(t)
	page := os.Getpagesize()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		mustOrg(t, db, fmt.Sprintf("Org%03d", i))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) <= len(img) {
		t.Fatalf("the written file (%d bytes) is no bigger than a prepared one (%d)", len(written), len(img))
	}

	t.Run("BothMetaPagesZeroed", func(t *testing.T) {
		b := bytes.Clone(written)
		clear(b[:2*page])
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if db, err := Open(dir, Options{}); err == nil {
			db.Close()
			t.Fatal("opened a file without a valid meta page")
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, b) {
			t.Fatal("Open changed a file that had held data")
		}
		if aside, _ := filepath.Glob(path + ".unfinished-*"); len(aside) != 0 {
			t.Fatalf("set aside %v", aside)
		}
	})

	t.Run("OlderMetaPageZeroed", func(t *testing.T) {
		b := bytes.Clone(written)
		m0, _ := readMeta(b, 0)
		m1, _ := readMeta(b, page)
		older := 0
		if m1.txid < m0.txid {
			older = 1
		}
		clear(b[older*page : (older+1)*page])
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		orgs, err := db.FindOrgs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(orgs) != 200 {
			t.Fatalf("%d organisations after reopening, want 200", len(orgs))
		}
		if aside, _ := filepath.Glob(path + ".unfinished-*"); len(aside) != 0 {
			t.Fatalf("set aside %v", aside)
		}
	})
}

// mustPassCheck runs bbolt's consistency check over the file at path.
func mustPassCheck(t *testing.T, path string) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt check: %v", err)
	}
}

var updateTemplate = flag.Bool("update", false, "TestFreshTemplate: rewrite kv/fresh.db from what buildImage makes")

// TestFreshTemplate: the prepared file built into the binary is what buildImage
// makes today with templateSecret as its secret, so a fresh data file from the
// template is one prepared by this version (every bucket, every migration).
func TestFreshTemplate(t *testing.T) {
	boltOnly(t)
	if !templateFits() {
		t.Skip("the template is not used on this machine (byte order or page size)")
	}
	img, err := buildImage(t.TempDir(), templateSecret)
	if err != nil {
		t.Fatal(err)
	}
	if *updateTemplate {
		if err := os.WriteFile("fresh.db", img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(img, freshTemplate) {
		t.Fatal("kv/fresh.db is not the file buildImage prepares now: run go test ./kv -run TestFreshTemplate -update")
	}
	if n := bytes.Count(img, templateSecret); n != 1 {
		t.Fatalf("templateSecret appears %d times in the template, want once", n)
	}
	again, err := buildImage(t.TempDir(), templateSecret)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, img) {
		t.Fatal("buildImage made two different files from the same secret: the template would not be reproducible")
	}
}

// TestOpenFromTemplate: files made from the template open with every bucket and the
// schema version, each with its own secret, never the template's stand-in, and are
// what a prepared file is: at preparedTxid, with valid meta pages.
func TestOpenFromTemplate(t *testing.T) {
	boltOnly(t)
	if !templateFits() {
		t.Skip("the template is not used on this machine (byte order or page size)")
	}
	var secrets [][]byte
	for range 2 {
		img := freshImage(t)
		if bytes.Contains(img, templateSecret) {
			t.Fatal("a fresh data file kept the template's stand-in secret")
		}
		if len(img) != len(freshTemplate) {
			t.Fatalf("fresh file of %d bytes, template of %d: not made from the template", len(img), len(freshTemplate))
		}
		if got := newestTxid(img); got != preparedTxid {
			t.Fatalf("fresh file at txid %d, want %d", got, preparedTxid)
		}
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName), img, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, append([]byte(nil), db.Secret()...))
		if err := db.bolt.View(func(tx *bolt.Tx) error {
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
		mustOrg(t, db, "Template")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(secrets[0]) != 32 || bytes.Equal(secrets[0], secrets[1]) {
		t.Fatalf("secrets %x and %x: want two different 32-byte secrets", secrets[0], secrets[1])
	}
}
