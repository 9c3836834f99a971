package boltengine

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"interviewd/kv/internal/engine"
)

// Group commit.
//
// A durable bbolt commit costs two fdatasyncs, whatever it holds, so writers that each
// commit alone are bound by the disk, not the CPU: 32 concurrent link creations kept the
// server at a third of a core. The committer runs concurrent writers' functions one
// after another in one read-write transaction and commits them together: one commit, one
// pair of fsyncs, and every caller is answered only after that commit is durable.
//
// bbolt's own DB.Batch does the same but waits up to MaxBatchDelay (10 ms by default)
// for the group to fill, which puts that delay on every request even when the disk is
// idle. Here there is no timer: a group is whatever queued while the previous commit
// was on the disk, plus whatever the goroutines already runnable queue when the
// committer yields once before taking it, so an idle store commits at once and a busy
// one commits bigger groups.
//
// Each writer's mutation stays all-or-nothing: bbolt has no savepoints, so when one
// function fails, the whole transaction is rolled back, the failing caller gets its
// error, and the rest of the group runs again in a fresh transaction without it. The
// outcome is the same as running the functions one by one in queue order (the failed
// one saw exactly the writes queued before it). A function may therefore run more than
// once: it must only touch the transaction and its own result variables, setting them
// on every run. A panic in a function fails that function only.

// maxCommitYields bounds how many times the committer yields for a group to grow.
const maxCommitYields = 4

// errClosed answers writers that arrive after Close.
var errClosed = errors.New("kv: the store is closed")

type commitCall struct {
	fn   func(engine.Tx) error
	done chan error // buffered: the committer never blocks on a caller
}

// committer owns the queue of writers waiting for a group commit and the goroutine
// that commits them.
type committer struct {
	bolt *bolt.DB
	solo bool // every writer commits alone (Options.SoloCommits)
	// wrap, when set, wraps each read-write transaction before its writers see it
	// (Options.WrapWrite).
	wrap func(engine.Tx) engine.Tx
	// observe, when set, hears each commit's duration: from the end of the writers'
	// work to the commit being on disk (Options.OnCommit).
	observe func(time.Duration)

	mu     sync.Mutex
	wake   *sync.Cond
	queue  []*commitCall
	closed bool
	exited chan struct{}

	commits atomic.Uint64
	writes  atomic.Uint64
	taken   atomic.Uint64 // groups taken off the queue (for tests)
}

func newCommitter(b *bolt.DB, solo bool) *committer {
	c := &committer{bolt: b, solo: solo, exited: make(chan struct{})}
	c.wake = sync.NewCond(&c.mu)
	return c
}

// start begins taking writers, once the committer is configured.
func (c *committer) start() {
	if c.solo {
		close(c.exited)
		return
	}
	go c.loop()
}

// writeTx returns the transaction a group's writers see for btx.
func (c *committer) writeTx(btx *bolt.Tx) engine.Tx {
	var tx engine.Tx = boltTx{btx}
	if c.wrap != nil {
		tx = c.wrap(tx)
	}
	return tx
}

// do runs fn in a read-write transaction shared with whichever writers queue alongside
// it and returns once that transaction is committed (nil) or fn failed (its error). It
// returns the commit's error to every writer of a group whose commit failed.
func (c *committer) do(fn func(engine.Tx) error) error {
	if c.solo {
		var worked time.Time
		err := c.bolt.Update(func(btx *bolt.Tx) error {
			tx := c.writeTx(btx)
			err := safely(fn, tx)
			worked = time.Now()
			return err
		})
		if err == nil {
			c.commits.Add(1)
			c.writes.Add(1)
			c.observed(worked)
		}
		return err
	}
	call := &commitCall{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.queue = append(c.queue, call)
	if len(c.queue) == 1 {
		c.wake.Signal()
	}
	c.mu.Unlock()
	return <-call.done
}

// loop commits queued writers, group by group, until close and an empty queue.
func (c *committer) loop() {
	defer close(c.exited)
	var spare []*commitCall
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.closed {
			c.wake.Wait()
		}
		if len(c.queue) == 0 {
			c.mu.Unlock()
			return
		}
		// Yield before taking the group: goroutines already runnable, typically
		// requests about to queue their own writes, run first and join this commit
		// instead of paying for the next one. The committer yields again while the
		// queue still grows, a few times at most. With nothing else runnable the
		// first yield returns at once and the queue has not grown, so an idle store
		// commits as soon as before; under load the groups grow and the commits (and
		// their fsyncs) become fewer.
		for n, rounds := len(c.queue), 0; rounds < maxCommitYields; rounds++ {
			c.mu.Unlock()
			runtime.Gosched()
			c.mu.Lock()
			if len(c.queue) == n {
				break
			}
			n = len(c.queue)
		}
		group := c.queue
		c.queue = spare[:0]
		c.mu.Unlock()
		c.taken.Add(1)
		c.commit(group)
		clear(group)
		spare = group
	}
}

// commit runs group in one transaction, dropping each writer that fails and starting
// again without it, and answers every writer.
func (c *committer) commit(group []*commitCall) {
	for len(group) > 0 {
		failed, ferr := -1, error(nil)
		var worked time.Time
		err := c.bolt.Update(func(btx *bolt.Tx) error {
			tx := c.writeTx(btx)
			for i, call := range group {
				if err := safely(call.fn, tx); err != nil {
					failed, ferr = i, err
					return err
				}
			}
			worked = time.Now()
			return nil
		})
		if failed >= 0 {
			group[failed].done <- ferr
			group = append(group[:failed:failed], group[failed+1:]...)
			continue
		}
		if err == nil {
			c.commits.Add(1)
			c.writes.Add(uint64(len(group)))
			c.observed(worked)
		}
		for _, call := range group {
			call.done <- err
		}
		return
	}
}

// observed reports a commit whose writers' work ended at worked.
func (c *committer) observed(worked time.Time) {
	if c.observe != nil {
		c.observe(time.Since(worked))
	}
}

// queued returns how many writers wait for the next group (for tests).
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// close answers the writers already queued, then stops the committer; later writers
// get errClosed.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.wake.Signal()
	c.mu.Unlock()
	<-c.exited
}

// safely calls fn, turning a panic into that writer's error so it cannot take the
// group (or the process) down with it.
func safely(fn func(engine.Tx) error, tx engine.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kv: panic in a write: %v", p)
		}
	}()
	return fn(tx)
}
