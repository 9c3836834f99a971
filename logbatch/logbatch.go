// Package logbatch writes a server's log with routine lines batched: the access log's
// line per answered request is queued and written a few milliseconds later with its
// neighbours, in one write, while every other line (start-up, lifecycle, warnings,
// errors) is written at once, behind whatever was queued before it. At tens of
// thousands of requests a second a write per line is a system call per request, as
// dear as the request's own store read.
//
// The price is that a batched line can be lost when the process is killed in the
// milliseconds between its request and its write; Close writes everything queued.
package logbatch

import (
	"io"
	"sync"
	"time"
)

// DefaultDelay is how long a batched line may wait for its write: short enough that
// a person following the log sees requests as they happen.
const DefaultDelay = 50 * time.Millisecond

// flushAt is the queue size that is written at once, without waiting for the delay.
const flushAt = 64 << 10

// Writer is the log's writer. Write writes at once; Batched returns the writer of
// the lines that may wait. It is safe for concurrent use.
type Writer struct {
	out   io.Writer
	delay time.Duration

	wmu sync.Mutex // held while writing to out: queued lines and direct ones keep their order

	mu        sync.Mutex // guards the fields below
	queue     []byte
	spare     []byte // the previous queue's array, reused once written
	scheduled bool   // a timed flush is pending
	closed    bool
	err       error // out's first write error, reported by Close
}

// New returns a Writer to out that holds batched lines for at most delay.
func New(out io.Writer, delay time.Duration) *Writer {
	if delay <= 0 {
		delay = DefaultDelay
	}
	return &Writer{out: out, delay: delay}
}

// Write writes p now, after every line queued before it.
func (w *Writer) Write(p []byte) (int, error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.writeQueued()
	n, err := w.out.Write(p)
	if err != nil {
		w.keep(err)
	}
	return n, err
}

// Batched returns the writer whose lines are queued. Each Write must be whole lines
// (a logger's event), as a line is never split across two writes of the queue.
func (w *Writer) Batched() io.Writer { return batched{w} }

type batched struct{ w *Writer }

func (b batched) Write(p []byte) (int, error) {
	w := b.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.Write(p) // after Close nothing waits: write through
	}
	w.queue = append(w.queue, p...)
	full := len(w.queue) >= flushAt
	if !full && !w.scheduled {
		w.scheduled = true
		time.AfterFunc(w.delay, w.Flush)
	}
	w.mu.Unlock()
	if full {
		w.Flush()
	}
	return len(p), nil
}

// Flush writes every queued line now.
func (w *Writer) Flush() {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.writeQueued()
}

// Close writes every queued line and makes later batched lines write through. It
// returns the first error writing to out met, if any.
func (w *Writer) Close() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.writeQueued()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// writeQueued takes the queue and writes it; the caller holds wmu.
func (w *Writer) writeQueued() {
	w.mu.Lock()
	q := w.queue
	w.queue, w.spare = w.spare[:0], nil
	w.scheduled = false
	w.mu.Unlock()
	if len(q) == 0 {
		w.giveBack(q)
		return
	}
	if _, err := w.out.Write(q); err != nil {
		w.keep(err)
	}
	w.giveBack(q)
}

// giveBack keeps q's array for the next queue, unless it grew past what one batch
// needs (a burst should not pin its memory).
func (w *Writer) giveBack(q []byte) {
	if cap(q) > 4*flushAt {
		return
	}
	w.mu.Lock()
	if w.spare == nil {
		w.spare = q[:0]
	}
	w.mu.Unlock()
}

func (w *Writer) keep(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}
