package participant

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"interviewd/kv"
)

// turnLocks serialises the turns of each interview: two posts to one interview (two
// tabs, a double tap, a retry racing its original) run one after the other, each on
// the transcript the other left, instead of one failing on a moved transcript. Entries
// live only while someone holds or waits for them, so memory follows the interviews in
// flight, not every interview ever seen.
//
// A turn reads its conversation before it knows which interview to lock, so another
// turn may land in between; the turn then reads its interview again. To spare that
// read when nothing can have landed, every turn that ends is numbered, and the number
// of the last one to end is kept for its interview's slot (interviews share slots, which
// only costs a read that was not needed).
type turnLocks struct {
	mu    sync.Mutex
	m     map[kv.ID]*turnLock
	ended atomic.Uint64               // turns ended so far
	last  [turnEndSlots]atomic.Uint64 // per slot: the number of the last turn ended there
}

// turnEndSlots is how many slots the ends of turns are noted in: with a few hundred
// interviews in flight, a turn rarely shares its slot with another one's.
const turnEndSlots = 4096

type turnLock struct {
	mu   sync.Mutex
	refs int // holders and waiters; guarded by turnLocks.mu
}

func newTurnLocks() *turnLocks { return &turnLocks{m: map[kv.ID]*turnLock{}} }

// lock waits for the interview's turn and returns the function that ends it.
func (l *turnLocks) lock(id kv.ID) (unlock func()) {
	l.mu.Lock()
	e := l.m[id]
	if e == nil {
		e = &turnLock{}
		l.m[id] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		// Noted before the lock is let go, so whoever takes it next sees this end. The
		// slot only ever grows: another interview's end sharing it may have counted
		// earlier and stored later, and must not take this end back.
		raiseTo(&l.last[turnSlot(id)], l.ended.Add(1))
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
}

// raiseTo sets a to n unless it already holds more.
func raiseTo(a *atomic.Uint64, n uint64) {
	for old := a.Load(); n > old && !a.CompareAndSwap(old, n); old = a.Load() {
	}
}

// mark returns the turns ended so far: taken before a turn reads its conversation, it
// is what endedSince compares with.
func (l *turnLocks) mark() uint64 { return l.ended.Load() }

// endedSince reports whether a turn of the interview may have ended after mark was
// taken. Asked while holding the interview's lock, false means the interview is as
// every turn before left it when mark was taken.
func (l *turnLocks) endedSince(id kv.ID, mark uint64) bool {
	return l.last[turnSlot(id)].Load() > mark
}

// turnSlot is the interview's slot, from the last bytes of its id (random in a UUIDv7).
func turnSlot(id kv.ID) uint32 { return binary.BigEndian.Uint32(id[12:]) % turnEndSlots }

// Held returns how many interviews have a turn held or awaited (for tests).
func (l *turnLocks) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
