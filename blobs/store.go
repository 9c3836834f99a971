// Package blobs keeps the files interviewd stores beside its records (uploads, export
// artifacts, organisations' plugins) behind one small interface, so a single node keeps
// them in DATA/blobs and several nodes share an S3-compatible bucket. It earns its own
// folder because kv, jobs, server and the admin commands all read and write blobs, and
// the S3 client must stay out of the rest of them.
//
// Keys are slash-separated relative paths ("files/ID", "exports/ID.csv",
// "plugins/SHA.wasm"): the fs store maps them onto folders, the S3 store onto object
// names, so the same key names the same blob in either.
package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"
)

// Info describes one stored blob.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Store holds blobs. A blob is written once (Put replaces it whole, never partly: a
// reader sees the old bytes or the new ones) and read, listed or deleted by key.
//
// Errors: a missing key is fs.ErrNotExist (errors.Is); a key that is not a clean
// relative path is ErrInvalidKey; a store that cannot be reached (the bucket's server
// down, refusing our credentials, the bucket gone) is ErrUnavailable, which the API
// answers with 503.
type Store interface {
	// Put stores r's bytes under key. size is the exact length, or -1 when unknown; a
	// stream that ends short of (or runs past) a given size stores nothing and fails.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Get opens key for reading and returns its size. The caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Stat describes key.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns every blob whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Presign returns a URL that reads key without credentials until ttl has passed,
	// served as an attachment named filename of mediaType. ErrNoPresign when the store
	// has no such URLs (the fs store).
	Presign(ctx context.Context, key string, ttl time.Duration, filename, mediaType string) (string, error)
	// Ping checks that the store can be reached; ErrUnavailable when it cannot.
	Ping(ctx context.Context) error
	// String names the store for logs, without credentials.
	String() string
}

var (
	// ErrUnavailable is a store that cannot be reached or refuses to serve.
	ErrUnavailable = errors.New("blob store unavailable")
	// ErrInvalidKey is a key that is not a clean relative slash-separated path.
	ErrInvalidKey = errors.New("invalid blob key")
	// ErrNoPresign is a store that cannot hand out presigned URLs.
	ErrNoPresign = errors.New("blob store has no presigned URLs")
)

// unavailable wraps cause so that errors.Is(err, ErrUnavailable) holds and the cause
// stays in the message for the log.
func unavailable(op, key string, cause error) error {
	return &opError{op: op, key: key, err: cause, unavailable: true}
}

type opError struct {
	op, key     string
	err         error
	unavailable bool
}

func (e *opError) Error() string {
	return fmt.Sprintf("blobs: %s %s: %v", e.op, e.key, e.err)
}

func (e *opError) Unwrap() []error {
	if e.unavailable {
		return []error{ErrUnavailable, e.err}
	}
	return []error{e.err}
}

// notExist is the error for a missing key: fs.ErrNotExist to errors.Is.
func notExist(op, key string) error {
	return &opError{op: op, key: key, err: fs.ErrNotExist}
}

// checkKey refuses keys that could leave the store's root or name a folder: empty,
// absolute, with "." or ".." segments, empty segments, backslashes or NUL.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") ||
		strings.ContainsAny(key, "\\\x00") {
		return fmt.Errorf("%w %q", ErrInvalidKey, key)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w %q", ErrInvalidKey, key)
		}
	}
	return nil
}

// Open returns the store a --blobs value names: "" is the fs store in dir (DATA/blobs),
// "s3://bucket?endpoint=host:port&region=…" an S3-compatible bucket (see ParseS3URL),
// anything else a folder path.
func Open(ctx context.Context, spec, dir string, env func(string) (string, bool)) (Store, error) {
	switch {
	case spec == "":
		return NewFS(dir)
	case strings.HasPrefix(spec, "s3://"):
		cfg, err := ParseS3URL(spec, env)
		if err != nil {
			return nil, err
		}
		return NewS3(ctx, cfg)
	case strings.Contains(spec, "://"):
		u, _ := url.Parse(spec)
		scheme := "?"
		if u != nil {
			scheme = u.Scheme
		}
		return nil, fmt.Errorf("%q: unknown scheme %s; want s3://bucket?endpoint=host:port&region=… or a folder", spec, scheme)
	}
	return NewFS(spec)
}
