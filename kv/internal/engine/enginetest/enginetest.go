// Package enginetest is the conformance suite every storage engine passes (the seam's
// contract, kv/internal/engine): each engine's tests run it against a real engine,
// bbolt on a file in a temp folder, PostgreSQL on a fresh database.
package enginetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"interviewd/kv/internal/engine"
)

// The engine's own contract, checked against a sorted model: byte order (empty-suffix
// prefixes first, 0x00 and 0xff), every cursor move, walks longer than a prefetch
// batch, cursors that see the transaction's own writes, rollback, and concurrent
// read-modify-write transactions.

// Open returns a fresh, empty engine, closed when tb ends.
type Open func(tb testing.TB) engine.Engine

// Run runs the whole suite against engines open returns, one per test.
func Run(t *testing.T, open Open) {
	t.Run("CursorOrder", func(t *testing.T) { testCursorOrder(t, open(t)) })
	t.Run("CursorSeesOwnWrites", func(t *testing.T) { testCursorSeesOwnWrites(t, open(t)) })
	t.Run("Rollback", func(t *testing.T) { testRollback(t, open(t)) })
	t.Run("ConcurrentIncrements", func(t *testing.T) { testConcurrentIncrements(t, open(t)) })
}

var engineBucket = []byte("engine_test")

func engineKeys() [][]byte {
	keys := [][]byte{{0x00}, {0x00, 0x00}, {0x01}, {0x7f}, {0x80}, {0xff}, {0xff, 0x00}, {0xff, 0xff},
		[]byte("a"), []byte("ab"), []byte("abc"), []byte("b")}
	for i := range 1500 { // more than one batch
		k := make([]byte, 6)
		copy(k, "n:")
		binary.BigEndian.PutUint32(k[2:], uint32(i*7919%100003))
		keys = append(keys, k)
	}
	return keys
}

func testCursorOrder(t *testing.T, db engine.Engine) {
	ctx := context.Background()
	keys := engineKeys()
	err := db.Update(ctx, func(tx engine.Tx) error {
		b, err := tx.CreateBucketIfNotExists(engineBucket)
		if err != nil {
			return err
		}
		for i, k := range keys {
			if err := b.Put(k, []byte(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return b.Put([]byte("empty"), []byte{})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(keys), []byte("empty"))
	slices.SortFunc(want, bytes.Compare)

	err = db.View(ctx, func(tx engine.Tx) error {
		b := tx.Bucket(engineBucket)
		if v := b.Get([]byte("empty")); v == nil || len(v) != 0 {
			t.Errorf("empty value read as %v, want an empty non-nil slice", v)
		}
		if v := b.Get([]byte("missing")); v != nil {
			t.Errorf("missing key read as %q", v)
		}
		var got [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			got = append(got, slices.Clone(k))
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("forward walk: %d keys, first diff at %d", len(got), firstDiff(got, want))
		}
		got = got[:0]
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			got = append(got, slices.Clone(k))
		}
		slices.Reverse(got)
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("backward walk: %d keys, first diff at %d", len(got), firstDiff(got, want))
		}
		var each int
		if err := b.ForEach(func(k, v []byte) error {
			if !bytes.Equal(k, want[each]) {
				return fmt.Errorf("ForEach key %d is %x, want %x", each, k, want[each])
			}
			each++
			return nil
		}); err != nil {
			return err
		}
		if each != len(want) {
			t.Errorf("ForEach saw %d keys, want %d", each, len(want))
		}
		// Seek lands on the key or the first after it; Prev and Next from there.
		r := rand.New(rand.NewPCG(1, 2))
		for range 200 {
			seek := make([]byte, r.IntN(4))
			for i := range seek {
				seek[i] = byte(r.IntN(256))
			}
			if r.IntN(3) == 0 {
				seek = append([]byte("n:"), seek...)
			}
			i, _ := slices.BinarySearchFunc(want, seek, bytes.Compare)
			k, _ := c.Seek(seek)
			if !bytes.Equal(k, at(want, i)) {
				t.Fatalf("Seek(%x) = %x, want %x", seek, k, at(want, i))
			}
			if k == nil {
				continue
			}
			steps := r.IntN(20)
			pos := i
			for range steps {
				var k []byte
				if r.IntN(2) == 0 {
					k, _ = c.Next()
					pos++
				} else {
					k, _ = c.Prev()
					pos--
				}
				if !bytes.Equal(k, at(want, pos)) {
					t.Fatalf("after Seek(%x), move to %d: %x, want %x", seek, pos, k, at(want, pos))
				}
				if k == nil {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func at(keys [][]byte, i int) []byte {
	if i < 0 || i >= len(keys) {
		return nil
	}
	return keys[i]
}

func firstDiff(a, b [][]byte) int {
	for i := range min(len(a), len(b)) {
		if !bytes.Equal(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// A cursor sees the transaction's own writes, made after it fetched: a deleted key is
// not walked, a key put ahead of it is.
func testCursorSeesOwnWrites(t *testing.T, db engine.Engine) {
	err := db.Update(context.Background(), func(tx engine.Tx) error {
		b, err := tx.CreateBucketIfNotExists(engineBucket)
		if err != nil {
			return err
		}
		for i := range 20 {
			if err := b.Put([]byte{byte(i * 2)}, []byte{1}); err != nil {
				return err
			}
		}
		c := b.Cursor()
		k, _ := c.First()
		if k[0] != 0 {
			return fmt.Errorf("first %x", k)
		}
		if err := b.Delete([]byte{2}); err != nil {
			return err
		}
		if err := b.Put([]byte{3}, []byte{1}); err != nil {
			return err
		}
		var got []byte
		for k, _ := c.Next(); k != nil; k, _ = c.Next() {
			got = append(got, k[0])
		}
		if got[0] != 3 || got[1] != 4 || len(got) != 19 {
			return fmt.Errorf("walk after writes %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A failed read-write function keeps nothing, and its error is the caller's.
func testRollback(t *testing.T, db engine.Engine) {
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx engine.Tx) error {
		b, err := tx.CreateBucketIfNotExists(engineBucket)
		if err != nil {
			return err
		}
		if err := b.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update: %v", err)
	}
	_ = db.View(ctx, func(tx engine.Tx) error {
		if b := tx.Bucket(engineBucket); b != nil && b.Get([]byte("k")) != nil {
			t.Error("a rolled-back write is visible")
		}
		return nil
	})
}

// Concurrent read-modify-write transactions on one key lose no update: bbolt runs them
// one at a time, PostgreSQL retries the ones it cannot serialize.
func testConcurrentIncrements(t *testing.T, db engine.Engine) {
	ctx := context.Background()
	const workers, each = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := db.Update(ctx, incrementCounter); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := readCounter(t, db); n != workers*each {
		t.Fatalf("counter %d, want %d", n, workers*each)
	}
}

func incrementCounter(tx engine.Tx) error {
	b, err := tx.CreateBucketIfNotExists(engineBucket)
	if err != nil {
		return err
	}
	n := uint64(0)
	if v := b.Get([]byte("counter")); v != nil {
		n = binary.BigEndian.Uint64(v)
	}
	return b.Put([]byte("counter"), binary.BigEndian.AppendUint64(nil, n+1))
}

func readCounter(tb testing.TB, db engine.Engine) uint64 {
	tb.Helper()
	var n uint64
	err := db.View(context.Background(), func(tx engine.Tx) error {
		if v := tx.Bucket(engineBucket).Get([]byte("counter")); v != nil {
			n = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkView is one read transaction of one Get, from many goroutines: the engine's
// own cost of a read (on PostgreSQL, its round trips). Each engine's benchmarks call it.
func BenchmarkView(b *testing.B, open Open) {
	db := open(b)
	ctx := context.Background()
	if err := db.Update(ctx, incrementCounter); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := db.View(ctx, func(tx engine.Tx) error {
				if tx.Bucket(engineBucket).Get([]byte("counter")) == nil {
					return errors.New("counter missing")
				}
				return nil
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
