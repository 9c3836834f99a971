package kv

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv/internal/boltengine"
)

// Reading a backup back: restore and verify share one reader, so a backup verify calls
// good is one restore takes, and the other way round.

func invalidBackup(msg string) error {
	return Errorf(EINVALID, "invalid_backup", msg)
}

// entrySink receives an entry's bytes while it is hashed; nil means hash only.
type entrySink func(name string) (io.WriteCloser, error)

// readBackup reads the backup at from, checks every entry against its manifest (each
// listed entry present with its SHA-256, none unlisted) and hands each entry's bytes
// to keep. A bare bbolt file (not a tar) is taken as the database alone, with no
// manifest to check it against.
func readBackup(from string, keep entrySink) (BackupManifest, error) {
	f, err := os.Open(from)
	if err != nil {
		return BackupManifest{}, err
	}
	defer f.Close()
	var head [512]byte
	n, _ := io.ReadFull(f, head[:])
	if n == 0 {
		return BackupManifest{}, invalidBackup("The backup file is empty.")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return BackupManifest{}, err
	}
	if n < 263 || string(head[257:262]) != "ustar" {
		size, _, err := copyEntry(f, FileName, keep)
		if err != nil {
			return BackupManifest{}, err
		}
		return BackupManifest{Files: []BackupFile{{Path: FileName, Size: size}}}, nil
	}
	seen := map[string]string{}
	var man *BackupManifest
	tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return BackupManifest{}, invalidBackup("The backup is not a readable tar file: " + err.Error())
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(h.Name)
		if name == ManifestName {
			var m BackupManifest
			if err := json.NewDecoder(io.LimitReader(tr, 64<<20)).Decode(&m); err != nil {
				return BackupManifest{}, invalidBackup("The backup's manifest is unreadable: " + err.Error())
			}
			man = &m
			continue
		}
		top, _, _ := strings.Cut(name, "/")
		if strings.HasPrefix(name, "/") || strings.Contains(name, "..") ||
			(name != FileName && (top == name || (top != "blobs" && top != "acme"))) {
			return BackupManifest{}, invalidBackup(fmt.Sprintf("The backup holds an unexpected entry %q.", h.Name))
		}
		_, sum, err := copyEntry(tr, name, keep)
		if err != nil {
			return BackupManifest{}, err
		}
		seen[name] = sum
	}
	if man == nil {
		return BackupManifest{}, invalidBackup("The backup has no manifest.json: it is incomplete.")
	}
	listed := map[string]bool{}
	for _, e := range man.Files {
		listed[e.Path] = true
		got, ok := seen[e.Path]
		if !ok {
			return BackupManifest{}, invalidBackup(fmt.Sprintf("The backup lacks %s, which its manifest lists.", e.Path))
		}
		if got != e.SHA256 {
			return BackupManifest{}, invalidBackup(fmt.Sprintf("The backup's %s does not match its manifest (SHA-256 differs).", e.Path))
		}
	}
	var unlisted []string
	for name := range seen {
		if !listed[name] {
			unlisted = append(unlisted, name)
		}
	}
	if len(unlisted) > 0 {
		sort.Strings(unlisted)
		return BackupManifest{}, invalidBackup(fmt.Sprintf("The backup holds %s, which its manifest does not list.", strings.Join(unlisted, ", ")))
	}
	if _, ok := seen[FileName]; !ok {
		return BackupManifest{}, invalidBackup("The backup holds no " + FileName + ".")
	}
	return *man, nil
}

// copyEntry copies one entry to keep's writer (or nowhere) and returns its size and
// SHA-256.
func copyEntry(r io.Reader, name string, keep entrySink) (int64, string, error) {
	var w io.Writer = io.Discard
	var closer io.Closer
	if keep != nil {
		wc, err := keep(name)
		if err != nil {
			return 0, "", err
		}
		if wc != nil {
			w, closer = wc, wc
		}
	}
	hash := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, hash), r)
	if closer != nil {
		if cerr := closer.Close(); err == nil && cerr != nil {
			return 0, "", cerr
		}
	}
	if err != nil {
		return 0, "", invalidBackup(fmt.Sprintf("The backup's entry %s is truncated: %v", name, err))
	}
	return n, hex.EncodeToString(hash.Sum(nil)), nil
}

// unpackBackup writes the backup's entries under stage and checks them against its
// manifest.
func unpackBackup(from, stage string) (BackupManifest, error) {
	return readBackup(from, func(name string) (io.WriteCloser, error) {
		dst := filepath.Join(stage, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, err
		}
		return os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	})
}

// checkDBFile opens a database file read-only, runs bbolt's consistency check over
// every page and checks its schema version; it returns the file's size and schema.
// EINVALID when any check fails.
func checkDBFile(p string) (size int64, schema int, err error) {
	err = boltengine.Inspect(p, func(n int64, problems []string, tx Tx) error {
		size = n
		if len(problems) > 0 {
			return invalidBackup("The backup's database fails the consistency check: " + strings.Join(problems, "; "))
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return invalidBackup("The backup's database is not an interviewd database.")
		}
		if raw := meta.Get([]byte("schema")); raw != nil {
			if err := json.Unmarshal(raw, &schema); err != nil {
				return invalidBackup("The backup's schema version is unreadable.")
			}
		}
		if schema > schemaVersion {
			return invalidBackup(fmt.Sprintf("The backup has schema version %d; this interviewd understands up to %d.", schema, schemaVersion))
		}
		return nil
	})
	var oe *boltengine.OpenError
	if errors.As(err, &oe) {
		return 0, 0, invalidBackup("The backup's database cannot be opened: " + oe.Err.Error())
	}
	return size, schema, err
}

// checkBackupDB checks the database file p unpacked from a backup whose manifest is
// man: checkDBFile, and the schema the manifest names (when it names one) is the
// file's.
func checkBackupDB(man BackupManifest, p string) (size int64, schema int, err error) {
	if size, schema, err = checkDBFile(p); err != nil {
		return size, schema, err
	}
	if man.Schema != 0 && man.Schema != schema {
		return size, schema, invalidBackup(fmt.Sprintf("The backup's manifest names schema version %d but its database has %d.", man.Schema, schema))
	}
	return size, schema, nil
}

// VerifyReceipt says what a backup that passed every check holds.
type VerifyReceipt struct {
	File     string    `json:"file"`
	OK       bool      `json:"ok"`
	BackupAt time.Time `json:"backup_created_at,omitzero"`
	Schema   int       `json:"schema"`
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"`
	DBBytes  int64     `json:"db_bytes"`
	// Bare is set for a bare database file: it has no manifest, so only the database
	// checks apply.
	Bare bool `json:"bare,omitempty"`
}

// VerifyBackup runs every check restore runs on the backup at from, without restoring
// it and without any data folder: each entry against the manifest's SHA-256, and the
// database (copied to a temporary folder under os.TempDir, since bbolt opens only a
// file of its own) with bbolt's consistency check over every page and for a schema
// version this interviewd understands, matching the manifest's. EINVALID naming the
// first problem found.
func VerifyBackup(from string) (VerifyReceipt, error) {
	rc := VerifyReceipt{File: from}
	tmp, err := os.MkdirTemp("", "interviewd-verify-")
	if err != nil {
		return rc, err
	}
	defer os.RemoveAll(tmp)
	dbCopy := filepath.Join(tmp, FileName)
	man, err := readBackup(from, func(name string) (io.WriteCloser, error) {
		if name != FileName {
			return nil, nil // hashed, not kept
		}
		return os.OpenFile(dbCopy, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	})
	if err != nil {
		return rc, err
	}
	rc.BackupAt, rc.Files, rc.Bare = man.CreatedAt, len(man.Files), man.CreatedAt.IsZero()
	for _, f := range man.Files {
		rc.Bytes += f.Size
	}
	if rc.DBBytes, rc.Schema, err = checkBackupDB(man, dbCopy); err != nil {
		return rc, err
	}
	rc.OK = true
	return rc, nil
}
