package s3client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// rewinder is a request body that can be handed to several attempts of one request: it
// remembers whether it can be sent again and whether its own reader (not the
// connection) failed.
type rewinder struct {
	r      io.Reader
	seeker io.Seeker
	start  int64 // where the body starts in seeker

	mu   sync.Mutex
	read int64    // bytes read by the current attempt
	err  error    // the reader's failure, io.EOF aside
	last *attempt // the current attempt's body
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

// attempt is the body of one request. net/http closes a request's body when it is done
// with it, which may be after Do has returned: the next attempt waits for that before it
// rewinds the stream, so two attempts never read it at once.
type attempt struct {
	b    *rewinder
	once sync.Once
	done chan struct{}
}

func (a *attempt) Read(p []byte) (int, error) {
	n, err := a.b.r.Read(p)
	a.b.mu.Lock()
	a.b.read += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && a.b.err == nil {
		a.b.err = err
	}
	a.b.mu.Unlock()
	return n, err
}

func (a *attempt) Close() error {
	a.once.Do(func() { close(a.done) })
	return nil
}

// next returns the body for the next attempt, rewound to its start.
func (b *rewinder) next(ctx context.Context) (io.ReadCloser, error) {
	if prev := b.last; prev != nil {
		select {
		case <-prev.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		b.mu.Lock()
		read, failed := b.read, b.err
		b.mu.Unlock()
		if failed != nil {
			return nil, failed // the stream itself is broken: another attempt fails alike
		}
		if read > 0 {
			if b.seeker == nil {
				return nil, errors.New("s3: the request body cannot be sent again")
			}
			if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
				return nil, fmt.Errorf("s3: rewinding the request body: %w", err)
			}
		}
		b.mu.Lock()
		b.read, b.err = 0, nil
		b.mu.Unlock()
	}
	b.last = &attempt{b: b, done: make(chan struct{})}
	return b.last, nil
}

// canResend reports whether the body can be sent again: there is none, nothing of it
// was read yet (the connection failed before sending), or it can seek back to its start.
func (b *rewinder) canResend() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r == nil || b.read == 0 || b.seeker != nil
}

// failed is the error the body's reader returned, if any.
func (b *rewinder) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// maxBuffered is the largest stream hashed in memory rather than in a temporary file
// (over plain http, where a body's hash is signed): a copy of many small files between
// stores should not write each to disk once more.
const maxBuffered = 4 << 20

// readExactly reads the size bytes of r, which must end there.
func readExactly(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, size)
	if n, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = fmt.Errorf("s3: the body is %d bytes, not %d", n, size)
		}
		return nil, err
	}
	var one [1]byte
	if n, err := io.ReadAtLeast(r, one[:], 1); n > 0 {
		return nil, fmt.Errorf("s3: the body is longer than its size, %d", size)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

// spool copies r into a temporary file and returns the file (at its start), its length
// and its hex SHA-256: a single PUT must state its Content-Length (and, over http, its
// hash) before the first byte, and a file can be sent again if the connection drops. The
// caller closes and removes the file.
func spool(r io.Reader) (*os.File, int64, string, error) {
	f, err := os.CreateTemp("", "interviewd-s3-put-*")
	if err != nil {
		return nil, 0, "", fmt.Errorf("s3: spooling an upload: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, "", err
	}
	return f, n, hex.EncodeToString(h.Sum(nil)), nil
}

// hashSeekable returns the hex SHA-256 of the next size bytes of r and seeks back to
// where they start. A stream that ends sooner is an error.
func hashSeekable(r io.ReadSeeker, size int64) (string, error) {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", fmt.Errorf("s3: hashing the request body: %w", err)
	}
	h := sha256.New()
	n, err := io.CopyN(h, r, size)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("s3: the body is %d bytes, not %d", n, size)
		}
		return "", err
	}
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return "", fmt.Errorf("s3: rewinding the request body: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
