//go:build unix

package kv

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// canLock: files are locked with flock, as bbolt locks its file here, so Open can look
// at a data file under the same lock bbolt takes and set an unfinished one aside
// without another process holding it at the time.
const canLock = true

// lockFile takes f's exclusive lock, trying until deadline; false means another
// process held it all that time.
func lockFile(f *os.File, deadline time.Time) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return false, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// samePath reports whether f is still the file at path (not one set aside meanwhile).
func samePath(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}
