package kv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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
func holdWriter(tb testing.TB, db *DB) (release func()) {
	tb.Helper()
	held, done, rel := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- db.bolt.Update(func(*bolt.Tx) error {
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

// TestGroupCommit_HammerFailingWriters runs many concurrent writers, every one writing
// before it decides, some then failing validation and some panicking, all in one group.
// Every acknowledged write must be there after the file is reopened, none of a failed
// writer's, and the group must have shared one commit.
func TestGroupCommit_HammerFailingWriters(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bucket := []byte("hammer")
	if err := db.update(ctx, func(tx Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := db.CommitStats()

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
		return db.update(ctx, func(tx Tx) error {
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
				return Invalid(FieldError{Loc: []any{"n"}, Msg: "odd one out", Type: "value_error"})
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
			if ErrorCode(err) != EINVALID {
				t.Errorf("writer %d: got %v, want its own EINVALID", i, err)
			}
		case "panic":
			if err == nil || ErrorCode(err) != "" {
				t.Errorf("writer %d: got %v, want the panic as an uncoded error", i, err)
			}
		}
	}
	st := db.CommitStats()
	if got := st.Writes - before.Writes; got != uint64(ok) {
		t.Errorf("acknowledged writes counted %d, want %d", got, ok)
	}
	if got := st.Commits - before.Commits; got != 2 {
		t.Errorf("commits %d, want 2 (writer 0 alone, then everyone else together)", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.view(ctx, func(tx Tx) error {
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

// TestGroupCommit_ParticipantLinksHammer creates participant links from many goroutines
// through the real method, half of them for a study outside the partition, and checks
// after reopening that exactly the acknowledged links exist.
func TestGroupCommit_ParticipantLinksHammer(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	org := mustOrg(t, db, "links")
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Hammered")
	other := mustStudy(t, db, Partition{Org: org.ID, Env: EnvTest}, "Other environment")

	const n = 64
	tokens := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		tokens[i] = NewLinkToken()
		wg.Add(1)
		go func() {
			defer wg.Done()
			study := st.ID
			if i%2 == 1 {
				study = other.ID
			}
			req := LinkRequest{Audience: AudienceGroup, Context: map[string]string{"n": fmt.Sprint(i)}}
			_, _, errs[i] = db.CreateParticipantLink(ctx, p, study, req, tokens[i], nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 0 && err != nil {
			t.Errorf("link %d: %v", i, err)
		}
		if i%2 == 1 && ErrorCode(err) != ENOTFOUND {
			t.Errorf("link %d for a study outside the partition: got %v, want ENOTFOUND", i, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, tok := range tokens {
		l, err := db.FindLinkByToken(ctx, tok)
		switch {
		case i%2 == 0 && (err != nil || l.Context["n"] != fmt.Sprint(i) || l.StudyID != st.ID):
			t.Errorf("acknowledged link %d after reopen: %+v %v", i, l, err)
		case i%2 == 1 && ErrorCode(err) != ENOTFOUND:
			t.Errorf("refused link %d exists after reopen: %v", i, err)
		}
	}
}

func TestGroupCommit_ClosedStoreRefusesWrites(t *testing.T) {
	boltOnly(t)
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateOrg(context.Background(), OrgInput{Name: "late", Email: "late@example.com"}); err == nil {
		t.Fatal("a write after Close succeeded")
	}
}

func TestSoloCommits_OneCommitPerWrite(t *testing.T) {
	boltOnly(t)
	db, err := Open(t.TempDir(), Options{SoloCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	org := mustOrg(t, db, "solo")
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Solo")
	before := db.CommitStats()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := db.CreateParticipantLink(context.Background(), p, st.ID, LinkRequest{Audience: AudienceGroup}, NewLinkToken(), nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	after := db.CommitStats()
	if c, w := after.Commits-before.Commits, after.Writes-before.Writes; c != 16 || w != 16 {
		t.Fatalf("solo commits: %d commits for %d writes, want 16 and 16", c, w)
	}
}
