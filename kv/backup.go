package kv

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv/internal/boltengine"
)

// A backup is one tar file: interviewd.db (a consistent copy written from one read
// transaction while the store stays online), every file under blobs/ (uploads, export
// artifacts, plugins) and acme/ (certificates), and last manifest.json listing each
// entry with its size and SHA-256. The plugin compilation cache is left out: it is
// rebuilt on demand.

// ManifestName is the last entry of a backup.
const ManifestName = "manifest.json"

// backedUpDirs are the folders of the data folder a backup carries besides the file.
var backedUpDirs = []string{"blobs", "acme"}

// BackupFile is one entry of a backup.
type BackupFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// BackupManifest lists what a backup holds.
type BackupManifest struct {
	CreatedAt time.Time    `json:"created_at"`
	Schema    int          `json:"schema"`
	Files     []BackupFile `json:"files"`
	// BlobsElsewhere names the blob store when it is not DATA/blobs (an S3 bucket): its
	// blobs are not in the backup, and are backed up with the bucket's own means.
	BlobsElsewhere string `json:"blobs_elsewhere,omitempty"`
}

// WriteBackup writes a backup of the data folder to w and returns its manifest. The
// database part is one read transaction: writers carry on meanwhile. Blobs are read
// after it, outside the transaction (a long read transaction would hold the file from
// growing); they are written once and never changed, so a blob the copy names is the
// blob the service has.
func (db *DB) WriteBackup(ctx context.Context, w io.Writer) (BackupManifest, error) {
	m := BackupManifest{CreatedAt: db.Now(), Schema: schemaVersion}
	if db.bolt == nil {
		return BackupManifest{}, errNotBolt("backup")
	}
	if err := ctx.Err(); err != nil {
		return BackupManifest{}, err
	}
	tw := tar.NewWriter(w)
	err := db.bolt.Snapshot(func(size int64, writeTo func(io.Writer) (int64, error)) error {
		h := sha256.New()
		if err := tw.WriteHeader(&tar.Header{Name: FileName, Mode: 0o600, Size: size, ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		n, err := writeTo(io.MultiWriter(tw, h))
		if err != nil {
			return err
		}
		m.Files = append(m.Files, BackupFile{Path: FileName, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	})
	if err != nil {
		return BackupManifest{}, fmt.Errorf("back up %s: %w", FileName, err)
	}
	uploads := filepath.Join(db.dir, "blobs", "tmp")
	if !db.blobsInFolder() {
		m.BlobsElsewhere = db.blobs.String()
	}
	for _, dir := range backedUpDirs {
		if dir == "blobs" && m.BlobsElsewhere != "" {
			continue
		}
		root := filepath.Join(db.dir, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the folder, or a file removed while walking (an expired artifact)
			}
			if err != nil {
				return err
			}
			if d.IsDir() && p == uploads {
				return fs.SkipDir // uploads still being received, growing while they are copied
			}
			if d.IsDir() || !d.Type().IsRegular() || (strings.HasPrefix(d.Name(), "export-") && filepath.Base(filepath.Dir(p)) == "exports") ||
				strings.HasPrefix(d.Name(), ".part-") {
				return nil // export-* and .part-* are blobs still being written
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel, err := filepath.Rel(db.dir, p)
			if err != nil {
				return err
			}
			f, err := addFile(tw, p, filepath.ToSlash(rel))
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err == nil {
				m.Files = append(m.Files, f)
			}
			return err
		})
		if err != nil {
			return BackupManifest{}, fmt.Errorf("back up %s: %w", dir, err)
		}
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return BackupManifest{}, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(raw)), ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
		return BackupManifest{}, err
	}
	if _, err := tw.Write(raw); err != nil {
		return BackupManifest{}, err
	}
	return m, tw.Close()
}

func addFile(tw *tar.Writer, p, name string) (BackupFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return BackupFile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return BackupFile{}, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return BackupFile{}, err
	}
	// The header promised st.Size() bytes: copy exactly that many, so a file that grows
	// meanwhile is carried as it was when looked at rather than failing the tar. One that
	// shrinks fails the backup naming it: the entry cannot be taken back once its header
	// is written, and padding it would store a copy that never existed.
	h := sha256.New()
	n, err := io.CopyN(io.MultiWriter(tw, h), f, st.Size())
	if errors.Is(err, io.EOF) {
		return BackupFile{}, fmt.Errorf("%s shrank from %d to %d bytes while being backed up", name, st.Size(), n)
	}
	if err != nil {
		return BackupFile{}, err
	}
	return BackupFile{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// BackupToFile writes a backup to path (through a temporary file beside it, synced and
// then moved into place, so path is never a half-written backup) and returns its
// manifest. An existing file at path is replaced only when replace is set: otherwise
// ECONFLICT, checked before the backup is taken and again, atomically, as it is put in
// place.
func (db *DB) BackupToFile(ctx context.Context, path string, replace bool) (BackupManifest, error) {
	if !replace {
		if err := refuseExisting(path); err != nil {
			return BackupManifest{}, err
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return BackupManifest{}, err
	}
	tmp, err := os.CreateTemp(dir, ".backup-*")
	if err != nil {
		return BackupManifest{}, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	bw := bufio.NewWriterSize(tmp, 1<<20)
	m, err := db.WriteBackup(ctx, bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = placeBackup(tmp.Name(), path, replace)
	}
	if err != nil {
		return BackupManifest{}, err
	}
	return m, nil
}

// refuseExisting is ECONFLICT when something already exists at path.
func refuseExisting(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return backupExists(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func backupExists(path string) error {
	return Errorf(ECONFLICT, "backup_exists", path+" already exists; a backup replaces a file only when asked to")
}

// placeBackup moves the finished temporary file to path. Without replace it links
// rather than renames: link(2) fails when path exists, so a file created meanwhile is
// never overwritten either. A file system without hard links falls back to a check
// and a rename.
func placeBackup(tmp, path string, replace bool) error {
	if replace {
		return os.Rename(tmp, path)
	}
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		return nil // the deferred remove drops the temporary name
	case errors.Is(err, fs.ErrExist):
		return backupExists(path)
	}
	if err := refuseExisting(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// BackupPrefix and BackupSuffix frame the names of scheduled backups.
const (
	BackupPrefix = "interviewd-"
	BackupSuffix = ".tar"
)

// BackupName is the name a scheduled backup taken at t gets; names sort by time.
func BackupName(t time.Time) string {
	return BackupPrefix + t.UTC().Format("20060102T150405.000Z") + BackupSuffix
}

// PruneBackups deletes the oldest scheduled backups in dir beyond the newest keep and
// returns the paths it deleted. Other files in dir are left alone.
func PruneBackups(dir string, keep int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, BackupPrefix) && strings.HasSuffix(n, BackupSuffix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var deleted []string
	for len(names) > keep {
		p := filepath.Join(dir, names[0])
		if err := os.Remove(p); err != nil {
			return deleted, err
		}
		deleted, names = append(deleted, p), names[1:]
	}
	return deleted, nil
}

// RestoreReceipt says what a restore put in place and where the previous data went.
type RestoreReceipt struct {
	From       string    `json:"from"`
	RestoredAt time.Time `json:"restored_at"`
	BackupAt   time.Time `json:"backup_created_at,omitzero"`
	Files      int       `json:"files"`
	DBBytes    int64     `json:"db_bytes"`
	Checked    bool      `json:"checked"` // the file passed bbolt's consistency check
	KeptAside  string    `json:"kept_aside,omitempty"`
}

// Restore replaces the data folder's database, blobs and certificates with those of the
// backup at from (a backup tar, or a bare database file), for a data folder no process
// holds. Everything is unpacked beside the data first and checked: each entry against
// the manifest's SHA-256, the database with bbolt's consistency check and for a schema
// this interviewd understands; only then is the current data moved aside into
// DIR/before-restore-TIME/ and the backup moved in. ELOCKED when a server holds the
// folder; EINVALID for a backup that fails a check (nothing is changed then).
func Restore(dir, from string, now time.Time) (RestoreReceipt, error) {
	rc := RestoreReceipt{From: from, RestoredAt: now.UTC()}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return rc, err
	}
	// Hold the current file's lock until the swap is done, so no server starts on it
	// half-way.
	cur := filepath.Join(dir, FileName)
	if _, err := os.Stat(cur); err == nil {
		release, err := boltengine.Hold(cur, 300*time.Millisecond)
		if errors.Is(err, boltengine.ErrLocked) {
			return rc, Errorf(ELOCKED, "data_locked", fmt.Sprintf("data folder %s is held by a running interviewd server; stop it first (restore replaces the whole file)", dir))
		}
		if err == nil {
			defer release()
		}
		// A current file too damaged to open is what a restore is for: carry on.
	}
	stamp := now.UTC().Format("20060102T150405Z")
	stage, err := os.MkdirTemp(dir, ".restore-")
	if err != nil {
		return rc, err
	}
	defer os.RemoveAll(stage)
	man, err := unpackBackup(from, stage)
	if err != nil {
		return rc, err
	}
	rc.BackupAt, rc.Files = man.CreatedAt, len(man.Files)
	if rc.DBBytes, _, err = checkBackupDB(man, filepath.Join(stage, FileName)); err != nil {
		return rc, err
	}
	rc.Checked = true
	aside := filepath.Join(dir, "before-restore-"+stamp)
	moved := false
	for _, name := range append([]string{FileName}, backedUpDirs...) {
		src := filepath.Join(dir, name)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		if !moved {
			if err := os.Mkdir(aside, 0o700); err != nil {
				return rc, fmt.Errorf("keep the current data aside: %w", err)
			}
			moved = true
		}
		if err := os.Rename(src, filepath.Join(aside, name)); err != nil {
			return rc, fmt.Errorf("keep the current data aside: %w", err)
		}
	}
	if moved {
		rc.KeptAside = aside
	}
	for _, name := range append([]string{FileName}, backedUpDirs...) {
		src := filepath.Join(stage, name)
		if _, err := os.Lstat(src); err != nil {
			if name == "blobs" { // Open expects it
				_ = os.MkdirAll(filepath.Join(dir, name), 0o700)
			}
			continue
		}
		if err := os.Rename(src, filepath.Join(dir, name)); err != nil {
			return rc, fmt.Errorf("put the backup in place (the previous data is in %s): %w", aside, err)
		}
	}
	return rc, nil
}
