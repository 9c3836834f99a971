package boltengine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"interviewd/kv/internal/engine"
)

// waitFor polls cond until it holds or a generous deadline passes: the suite runs on
// busy machines, so nothing here depends on how fast a goroutine gets scheduled.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// holdWriter takes bbolt's writer lock until release is closed, so the committer's
// next group cannot start and writers pile up behind it.
func holdWriter(tb testing.TB, e *Engine) (release func()) {
	tb.Helper()
	held, done, rel := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- e.db.Update(func(*bolt.Tx) error {
			close(held)
			<-rel
			return nil
		})
	}()
	<-held
	return func() {
		close(rel)
		if err := <-done; err != nil {
			tb.Error(err)
		}
	}
}

// errInvalid is a writer's own refusal (as a validation error would be).
var errInvalid = errors.New("odd one out")

// TestGroupCommit_HammerFailingWriters runs many concurrent writers, every one writing
// before it decides, some then failing validation and some panicking, all in one group.
// Every acknowledged write must be there after the file is reopened, none of a failed
// writer's, and the group must have shared one commit.
func TestGroupCommit_HammerFailingWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	bucket := []byte("hammer")
	prepare := func(tx engine.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}
	db, err := Open(path, Options{}, prepare)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	commits, writes := db.Stats()

	const n = 120
	outcome := func(i int) string {
		switch {
		case i%31 == 7:
			return "panic"
		case i%5 == 2:
			return "invalid"
		}
		return "ok"
	}
	write := func(i int) error {
		return db.Update(ctx, func(tx engine.Tx) error {
			b := tx.Bucket(bucket)
			key := []byte(fmt.Sprintf("w%03d", i))
			if err := b.Put(key, []byte(fmt.Sprintf("value %d", i))); err != nil {
				return err
			}
			if err := b.Put([]byte(fmt.Sprintf("x%03d", i)), []byte("second write of the same mutation")); err != nil {
				return err
			}
			switch outcome(i) {
			case "panic":
				panic("writer " + string(key) + " broke")
			case "invalid":
				return errInvalid
			}
			return nil
		})
	}

	// Writer 0 is taken as a group of one and waits for the writer lock; the others
	// queue behind it and must all go in the next group.
	release := holdWriter(t, db)
	taken := db.group.taken.Load()
	errs := make([]error, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); errs[0] = write(0) }()
	waitFor(t, "the first group to be taken", func() bool { return db.group.taken.Load() > taken })
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = write(i) }()
	}
	waitFor(t, "every writer to queue", func() bool { return db.group.queued() == n-1 })
	release()
	wg.Wait()

	ok := 0
	for i, err := range errs {
		switch outcome(i) {
		case "ok":
			ok++
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		case "invalid":
			if !errors.Is(err, errInvalid) {
				t.Errorf("writer %d: got %v, want its own refusal", i, err)
			}
		case "panic":
			if err == nil || errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "panic") {
				t.Errorf("writer %d: got %v, want the panic as its error", i, err)
			}
		}
	}
	commitsAfter, writesAfter := db.Stats()
	if got := writesAfter - writes; got != uint64(ok) {
		t.Errorf("acknowledged writes counted %d, want %d", got, ok)
	}
	if got := commitsAfter - commits; got != 2 {
		t.Errorf("commits %d, want 2 (writer 0 alone, then everyone else together)", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(path, Options{}, prepare)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(ctx, func(tx engine.Tx) error {
		b := tx.Bucket(bucket)
		for i := 0; i < n; i++ {
			v, x := b.Get([]byte(fmt.Sprintf("w%03d", i))), b.Get([]byte(fmt.Sprintf("x%03d", i)))
			if outcome(i) == "ok" {
				if string(v) != fmt.Sprintf("value %d", i) || x == nil {
					t.Errorf("acknowledged writer %d lost after reopen: %q %q", i, v, x)
				}
			} else if v != nil || x != nil {
				t.Errorf("failed writer %d (%s) left writes behind: %q %q", i, outcome(i), v, x)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
