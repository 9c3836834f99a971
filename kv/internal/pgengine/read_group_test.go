package pgengine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"interviewd/kv/internal/engine"
)

// One grouped statement answers every read as reads of their own would: present,
// missing and empty records, and the epoch of an organisation where one is asked for.
func TestReadGroup_OneStatementManyReads(t *testing.T) {
	db := openTest(t, "", Options{})
	ctx := context.Background()
	orgWithEpoch, orgWithout := newKey(), newKey()
	err := db.Update(ctx, func(tx engine.Tx) error {
		b := tx.Bucket(readGroupBucket)
		for i := range 5 {
			if err := b.Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		if err := b.Put([]byte("empty"), []byte{}); err != nil {
			return err
		}
		return tx.Bucket([]byte(fenceBucket)).Put(orgWithEpoch, binary.BigEndian.AppendUint64(nil, 7))
	})
	if err != nil {
		t.Fatal(err)
	}
	b := string(readGroupBucket)
	calls := []*readCall{
		{bucket: b, key: []byte("k3")},
		{bucket: b, key: []byte("missing")},
		{bucket: b, key: []byte("empty")},
		{bucket: b, key: []byte("k0"), org: orgWithEpoch},
		{bucket: b, key: []byte("missing"), org: orgWithEpoch},
		{bucket: b, key: []byte("k4"), org: orgWithout},
		{bucket: "another_bucket", key: []byte("k1")},
		{bucket: b, key: []byte("k3")}, // the same read twice
	}
	db.reads.send(ctx, calls)
	want := []struct {
		found bool
		value string
		epoch uint64
	}{{true, "v3", 0}, {false, "", 0}, {true, "", 0}, {true, "v0", 7}, {false, "", 7}, {true, "v4", 0}, {false, "", 0}, {true, "v3", 0}}
	for i, c := range calls {
		if c.err != nil {
			t.Fatalf("read %d: %v", i, c.err)
		}
		if c.found != want[i].found || string(c.value) != want[i].value || counter(c.epoch) != want[i].epoch {
			t.Errorf("read %d (%s %q): found %v value %q epoch %d, want %+v", i, c.bucket, c.key, c.found, c.value, counter(c.epoch), want[i])
		}
	}
	// Through readOne, an empty record is an empty non-nil value and a missing one nil.
	err = db.ReadOne(ctx, readGroupBucket, []byte("empty"), func(v []byte) error {
		if v == nil || len(v) != 0 {
			t.Errorf("empty record read as %v", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Many concurrent reads, grouped as they come, while a writer moves the records on:
// every read answers its own key, and never with a value older than one committed
// before the read began.
func TestReadGroup_ConcurrentReadsSeeCommittedWrites(t *testing.T) {
	db := openTest(t, "", Options{})
	ctx := context.Background()
	const keys = 8
	put := func(n uint64) error {
		return db.Update(ctx, func(tx engine.Tx) error {
			b, err := tx.CreateBucketIfNotExists(readGroupBucket)
			if err != nil {
				return err
			}
			for k := range keys {
				if err := b.Put(fmt.Appendf(nil, "k%d", k), fmt.Appendf(nil, "%d:%020d", k, n)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := put(0); err != nil {
		t.Fatal(err)
	}
	var committed atomic.Uint64
	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for n := uint64(1); ; n++ {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			if err := put(n); err != nil {
				writerDone <- err
				return
			}
			committed.Store(n)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Go(func() {
			for i := range 40 {
				k := (g + i) % keys
				floor := committed.Load()
				err := db.ReadOne(ctx, readGroupBucket, fmt.Appendf(nil, "k%d", k), func(v []byte) error {
					var gotK int
					var n uint64
					if _, err := fmt.Sscanf(string(v), "%d:%d", &gotK, &n); err != nil {
						return fmt.Errorf("key k%d read %q: %v", k, v, err)
					}
					if gotK != k {
						return fmt.Errorf("key k%d answered with k%d's record", k, gotK)
					}
					if n < floor {
						return fmt.Errorf("key k%d read version %d after version %d had committed", k, n, floor)
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
