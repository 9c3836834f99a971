package pgengine

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// ReadOne calls fn with the value of key in bucket (nil when there is none, an empty
// slice for an empty value), read on its own. One read needs no transaction to be
// consistent, so it is one statement in one round trip, where a transaction would add
// its BEGIN and COMMIT, shared with the reads that arrive meanwhile (read_group.go); a
// check due under ctx (fence.go) is read by the same statement.
func (e *Engine) ReadOne(ctx context.Context, bucket, key []byte, fn func(v []byte) error) error {
	f, err := e.fences.pending(ctx)
	if err != nil {
		return err
	}
	var org []byte
	if f != nil {
		org = f.Key()
	}
	c := newReadCall(string(bucket), key, org)
	defer c.release()
	read := e.reads.read
	if e.ungrouped {
		read = e.readAlone
	}
	if err := read(ctx, c); err != nil {
		return err
	}
	if f != nil {
		if err := f.Resolve(c.epoch); err != nil {
			return err
		}
	}
	switch {
	case !c.found:
		return fn(nil)
	case c.value == nil:
		return fn([]byte{})
	}
	return fn(c.value)
}

// Get returns the value of key in bucket (nil when there is none), read in a statement
// of its own, alone and never fenced: for the check a fence makes when it is settled
// without a statement to ride on.
func (e *Engine) Get(ctx context.Context, bucket string, key []byte) ([]byte, error) {
	var v []byte
	err := e.queryRow(ctx, fenceSQL, []any{bucket, key}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return v, err
}

// readOneFencedSQL reads a record ($1, $2) and a fence's record ($3, $4) in one
// statement; found tells a missing record from an empty value.
const readOneFencedSQL = `SELECT r.key IS NOT NULL, r.value, e.value
	FROM (VALUES (1)) AS one (x)
	LEFT JOIN interviewd_kv r ON r.bucket = $1 AND r.key = $2
	LEFT JOIN interviewd_kv e ON e.bucket = $3 AND e.key = $4`
