package kv

import (
	"bytes"
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A fresh data file is made without a single sync.
//
// bbolt syncs a file it creates and every commit twice, and grows it with one more:
// four syncs before the first request, most of a first start. They buy nothing: until
// the first write is acknowledged, the file holds nothing anyone was promised, only
// the empty buckets and a secret nothing has been signed with yet. So createFile
// prepares the file where a sync costs nothing (memory-backed /dev/shm, where there is
// one), writes it under a temporary name in the data folder and links it into place,
// with no sync; the sync is owed, not skipped:
//
//   - The first commit pays it. A bbolt commit fdatasyncs the file before and after
//     writing its meta page, which makes every page of the file durable, the prepared
//     ones too (a sync flushes the file, not one writer's pages). The committer then
//     syncs the data folder (and its parent) once, so the file's name is durable too,
//     and only then answers the writers (committer.owed).
//   - A crash before that may leave no file, an empty one, or the prepared file with
//     some pages missing (zeros) or cut short. Open tells such a file by its meta pages:
//     a file any write was ever acknowledged from has a durable, valid meta page of a
//     transaction after the preparation (txid > preparedTxid), because a commit syncs
//     the file before and after writing it. A file without one was never written to;
//     when it is also damaged (no valid meta page, or a page of its tree missing), Open
//     sets it aside as interviewd.db.unfinished-TIME and makes a new one
//     (settleUnfinished). Nothing is deleted, and a file with a valid meta page past
//     the preparation, or bigger than a prepared file, is never touched: whatever is
//     wrong with it, bbolt reports as before. (Only a file damaged after it was synced,
//     by the disk, could lose every such meta page and stay that small; it is kept
//     beside the new one.)
//
// Where the scratch folder cannot be used or the data folder's filesystem has no hard
// links (EPERM, ENOTSUP, EXDEV...), createFile leaves no file and Open takes the plain
// path: bolt.Open creates the file and prepareOnce prepares it, with bbolt's syncs.
// Where files cannot be locked the way bbolt locks them (not a unix system), the new
// file is synced before it is linked, and nothing is ever set aside.

// preparedTxid is the transaction id a freshly prepared file is at: bbolt's two initial
// meta pages (0 and 1) and the one commit of prepare. Any later commit, the first
// acknowledged write above all, has a higher id. TestPreparedTxid pins it.
const preparedTxid = 2

// maxUnfinished bounds the size of a file settleUnfinished reads: a prepared file is a
// handful of pages, so anything bigger is a store in use and left to bbolt.
const maxUnfinished = 1 << 20

// createFile makes the data file at path when there is none, ready to serve: every
// bucket, the schema version and the secret. It reports whether it made the file. When
// another process creates the file first, its file wins. scratch and link replace the
// scratch folder and os.Link when set.
func createFile(path, scratch string, link func(oldname, newname string) error) (bool, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there already, or an error bolt.Open will report
	}
	if link == nil {
		link = os.Link
	}
	img, err := preparedImage(scratch)
	if err != nil {
		return false, nil // no usable scratch folder: the plain path
	}
	tmp, err := writeTemp(path, img)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := link(tmp, path); err != nil {
		// ErrExist: another process was first, and its file is settled like any other.
		// Anything else: no hard links here, so the plain path (the deferred Remove
		// drops tmp).
		return false, nil
	}
	if !canLock {
		return true, syncPath(filepath.Dir(path)) // nothing can be set aside: the name is made durable now
	}
	return true, nil
}

// writeTemp writes img to a new temporary file beside path and returns its name. It
// syncs the file only where an unfinished file could not be set aside later.
func writeTemp(path string, img []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(img)
	if err == nil && !canLock {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	return f.Name(), nil
}

// preparedImage returns the bytes of a freshly prepared data file. Without a scratch
// folder set it copies the prepared file built into the binary (freshTemplate) and
// gives the copy its own random secret; where that template does not fit (see
// templateFits) or scratch is set, it prepares one with bbolt (buildImage).
func preparedImage(scratch string) ([]byte, error) {
	if scratch == "" && templateFits() {
		img := bytes.Clone(freshTemplate)
		at := bytes.Index(img, templateSecret)
		if at >= 0 && bytes.Index(img[at+1:], templateSecret) < 0 {
			if _, err := rand.Read(img[at : at+len(templateSecret)]); err != nil {
				return nil, err
			}
			return img, nil
		}
	}
	return buildImage(scratch, nil)
}

// A fresh data file is the same every time but for its 32-byte secret, so a prepared
// one is built into the binary: fresh.db, prepared by buildImage with templateSecret
// standing in for the secret. Copying it and writing a random secret in its place
// replaces opening, preparing and closing a bbolt file in the scratch folder, a
// twentieth of start-up. The secret is in a leaf page, which bbolt does not checksum
// (only meta pages carry one). TestFreshTemplate fails when fresh.db is not what
// buildImage makes today (a bucket or migration added): `go test ./kv -run
// TestFreshTemplate -update` rewrites it.
//
//go:embed fresh.db
var freshTemplate []byte

// templateSecret stands in for the secret in freshTemplate; it appears nowhere else in it.
var templateSecret = []byte("interviewd-fresh-file-secret-32b")

// templateFits reports whether freshTemplate is the file bbolt would make here: bbolt
// writes its pages in the machine's byte order and sizes them by the machine's memory
// page, and fresh.db was made little-endian with 4096-byte pages.
func templateFits() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 && os.Getpagesize() == 4096
}

// buildImage prepares a data file with bbolt in a scratch folder (scratch if set, else
// /dev/shm when it exists, else the system's temporary folder) without syncs beyond the
// one bbolt makes at creation, returns its bytes and removes it. secret, when set, is
// the file's secret instead of a random one.
func buildImage(scratch string, secret []byte) ([]byte, error) {
	if scratch == "" {
		scratch = os.TempDir()
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			scratch = "/dev/shm"
		}
	}
	f, err := os.CreateTemp(scratch, "interviewd-new-*.db")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Close(); err != nil {
		return nil, err
	}
	b, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, NoGrowSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	db := &DB{bolt: b}
	err = b.Update(func(tx *bolt.Tx) error {
		if secret != nil {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if err := meta.Put([]byte("secret"), secret); err != nil {
				return err
			}
		}
		return db.prepareBolt(tx)
	})
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(tmp)
}

// settleUnfinished looks at the existing data file at path under its lock and, when it
// is an unfinished one (see the top of this file: never written to, and damaged), sets
// it aside and puts a freshly prepared file in its place. It leaves every other file
// alone, and returns without looking when the file is held by another process beyond
// timeout (bolt.Open then reports it locked) or cannot be read (bolt.Open reports why).
// It returns an error only when a damaged file could not be replaced.
func settleUnfinished(path, scratch string, timeout time.Duration) error {
	if !canLock {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil
		}
		locked, err := lockFile(f, deadline)
		if err != nil || !locked {
			_ = f.Close()
			return nil
		}
		// The lock is on the file this process opened; another process may have set it
		// aside and put a new one in its place meanwhile: then look at that one.
		same, err := samePath(f, path)
		if err != nil || !same {
			_ = f.Close()
			if err != nil {
				return nil
			}
			continue
		}
		err = settleLocked(f, path, scratch)
		_ = f.Close() // and with it the lock, now that the name points at a sound file
		return err
	}
}

// settleLocked does settleUnfinished's work on f, the locked file at path.
func settleLocked(f *os.File, path, scratch string) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 || st.Size() > maxUnfinished {
		return nil // an empty file is bbolt's to initialise; a big one is in use
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil
	}
	if !unfinished(b) {
		return nil
	}
	img, err := preparedImage(scratch)
	if err != nil {
		return fmt.Errorf("replace the unfinished data file %s: %w", path, err)
	}
	if len(b) > len(img) {
		return nil // bigger than a prepared file: it has held data, so it is bbolt's to judge
	}
	aside := path + ".unfinished-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := os.Link(path, aside); err != nil {
		return fmt.Errorf("set aside the unfinished data file %s: %w", path, err)
	}
	tmp, err := writeTemp(path, img)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("replace the unfinished data file %s: %w", path, err)
	}
	return nil
}

// bbolt's file format, as far as telling an unfinished file needs it: every page
// starts with a 16-byte header (id uint64, flags uint16, count uint16, overflow
// uint32); pages 0 and 1 hold a meta (magic, version, page size, flags, root bucket
// (root page, sequence), freelist page, high-water page, txid, then an FNV-64a checksum
// of the 56 bytes before it), in the machine's byte order.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltHeader       = 16
	boltMetaSum      = 56
	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltMetaPage     = 0x04
	boltFreelistPage = 0x10
)

// boltMeta is a meta page as unfinished reads it.
type boltMeta struct {
	pageSize uint32
	hwm      uint64 // the high-water page: every page below it belongs to the file
	txid     uint64
}

// readMeta returns the meta page at off in b, if it is there and valid.
func readMeta(b []byte, off int) (boltMeta, bool) {
	if off < 0 || len(b) < off+boltHeader+boltMetaSum+8 {
		return boltMeta{}, false
	}
	m := b[off+boltHeader:]
	le := binary.NativeEndian
	h := fnv.New64a()
	_, _ = h.Write(m[:boltMetaSum])
	if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || le.Uint64(m[boltMetaSum:]) != h.Sum64() {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: le.Uint32(m[8:]), hwm: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, true
}

// unfinished reports whether b, a whole data file, was never written to and cannot be
// opened as it is (an empty file can: bbolt starts it afresh): no valid meta page has a txid past preparedTxid, and either no meta
// page is valid or a page below the newest meta's high-water mark is not what bbolt
// wrote there (a missing page reads as zeros, and a cut-short file lacks it).
func unfinished(b []byte) bool {
	if len(b) == 0 {
		return false // bbolt makes an empty file a new store, with its own syncs
	}
	m0, ok0 := readMeta(b, 0)
	var m1 boltMeta
	ok1 := false
	for _, size := range []int{int(m0.pageSize), os.Getpagesize(), 4096, 16384, 65536} {
		if size > 0 {
			if m1, ok1 = readMeta(b, size); ok1 {
				break
			}
		}
	}
	if (ok0 && m0.txid > preparedTxid) || (ok1 && m1.txid > preparedTxid) {
		return false // written to: a committed write was acknowledged from this file
	}
	m := m0
	switch {
	case !ok0 && !ok1:
		return true
	case !ok0 || (ok1 && m1.txid > m0.txid):
		m = m1
	}
	size := uint64(m.pageSize)
	if size < boltHeader || m.hwm < 2 || m.hwm > uint64(len(b))/size {
		return true
	}
	le := binary.NativeEndian
	for id := uint64(2); id < m.hwm; {
		p := b[id*size:]
		switch le.Uint16(p[8:]) {
		case boltBranchPage, boltLeafPage, boltFreelistPage, boltMetaPage:
		default:
			return true
		}
		if le.Uint64(p) != id {
			return true
		}
		id += 1 + uint64(le.Uint32(p[12:]))
	}
	return false
}

// syncPath fsyncs the file or folder at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// prepareOnce makes sure the open file has every bucket, this schema version and the
// secret, writing only when something is missing. It reports whether the file has
// never been written to since it was prepared (so its first commit owes the syncs its
// creation skipped).
func (db *DB) prepareOnce() (fresh bool, err error) {
	ready := false
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		ready = db.prepared(boltTx{tx})
		fresh = tx.ID() <= preparedTxid
		return nil
	}); err != nil {
		return false, err
	}
	if ready {
		return fresh, nil
	}
	return false, db.bolt.Update(db.prepareBolt) // a synced commit: nothing is owed after it
}

// prepared reports whether the open file already has everything prepare makes (every
// bucket, this schema version, the secret), taking the secret if so: a restart then
// opens without writing, where an empty update would still cost a commit's two syncs.
func (db *DB) prepared(tx Tx) bool {
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return false
		}
	}
	meta := tx.Bucket(bucketMeta)
	secret := meta.Get([]byte("secret"))
	if string(meta.Get([]byte("schema"))) != itoa(schemaVersion) || secret == nil {
		return false
	}
	db.secret = append([]byte(nil), secret...)
	return true
}
