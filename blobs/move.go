package blobs

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// MoveFile stores the local file at path under key and removes the file once stored.
// The fs store renames it into place when both are on one file system (an upload or an
// export is never copied twice); any other store reads it with its exact size. On error
// the file is left for the caller to remove.
func MoveFile(ctx context.Context, s Store, key, path string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if f, ok := s.(*FS); ok {
		if err := syncFile(path); err != nil {
			return err
		}
		err := f.adopt(key, path)
		var le *os.LinkError
		if !errors.As(err, &le) || !errors.Is(le.Err, syscall.EXDEV) {
			return err
		}
		// Another file system: copy below.
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	if err := s.Put(ctx, key, file, st.Size()); err != nil {
		return err
	}
	_ = os.Remove(path)
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
