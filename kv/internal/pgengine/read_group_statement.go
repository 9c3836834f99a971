package pgengine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The statements of the read group (read_group.go).

// readGroupSQL reads many records ($1 buckets, $2 keys) and, where $3 names a fence's
// key, the fence's record ($4: the fences' bucket), in one statement: row i answers
// read i.
const readGroupSQL = `SELECT u.i, r.key IS NOT NULL, r.value, e.value
	FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS u (bucket, key, org, i)
	LEFT JOIN interviewd_kv r ON r.bucket = u.bucket COLLATE "C" AND r.key = u.key
	LEFT JOIN interviewd_kv e ON e.bucket = $4 AND e.key = u.org`

// readOneSQL reads one record ($1, $2).
const readOneSQL = `SELECT value FROM interviewd_kv WHERE bucket = $1 AND key = $2`

// send runs the reads of calls in one statement and fills in their outcomes. A panic
// in the driver fails the reads instead of leaving the group without a leader.
func (g *readGroup) send(ctx context.Context, calls []*readCall) {
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("kv: a grouped read panicked: %v", p)
			for _, c := range calls {
				c.err = err
			}
		}
	}()
	if len(calls) == 1 {
		calls[0].err = g.pg.readAlone(ctx, calls[0])
		return
	}
	buckets := make([]string, len(calls))
	keys := make([][]byte, len(calls))
	orgs := make([][]byte, len(calls))
	for i, c := range calls {
		buckets[i], keys[i], orgs[i] = c.bucket, c.key, c.org
	}
	// Each row answers the read its first column numbers, every read exactly once.
	err := g.pg.withConn(ctx, func(conn *pgxpool.Conn) error {
		rows, err := conn.Query(ctx, readGroupSQL, buckets, keys, orgs, g.pg.fences.Bucket)
		if err != nil {
			return err
		}
		defer rows.Close()
		seen := 0
		for rows.Next() {
			var i int64
			var found bool
			var value, epoch []byte
			if err := rows.Scan(&i, &found, &value, &epoch); err != nil {
				return err
			}
			if i < 1 || i > int64(len(calls)) {
				return errors.New("kv: a grouped read answered out of range")
			}
			c := calls[i-1]
			c.found, c.value, c.epoch = found, value, epoch
			seen++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if seen != len(calls) {
			return errors.New("kv: a grouped read lost a row")
		}
		return nil
	})
	for _, c := range calls {
		c.err = err
	}
}

// readAlone is one read in a statement of its own.
func (e *Engine) readAlone(ctx context.Context, c *readCall) error {
	if c.org == nil {
		var v []byte
		err := e.queryRow(ctx, readOneSQL, []any{c.bucket, c.key}, &v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		c.found, c.value = err == nil, v
		return err
	}
	// One statement is one snapshot: the fence's record and the record are read
	// together.
	return e.queryRow(ctx, readOneFencedSQL, []any{c.bucket, c.key, e.fences.Bucket, c.org}, &c.found, &c.value, &c.epoch)
}
