package plugins

import (
	"container/list"

	"github.com/tetratelabs/wazero"
)

// entry is one plugin's compiled code, shared by every Plugin with the same bytes.
// Its fields other than hash and ready are guarded by Host.mu.
type entry struct {
	hash  [32]byte
	ready chan struct{} // closed once module or err is set

	module wazero.CompiledModule
	err    error
	desc   *Descriptor // what describe said, once known

	users   int  // acquire holds not yet released
	pinned  bool // a built-in: never evicted
	evicted bool // dropped from the set; module is closed when users reaches 0
	elem    *list.Element
}

// compiledSet is an LRU set of entries by hash. It is guarded by Host.mu.
type compiledSet struct {
	max     int
	byHash  map[[32]byte]*entry
	recency list.List // front: most recently used
}

func (s *compiledSet) init(max int) {
	s.max = max
	s.byHash = map[[32]byte]*entry{}
}

// get returns the entry for hash, marking it most recently used.
func (s *compiledSet) get(hash [32]byte) (*entry, bool) {
	e, ok := s.byHash[hash]
	if ok {
		s.recency.MoveToFront(e.elem)
	}
	return e, ok
}

// add inserts a new, not yet compiled entry for hash.
func (s *compiledSet) add(hash [32]byte) *entry {
	e := &entry{hash: hash, ready: make(chan struct{})}
	e.elem = s.recency.PushFront(e)
	s.byHash[hash] = e
	return e
}

// drop removes e from the set and marks it evicted.
func (s *compiledSet) drop(e *entry) {
	if e.evicted {
		return
	}
	e.evicted = true
	s.recency.Remove(e.elem)
	delete(s.byHash, e.hash)
}

// trim evicts the least recently used unpinned, compiled entries beyond max and
// returns them, for the caller to close those nobody holds.
func (s *compiledSet) trim() []*entry {
	var out []*entry
	over := s.recency.Len() - s.max
	for el := s.recency.Back(); el != nil && over > 0; {
		e := el.Value.(*entry)
		el = el.Prev()
		if e.pinned || e.module == nil {
			continue // built-ins stay; an entry still compiling is not counted out yet
		}
		s.drop(e)
		out = append(out, e)
		over--
	}
	return out
}
