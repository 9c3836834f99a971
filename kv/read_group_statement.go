package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// The statements of the read group (read_group.go). They are the busiest on a node
// over PostgreSQL, so they take the driver's raw path (pgx.Conn.QueryRaw): parameters
// built in buffers kept from one statement to the next, and result columns decoded
// here from PostgreSQL's binary format, with one copy of each record and none of
// anything else.

// readGroupSQL reads many records ($1 buckets, $2 keys) and, where $3 names an
// organisation, its credential epoch ($4: the epochs' bucket), in one statement:
// row i answers read i.
const readGroupSQL = `SELECT u.i, r.key IS NOT NULL, r.value, e.value
	FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS u (bucket, key, org, i)
	LEFT JOIN interviewd_kv r ON r.bucket = u.bucket COLLATE "C" AND r.key = u.key
	LEFT JOIN interviewd_kv e ON e.bucket = $4 AND e.key = u.org`

// readOneSQL reads one record ($1, $2).
const readOneSQL = `SELECT value FROM interviewd_kv WHERE bucket = $1 AND key = $2`

// The parameters' formats (0 text, 1 binary): the arrays go in PostgreSQL's binary
// array format, keys and organisations as bytes, bucket names as text.
var (
	readGroupFormats  = []int16{1, 1, 1, 0}
	readOneFencedFmts = []int16{0, 1, 0, 1}
	readOneFormats    = []int16{0, 1}
)

// readParams are one statement's parameters, rebuilt for each statement in buffers
// reused across statements.
type readParams struct {
	buckets, keys, orgs binaryArray
	bucket, epochs      []byte
	values              [4][]byte
}

var readParamsPool = sync.Pool{New: func() any { return new(readParams) }}

func getReadParams() *readParams { return readParamsPool.Get().(*readParams) }

// put gives p back, keeping its buffers but no caller's keys.
func (p *readParams) put() {
	clear(p.values[:])
	readParamsPool.Put(p)
}

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
	p := getReadParams()
	defer p.put()
	p.buckets.reset(oidText)
	p.keys.reset(oidBytea)
	p.orgs.reset(oidBytea)
	for _, c := range calls {
		p.buckets.addString(c.bucket)
		p.keys.add(c.key)
		p.orgs.add(c.org)
	}
	p.epochs = append(p.epochs[:0], bucketAuthEpochs...)
	params := append(p.values[:0], p.buckets.bytes(), p.keys.bytes(), p.orgs.bytes(), p.epochs)

	// Each row answers the read its first column numbers, every read exactly once.
	var out rowValues
	seen := 0
	err := g.pg.queryRaw(ctx, readGroupSQL, params, readGroupFormats, func(v [][]byte) error {
		if len(v) != 4 || len(v[0]) != 8 || len(v[1]) != 1 {
			return errors.New("kv: a grouped read answered in an unexpected shape")
		}
		i := int64(binary.BigEndian.Uint64(v[0]))
		if i < 1 || i > int64(len(calls)) {
			return errors.New("kv: a grouped read answered out of range")
		}
		c := calls[i-1]
		c.found, c.value, c.epoch = v[1][0] == 1, c.keep(v[2]), out.epochCopy(v[3])
		seen++
		return nil
	})
	if err == nil && seen != len(calls) {
		err = errors.New("kv: a grouped read lost a row")
	}
	for _, c := range calls {
		c.err = err
	}
}

// readAlone is one read in a statement of its own.
func (e *pgEngine) readAlone(ctx context.Context, c *readCall) error {
	p := getReadParams()
	defer p.put()
	p.bucket = append(p.bucket[:0], c.bucket...)
	var out rowValues
	if c.org == nil {
		params := append(p.values[:0], p.bucket, c.key)
		return e.queryRaw(ctx, readOneSQL, params, readOneFormats, func(v [][]byte) error {
			if len(v) != 1 {
				return errors.New("kv: a read answered in an unexpected shape")
			}
			c.found, c.value = true, c.keep(v[0])
			return nil
		})
	}
	// One statement is one snapshot: the epoch and the record are read together.
	p.epochs = append(p.epochs[:0], bucketAuthEpochs...)
	params := append(p.values[:0], p.bucket, c.key, p.epochs, c.org)
	rows := 0
	err := e.queryRaw(ctx, readOneFencedSQL, params, readOneFencedFmts, func(v [][]byte) error {
		if len(v) != 3 || len(v[0]) != 1 {
			return errors.New("kv: a fenced read answered in an unexpected shape")
		}
		c.found, c.value, c.epoch = v[0][0] == 1, c.keep(v[1]), out.epochCopy(v[2])
		rows++
		return nil
	})
	if err == nil && rows != 1 {
		err = errors.New("kv: a fenced read answered no row")
	}
	return err
}

// queryRaw runs sql on a connection of the pool, calling row with each row's values
// (see pgx.Conn.QueryRaw).
func (e *pgEngine) queryRaw(ctx context.Context, sql string, params [][]byte, formats []int16, row func([][]byte) error) error {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return conn.QueryRaw(ctx, sql, params, formats, row)
}

// rowValues copies epochs out of the connection's buffer, which the next row
// overwrites: the epoch every read of one organisation shares is copied once.
type rowValues struct{ epoch []byte }

// epochCopy returns a copy of an epoch, the last one's when v equals it (callers only
// read epochs).
func (r *rowValues) epochCopy(v []byte) []byte {
	if v == nil {
		return nil
	}
	if r.epoch == nil || !bytes.Equal(r.epoch, v) {
		r.epoch = append([]byte{}, v...)
	}
	return r.epoch
}

// The element types of the grouped read's arrays.
const (
	oidBytea = 17
	oidText  = 25
)

// binaryArray builds a one-dimensional array in PostgreSQL's binary format (what
// array_recv reads): the number of dimensions, a has-NULL flag, the element type, the
// dimension's length and lower bound, then each element as its length (-1 for NULL)
// and bytes. Sent as a binary parameter the statement casts to the array type, it
// needs no encoding of the elements at all.
type binaryArray struct {
	b []byte
	n int
}

// reset empties a for elements of type elem, keeping its buffer.
func (a *binaryArray) reset(elem uint32) {
	a.b = append(a.b[:0], make([]byte, 20)...)
	a.n = 0
	binary.BigEndian.PutUint32(a.b[0:], 1)
	binary.BigEndian.PutUint32(a.b[4:], 0) // no NULLs yet
	binary.BigEndian.PutUint32(a.b[8:], elem)
	binary.BigEndian.PutUint32(a.b[16:], 1) // lower bound
}

// add appends an element; nil is NULL.
func (a *binaryArray) add(v []byte) {
	a.n++
	if v == nil {
		binary.BigEndian.PutUint32(a.b[4:], 1) // has NULLs
		a.b = binary.BigEndian.AppendUint32(a.b, 0xffffffff)
		return
	}
	a.b = binary.BigEndian.AppendUint32(a.b, uint32(len(v)))
	a.b = append(a.b, v...)
}

// addString appends a text element.
func (a *binaryArray) addString(s string) {
	a.n++
	a.b = binary.BigEndian.AppendUint32(a.b, uint32(len(s)))
	a.b = append(a.b, s...)
}

func (a *binaryArray) bytes() []byte {
	binary.BigEndian.PutUint32(a.b[12:], uint32(a.n))
	return a.b
}
