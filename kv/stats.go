package kv

import (
	"os"
	"path/filepath"
)

// FileSize returns the database file's size in bytes (0 if it cannot be read).
func (db *DB) FileSize() int64 {
	st, err := os.Stat(filepath.Join(db.dir, FileName))
	if err != nil {
		return 0
	}
	return st.Size()
}
