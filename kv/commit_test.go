package kv

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Group commit through the store's own writers: the engine's tests
// (kv/internal/boltengine) hammer the committer itself.

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
