package server

import (
	"sync"

	"interviewd/kv"
)

// turnLocks serialises the turns of each interview: two posts to one interview (two
// tabs, a double tap, a retry racing its original) run one after the other, each on
// the transcript the other left, instead of one failing on a moved transcript. Entries
// live only while someone holds or waits for them, so memory follows the interviews in
// flight, not every interview ever seen.
type turnLocks struct {
	mu sync.Mutex
	m  map[kv.ID]*turnLock
}

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
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
}

// held returns how many interviews have a turn held or awaited (for tests).
func (l *turnLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
