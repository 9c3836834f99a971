package s3client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// rewinder is a request body that remembers whether it can be sent again and whether
// its own reader (not the connection) failed.
//
// net/http reads a body on its own goroutine and may still be reading when Do returns,
// hence the lock.
type rewinder struct {
	r      io.Reader
	seeker io.Seeker
	start  int64 // where the body starts in seeker

	mu   sync.Mutex
	read int64 // bytes read in this attempt
	err  error // the reader's failure, io.EOF aside
	sent bool  // an attempt was made
}

func newRewinder(r io.Reader) *rewinder {
	b := &rewinder{r: r}
	if s, ok := r.(io.Seeker); ok && r != nil {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			b.seeker, b.start = s, pos
		}
	}
	return b
}

func (b *rewinder) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	return n, err
}

// canResend reports whether the body can be sent again: it is empty, nothing of it was
// read yet (the connection failed before sending), or it can seek back to its start.
func (b *rewinder) canResend() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r == nil || b.read == 0 || b.seeker != nil
}

// rewind readies the body for the next attempt.
func (b *rewinder) rewind() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.sent || b.r == nil {
		b.sent = true
		return nil
	}
	if b.read == 0 {
		return nil
	}
	if b.seeker == nil {
		return errors.New("s3: the request body cannot be sent again")
	}
	if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
		return fmt.Errorf("s3: rewinding the request body: %w", err)
	}
	b.read, b.err = 0, nil
	return nil
}

// failed is the error the body's reader returned, if any.
func (b *rewinder) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// spool copies r, of unknown length, into a temporary file and returns the file (at its
// start) and its length: a single PUT must state its Content-Length, and a file can be
// sent again if the connection drops. The caller closes and removes the file.
func spool(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "interviewd-s3-put-*")
	if err != nil {
		return nil, 0, fmt.Errorf("s3: spooling an upload of unknown size: %w", err)
	}
	n, err := io.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, n, nil
}
