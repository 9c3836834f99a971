package pgengine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"interviewd/kv/internal/engine"
)

// The hand-off between reads (read_group.go): calls and their wake channels are pooled
// and reused, batches are slices passed from leader to leader. Under any interleaving
// each read must be answered exactly once, with its own record: a lost wake-up would
// hang a read, a doubled one would leave a token that answers the call's next use
// before its statement ran (with no value, or the previous read's).

// queued returns how many reads wait in g's queue.
func (g *readGroup) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// Many goroutines read at once, again and again, each call reused from the pool many
// times over: every read answers its own key, none is lost or answered twice.
func TestReadGroup_HandOffAnswersEachReadOnce(t *testing.T) {
	db := openTest(t, "", Options{})
	ctx := context.Background()
	const keys = 50
	err := db.Update(ctx, func(tx engine.Tx) error {
		b := tx.Bucket(readGroupBucket)
		for k := range keys {
			if err := b.Put(fmt.Appendf(nil, "k%d", k), fmt.Appendf(nil, "v%d", k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	org := newKey()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	done := make(chan struct{})
	for g := range 64 {
		wg.Go(func() {
			for i := range 60 {
				k := (g*7 + i) % (keys + 5) // some keys have no record
				var want []byte
				if k < keys {
					want = fmt.Appendf(nil, "v%d", k)
				}
				var o []byte
				if i%2 == 0 {
					o = org // half the reads also ask for an epoch
				}
				c := newReadCall(string(readGroupBucket), fmt.Appendf(nil, "k%d", k), o)
				err := db.reads.read(ctx, c)
				switch {
				case err != nil:
				case c.found != (want != nil) || string(c.value) != string(want):
					err = fmt.Errorf("read of k%d: found %v value %q, want %q", k, c.found, c.value, want)
				case len(c.wake) != 0:
					err = fmt.Errorf("read of k%d left a wake-up behind", k)
				}
				c.release()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("reads still unanswered after two minutes: a wake-up was lost")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	g := &db.reads
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leaders != 0 || len(g.queue) != 0 {
		t.Errorf("idle group has %d leaders and %d queued reads", g.leaders, len(g.queue))
	}
}

// A statement whose leader's request ended fails for that leader only: the reads it
// carried for other requests are read again, alone, and answered.
func TestReadGroup_LeaderCancelledOthersReadAgain(t *testing.T) {
	db := openTest(t, "", Options{})
	ctx := context.Background()
	err := db.Update(ctx, func(tx engine.Tx) error {
		b := tx.Bucket(readGroupBucket)
		for k := range 4 {
			if err := b.Put(fmt.Appendf(nil, "k%d", k), fmt.Appendf(nil, "v%d", k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := &db.reads
	// A statement is in flight: every read queues.
	g.mu.Lock()
	g.leaders = readGroupLeaders
	g.mu.Unlock()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	type outcome struct {
		k     int
		err   error
		value string
	}
	results := make(chan outcome, 4)
	start := func(k int, ctx context.Context) {
		go func() {
			c := newReadCall(string(readGroupBucket), fmt.Appendf(nil, "k%d", k), nil)
			err := g.read(ctx, c)
			results <- outcome{k, err, string(c.value)}
			c.release()
		}()
	}
	// The cancelled read queues first, so it leads the next statement.
	start(0, cancelled)
	waitFor(t, "the first read to queue", func() bool { return g.queued() == 1 })
	for k := 1; k < 4; k++ {
		start(k, ctx)
	}
	waitFor(t, "every read to queue", func() bool { return g.queued() == 4 })
	g.handOn(nil) // the statement in flight ends

	for range 4 {
		o := <-results
		if o.k == 0 {
			if o.err == nil {
				t.Errorf("the cancelled read succeeded (%q)", o.value)
			}
			continue
		}
		if o.err != nil || o.value != fmt.Sprintf("v%d", o.k) {
			t.Errorf("read of k%d: %q, %v", o.k, o.value, o.err)
		}
	}
	waitFor(t, "the group to go idle", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.leaders == 0
	})
}

// A queue longer than a statement takes is sent in order, readGroupMax reads at a
// time, the rest kept queued.
func TestReadGroup_TakeSplitsLongQueue(t *testing.T) {
	var g readGroup
	calls := make([]*readCall, readGroupMax+44)
	for i := range calls {
		calls[i] = &readCall{key: fmt.Appendf(nil, "%d", i)}
	}
	g.queue = append(g.queue, calls...)
	first := g.take(readGroupMax)
	if len(first) != readGroupMax || len(g.queue) != 44 {
		t.Fatalf("took %d, %d left; want %d and 44", len(first), len(g.queue), readGroupMax)
	}
	second := g.take(readGroupMax)
	if len(second) != 44 || len(g.queue) != 0 || g.take(readGroupMax) != nil {
		t.Fatalf("second take: %d, %d left", len(second), len(g.queue))
	}
	for i, c := range append(first, second...) {
		if c != calls[i] {
			t.Fatalf("read %d taken out of order", i)
		}
	}
	// The first batch's slice, once done, is reused rather than reallocated.
	g.spare = first[:0]
	g.queue = append(g.queue, calls[0])
	if got := g.take(readGroupMax); len(got) != 1 || len(g.queue) != 0 || cap(g.queue) != cap(first) {
		t.Fatalf("take after a spare: %d taken, queue cap %d, want cap %d", len(got), cap(g.queue), cap(first))
	}
}
