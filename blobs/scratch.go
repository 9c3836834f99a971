package blobs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SweepScratch deletes what a crash can leave under root (DATA/blobs) and no one will
// finish: files in the scratch folder (uploads and exports on their way to the store)
// and unfinished fs-store writes (.part-*), last changed before before. It returns how
// many it deleted; a missing root is no error.
func SweepScratch(root string, before time.Time) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		inScratch := filepath.Dir(p) == filepath.Join(root, ScratchDir)
		if !inScratch && !strings.HasPrefix(d.Name(), partPrefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(before) {
			return nil
		}
		if os.Remove(p) == nil {
			n++
		}
		return nil
	})
	return n, err
}
