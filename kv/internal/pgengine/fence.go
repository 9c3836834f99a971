package pgengine

import "context"

// Fences: a check a request's next statement carries. kv uses one for its credential
// cache: a request admitted with a cached credential leaves the check armed under its
// context, and the next statement it sends (a single read, a transaction's first
// statement, a rate decision) reads the credential's epoch in the same round trip and
// snapshot and hands it to the check, which fails the statement (a write is rolled
// back) when the credential changed. The engine knows only the record to read and
// whom to tell.

// Fence is one armed check.
type Fence interface {
	// Key is the key of the record the check reads, in Fences.Bucket.
	Key() []byte
	// Want is the value the check passes with (nil: no record), for a check made
	// inside the database (the fenced rate decision).
	Want() []byte
	// Resolve hears the record's value as read (nil when there is none); an error fails
	// the statement with it.
	Resolve(value []byte) error
}

// Fences names the checks statements carry.
type Fences struct {
	// Bucket holds every check's record.
	Bucket string
	// Pending returns the check due with ctx's next statement (nil when none is), or
	// the error a check under ctx already failed with.
	Pending func(ctx context.Context) (Fence, error)
}

// pending returns ctx's due check, if any.
func (f *Fences) pending(ctx context.Context) (Fence, error) {
	if f.Pending == nil {
		return nil, nil
	}
	return f.Pending(ctx)
}

// fenceSQL reads a check's record ($1: the bucket, $2: the key).
const fenceSQL = `SELECT value FROM interviewd_kv WHERE bucket = $1 AND key = $2`
