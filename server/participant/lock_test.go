package participant

import (
	"sync"
	"sync/atomic"
	"testing"

	"interviewd/kv"
)

// TestTurnLocksEndedSince: a turn that read its conversation before another turn of the
// same interview ended reads it again; one that only saw other interviews' turns end
// does not.
func TestTurnLocksEndedSince(t *testing.T) {
	l := newTurnLocks()
	a, b := kv.ID{15: 1}, kv.ID{15: 2}
	if turnSlot(a) == turnSlot(b) {
		t.Fatal("the two interviews share a slot")
	}
	mark := l.mark()
	l.lock(b)() // another interview's turn
	unlock := l.lock(a)
	if l.endedSince(a, mark) {
		t.Fatal("a turn of another interview counted")
	}
	unlock()
	if !l.endedSince(a, mark) {
		t.Fatal("the interview's own turn ended unnoticed")
	}
	if later := l.mark(); l.endedSince(a, later) || l.endedSince(b, later) {
		t.Fatal("turns that ended before the mark counted")
	}
	if l.Held() != 0 {
		t.Fatalf("%d locks left", l.Held())
	}
}

// TestRaiseTo: a slot's count only grows: an end counted earlier but noted later (5
// after 6) leaves it as it is.
func TestRaiseTo(t *testing.T) {
	var a atomic.Uint64
	raiseTo(&a, 6)
	raiseTo(&a, 5)
	if a.Load() != 6 {
		t.Fatalf("slot %d after ends 6 and 5", a.Load())
	}
	raiseTo(&a, 7)
	if a.Load() != 7 {
		t.Fatalf("slot %d after end 7", a.Load())
	}
}

// TestTurnLocksSlotNeverGoesBack: interviews sharing a slot end their turns at once
// from many goroutines; the slot's count never decreases, so a turn's end can never be
// taken back by another's that counted earlier and noted later.
func TestTurnLocksSlotNeverGoesBack(t *testing.T) {
	l := newTurnLocks()
	ids := make([]kv.ID, 8)
	for i := range ids {
		ids[i] = kv.ID{13: byte(i + 1)} // the last four bytes differ by multiples of turnEndSlots
		if turnSlot(ids[i]) != turnSlot(ids[0]) {
			t.Fatal("the interviews do not share a slot")
		}
	}
	slot := &l.last[turnSlot(ids[0])]
	stop := make(chan struct{})
	var (
		wg, watch sync.WaitGroup
		back      uint64
	)
	watch.Go(func() {
		prev := slot.Load()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := slot.Load(); n < prev {
				back = prev - n
				return
			} else {
				prev = n
			}
		}
	})
	for _, id := range ids {
		wg.Go(func() {
			for range 20000 {
				l.lock(id)()
			}
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	if back != 0 {
		t.Fatalf("the slot's count went back by %d", back)
	}
	if got, want := slot.Load(), l.mark(); got != want {
		t.Fatalf("the slot holds %d after the last end, %d ended", got, want)
	}
}
