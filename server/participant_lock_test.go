package server

import (
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
	if l.held() != 0 {
		t.Fatalf("%d locks left", l.held())
	}
}
