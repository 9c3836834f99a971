package kv

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// readMode reads a study's mode through ViewStudyRecord, the cached read.
func readMode(db *DB, p Partition, id ID) (Mode, error) {
	var mode Mode
	err := db.ViewStudyRecord(context.Background(), p, id, func(raw []byte) error {
		st, err := DecodeStudy(raw)
		mode = st.Mode
		return err
	})
	return mode, err
}

// viewMode is readMode for the test's own goroutine: it fails the test on an error.
func viewMode(tb testing.TB, db *DB, p Partition, id ID) Mode {
	tb.Helper()
	mode, err := readMode(db, p, id)
	if err != nil {
		tb.Fatalf("view study: %v", err)
	}
	return mode
}

// TestViewStudyRecordSeesEveryWrite: a read after any write to a study (mode, design)
// gets the written record, cached or not, on both engines.
func TestViewStudyRecordSeesEveryWrite(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "cache").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Checkout")
	if got := viewMode(t, db, p, st.ID); got != ModeTest {
		t.Fatalf("new study is %s", got)
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	if got := viewMode(t, db, p, st.ID); got != ModeLive {
		t.Fatalf("after going live the read says %s", got)
	}
	err := db.update(ctx, func(tx Tx) error {
		_, err := db.addBriefVersion(tx, p, st.ID, "more", testBrief("Checkout, again"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.ViewStudyRecord(ctx, p, st.ID, func(raw []byte) error {
		got, err := DecodeStudy(raw)
		if err == nil && (got.Version != 2 || got.Name != "Checkout, again") {
			err = fmt.Errorf("after a new design the read says version %d %q", got.Version, got.Name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another environment's read of the same id is not served from the cache.
	other := Partition{Org: p.Org, Env: EnvTest}
	err = db.ViewStudyRecord(ctx, other, st.ID, func([]byte) error { return nil })
	if ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another environment's read: %v, want not found", err)
	}
}

// TestViewStudyRecordNeverStaleUnderConcurrentReads: while readers hammer a study, a
// writer changes it again and again and reads back each change at once: a reader that
// read the old record just before a write must never leave it cached after.
func TestViewStudyRecordNeverStaleUnderConcurrentReads(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "race").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Churn")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	defer readers.Wait()
	defer close(stop) // runs first: the readers stop, whatever ends the test
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
					if _, err := readMode(db, p, st.ID); err != nil {
						t.Errorf("concurrent read: %v", err)
						return
					}
				}
			}
		}()
	}
	want := ModeLive
	for i := range 200 {
		want = ModePaused
		if i%2 == 1 {
			want = ModeLive
		}
		if _, err := db.SetStudyMode(ctx, p, st.ID, want); err != nil {
			t.Fatal(err)
		}
		if got := viewMode(t, db, p, st.ID); got != want {
			t.Fatalf("write %d: read %s right after writing %s", i, got, want)
		}
	}
	if got := viewMode(t, db, p, st.ID); got != want {
		t.Fatalf("final read %s, want %s", got, want)
	}
}

func TestStudyCacheRules(t *testing.T) {
	boltOnly(t) // a shared store has no cache
	c := newStudyCache()
	gen := c.generation()
	c.invalidate([]byte("other"))
	c.put([]byte("k"), []byte("old"), gen)
	if _, ok := c.get([]byte("k")); ok {
		t.Fatal("a record read before an invalidation was cached after it")
	}
	raw := []byte("v1")
	c.put([]byte("k"), raw, c.generation())
	raw[1] = '2'
	if got, ok := c.get([]byte("k")); !ok || string(got) != "v1" {
		t.Fatalf("cached %q %v: the cache must keep its own copy", got, ok)
	}
	for i := range studyCacheMax + 10 {
		c.put(fmt.Appendf(nil, "k%d", i), []byte("v"), c.generation())
	}
	if n := c.len(); n > studyCacheMax {
		t.Fatalf("%d records cached, bound is %d", n, studyCacheMax)
	}
}

func TestSharedStoreCachesNoStudies(t *testing.T) {
	db := mustOpenDB(t, nil)
	if db.Shared() != (db.cache.studies == nil) {
		t.Fatalf("shared store %v with study cache %v: only a store no other process writes may cache", db.Shared(), db.cache.studies != nil)
	}
}
