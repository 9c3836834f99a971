package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"interviewd/internal/pgx"
)

// The read group: single-record reads (readOne) that arrive while earlier ones are
// being answered share one statement, as writes share a commit on bbolt. On
// PostgreSQL a read costs the node little CPU in the database driver and much in the
// round trip itself (a write to the socket that wakes the server, a read that waits,
// the wake-up): under load, one round trip for many reads is most of the saving.
//
// At most readGroupLeaders statements are in flight at once. A read that finds them
// all busy queues; a leader that finishes hands the queue (up to readGroupMax reads)
// to the first read in it, which sends them all in one statement and hands on in turn,
// so no request answers more than its own statement and one more, a quiet node sends
// each read at once and alone, and a busy one sends fewer, fuller statements. A
// statement is one snapshot: each read in it sees every write committed before it was
// sent, as a read of its own would.

// One statement in flight per node: measured on two cores with 32 requests in
// flight, one leader spends less CPU per read (fuller statements) and answers sooner
// than two or four; reads take no locks, so a statement is never held up by a writer.
const (
	readGroupLeaders = 1
	readGroupMax     = 256
)

// readCall is one read: the record key (and, for a credential check riding on it, the
// organisation whose epoch to read) and its outcome.
type readCall struct {
	bucket string
	key    []byte
	org    []byte // nil: no epoch wanted
	found  bool
	value  []byte
	epoch  []byte
	err    error
	done   chan struct{} // closed when answered, or when handed lead
	lead   []*readCall   // set before done closes: this read leads these (itself first)
}

type readGroup struct {
	pg      *pgEngine
	mu      sync.Mutex
	queue   []*readCall
	leaders int
}

// read answers c, alone or with others.
func (g *readGroup) read(ctx context.Context, c *readCall) error {
	g.mu.Lock()
	if g.leaders < readGroupLeaders {
		g.leaders++
		batch := append([]*readCall{c}, g.take()...)
		g.mu.Unlock()
		g.lead(ctx, batch)
		return c.err
	}
	c.done = make(chan struct{})
	g.queue = append(g.queue, c)
	g.mu.Unlock()
	// No giving up on ctx here: this read may be handed the lead, and a statement in
	// flight ends on its own (with its leader's ctx).
	<-c.done
	if c.lead != nil {
		batch := c.lead
		c.lead = nil
		g.lead(ctx, batch)
	}
	if c.err != nil && ctx.Err() == nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) {
		// The leader's request ended, not this one: read alone.
		c.found, c.value, c.epoch = false, nil, nil
		c.err = g.pg.readAlone(ctx, c)
	}
	return c.err
}

// take removes up to readGroupMax queued reads; g.mu is held.
func (g *readGroup) take() []*readCall {
	n := min(len(g.queue), readGroupMax)
	if n == 0 {
		return nil
	}
	out := append([]*readCall(nil), g.queue[:n]...)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	return out
}

// lead sends batch (its leader first), answers the others and hands the lead on to the
// queue's first read, or gives it up when nothing waits.
func (g *readGroup) lead(ctx context.Context, batch []*readCall) {
	g.send(ctx, batch)
	for _, o := range batch[1:] {
		close(o.done)
	}
	g.mu.Lock()
	next := g.take()
	if next == nil {
		g.leaders--
	}
	g.mu.Unlock()
	if next != nil {
		next[0].lead = next
		close(next[0].done)
	}
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
	buckets := newBinaryArray(oidText, len(calls))
	keys := newBinaryArray(oidBytea, len(calls))
	orgs := newBinaryArray(oidBytea, len(calls))
	for _, c := range calls {
		buckets.add([]byte(c.bucket))
		keys.add(c.key)
		orgs.add(c.org)
	}
	seen := 0
	conn, err := g.pg.pool.Acquire(ctx)
	if err != nil {
		for _, c := range calls {
			c.err = err
		}
		return
	}
	defer conn.Release()
	rows, err := conn.Conn.Query(ctx, readGroupSQL, buckets.bytes(), keys.bytes(), orgs.bytes(), string(bucketAuthEpochs))
	if err == nil {
		for rows.Next() {
			var i int64
			var found bool
			var v, e []byte
			if err = rows.Scan(&i, &found, &v, &e); err != nil {
				break
			}
			if i < 1 || int(i) > len(calls) {
				err = errors.New("kv: a grouped read answered out of range")
				break
			}
			c := calls[i-1]
			c.found, c.value, c.epoch = found, v, e
			seen++
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err == nil && seen != len(calls) {
		err = errors.New("kv: a grouped read lost a row")
	}
	for _, c := range calls {
		c.err = err
	}
}

// readGroupSQL reads many records ($1 buckets, $2 keys) and, where $3 names an
// organisation, its credential epoch ($4: the epochs' bucket), in one statement:
// row i answers read i.
const readGroupSQL = `SELECT u.i, r.key IS NOT NULL, r.value, e.value
	FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS u (bucket, key, org, i)
	LEFT JOIN interviewd_kv r ON r.bucket = u.bucket COLLATE "C" AND r.key = u.key
	LEFT JOIN interviewd_kv e ON e.bucket = $4 AND e.key = u.org`

// readAlone is one read in a statement of its own.
func (e *pgEngine) readAlone(ctx context.Context, c *readCall) error {
	if c.org != nil {
		// One statement is one snapshot: the epoch and the record are read together.
		return e.pool.QueryRow(ctx, readOneFencedSQL, c.bucket, c.key, string(bucketAuthEpochs), c.org).Scan(&c.found, &c.value, &c.epoch)
	}
	err := e.pool.QueryRow(ctx, `SELECT value FROM interviewd_kv WHERE bucket = $1 AND key = $2`, c.bucket, c.key).Scan(&c.value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	c.found = err == nil
	return err
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

func newBinaryArray(elem uint32, capacity int) *binaryArray {
	a := &binaryArray{b: make([]byte, 20, 20+capacity*24)}
	binary.BigEndian.PutUint32(a.b[0:], 1)
	binary.BigEndian.PutUint32(a.b[8:], elem)
	binary.BigEndian.PutUint32(a.b[16:], 1) // lower bound
	return a
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

func (a *binaryArray) bytes() []byte {
	binary.BigEndian.PutUint32(a.b[12:], uint32(a.n))
	return a.b
}
