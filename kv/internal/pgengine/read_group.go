package pgengine

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// The read group: single-record reads (ReadOne) that arrive while earlier ones are
// being answered share one statement, as writes share a commit on bbolt. On
// PostgreSQL a read costs the node little CPU in the database driver and much in the
// round trip itself (a write to the socket that wakes the server, a read that waits,
// the wake-up): under load, one round trip for many reads is most of the saving.
// BenchmarkReadOne measures it (pgx v5.12, 32 readers on two shared cores, load
// 16 to 20): Grouped 9.2 to 13.5 µs of the node's CPU and 21 to 44 µs per read, Alone
// (a statement per read) 39 to 60 µs of CPU and 70 to 143 µs, in two sittings.
//
// At most readGroupLeaders statements are in flight at once. A read that finds them
// all busy queues; a leader that finishes hands the queue (up to readGroupMax reads)
// to the first read in it, which sends them all in one statement and hands on in turn,
// so no request answers more than its own statement and one more, a quiet node sends
// each read at once and alone, and a busy one sends fewer, fuller statements. A
// statement is one snapshot: each read in it sees every write committed before it was
// sent, as a read of its own would.
//
// Requests arrive in bursts: the answers of one statement go out together, and their
// clients' next requests come back together. A read that finds no statement in flight
// first lets the goroutines already runnable run (runtime.Gosched, no timer): the rest
// of its burst then queues in time to share its statement, where it would otherwise
// wait a whole round trip for the next one. On a quiet node nothing else is runnable
// and the read is sent at once.

// One statement in flight per node: measured on two cores with 32 requests in
// flight, one leader spends less CPU per read (fuller statements) and answers sooner
// than two or four; reads take no locks, so a statement is never held up by a writer.
const (
	readGroupLeaders = 1
	readGroupMax     = 256
)

// readCall is one read: the record key (and, for a fence riding on it, the key of the
// fence's record, its org) and its outcome.
type readCall struct {
	bucket string
	key    []byte
	org    []byte // nil: no epoch wanted
	found  bool
	value  []byte
	epoch  []byte
	err    error
	// wake takes one token when the read is answered or handed the lead. Calls are
	// pooled with their channel: a read allocates neither.
	wake chan struct{}
	lead []*readCall // set before the token is sent: this read leads these
}

var readCalls = sync.Pool{New: func() any { return &readCall{wake: make(chan struct{}, 1)} }}

// newReadCall returns a call for the read of key in bucket (with org's epoch unless
// org is nil); release gives it back.
func newReadCall(bucket string, key, org []byte) *readCall {
	c := readCalls.Get().(*readCall)
	c.bucket, c.key, c.org = bucket, key, org
	return c
}

// release returns c to the pool once its outcome has been used.
func (c *readCall) release() {
	*c = readCall{wake: c.wake}
	readCalls.Put(c)
}

type readGroup struct {
	pg      *Engine
	mu      sync.Mutex
	queue   []*readCall
	spare   []*readCall // a finished statement's slice, for the next queue
	leaders int
}

// read answers c, alone or with others.
func (g *readGroup) read(ctx context.Context, c *readCall) error {
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	g.mu.Lock()
	if g.leaders < readGroupLeaders {
		g.leaders++
		g.mu.Unlock()
		runtime.Gosched() // let the rest of a burst queue (see above)
		g.mu.Lock()
		batch := g.take(readGroupMax - 1)
		if batch == nil {
			batch, g.spare = g.spare[:0], nil
		}
		batch = append(batch, c)
		g.mu.Unlock()
		g.lead(ctx, c, batch)
		return c.err
	}
	g.queue = append(g.queue, c)
	g.mu.Unlock()
	// No giving up on ctx here: this read may be handed the lead, and a statement in
	// flight ends on its own (with its leader's ctx).
	<-c.wake
	if c.lead != nil {
		batch := c.lead
		c.lead = nil
		g.lead(ctx, c, batch)
	}
	if c.err != nil && ctx.Err() == nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) {
		// The leader's request ended, not this one: read alone.
		c.found, c.value, c.epoch = false, nil, nil
		c.err = g.pg.readAlone(ctx, c)
	}
	return c.err
}

// take removes up to limit queued reads, nil when none waits; g.mu is held. The
// queue's slice is handed over whole when it fits, and the spare one becomes the
// queue: a busy group sends statement after statement without allocating.
func (g *readGroup) take(limit int) []*readCall {
	n := len(g.queue)
	switch {
	case n == 0:
		return nil
	case n <= limit:
		out := g.queue
		g.queue, g.spare = g.spare[:0], nil
		return out
	}
	out := append(g.spare[:0], g.queue[:limit]...)
	g.spare = nil
	rest := copy(g.queue, g.queue[limit:])
	clear(g.queue[rest:])
	g.queue = g.queue[:rest]
	return out
}

// lead sends batch, of which self is the leader, answers the others and hands the lead
// on to the queue's first read, or gives it up when nothing waits.
func (g *readGroup) lead(ctx context.Context, self *readCall, batch []*readCall) {
	g.send(ctx, batch)
	for _, o := range batch {
		// After its token a read may return and its call be reused: nothing of o is
		// touched once it is woken.
		if o != self {
			o.wake <- struct{}{}
		}
	}
	clear(batch)
	g.handOn(batch[:0])
}

// handOn ends a statement: it hands the lead to the queue's first read, with the reads
// queued behind it, or gives it up when nothing waits. done is the finished batch's
// slice, kept for a later queue.
func (g *readGroup) handOn(done []*readCall) {
	g.mu.Lock()
	next := g.take(readGroupMax)
	if next == nil {
		g.leaders--
	}
	if g.spare == nil {
		g.spare = done
	}
	g.mu.Unlock()
	if next != nil {
		next[0].lead = next
		next[0].wake <- struct{}{}
	}
}
