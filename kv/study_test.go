package kv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func testBrief(title string) Brief {
	return Brief{Title: &title, Objectives: []string{"Learn why"}, VerbatimQuestions: []string{"Why?"}}
}

func mustStudy(tb testing.TB, db *DB, p Partition, title string) Study {
	tb.Helper()
	s, err := db.CreateStudy(context.Background(), StudyInput{Partition: p, Brief: testBrief(title)})
	if err != nil {
		tb.Fatalf("create study: %v", err)
	}
	return s
}

func TestCreateStudy(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "studies")
	p := Partition{Org: org.ID, Env: EnvLive}
	ctx := context.Background()
	s := mustStudy(t, db, p, "Checkout")
	if s.Mode != ModeTest || s.Version != 1 || s.Name != "Checkout" || s.LaunchedAt != nil || s.LinkToken == "" {
		t.Fatalf("new study %+v", s)
	}
	link, err := db.FindLinkByToken(ctx, s.LinkToken)
	if err != nil || !link.Plain || link.StudyID != s.ID || len(link.Token) != 22 {
		t.Fatalf("plain link %+v %v", link, err)
	}
	got, err := db.FindStudyByID(ctx, p, s.ID)
	if err != nil || got.ID != s.ID || got.Brief == nil || got.Brief.PreInterviewQuestions == nil {
		t.Fatalf("find %+v %v", got, err)
	}
	untitled, err := db.CreateStudy(ctx, StudyInput{Partition: p, Brief: Brief{}})
	if err != nil || untitled.Name != UntitledStudy {
		t.Fatalf("untitled: %+v %v", untitled, err)
	}
	t.Run("ErrNotFound_OtherPartition", func(t *testing.T) {
		other := mustOrg(t, db, "other")
		for _, q := range []Partition{{Org: org.ID, Env: EnvTest}, {Org: other.ID, Env: EnvLive}} {
			if _, err := db.FindStudyByID(ctx, q, s.ID); ErrorCode(err) != ENOTFOUND {
				t.Errorf("partition %+v: %v", q, err)
			}
		}
	})
}

func TestFindStudiesPaging(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "paging")
	p := Partition{Org: org.ID, Env: EnvTest}
	other := Partition{Org: org.ID, Env: EnvLive}
	ctx := context.Background()
	var ids []ID
	for i := 0; i < 23; i++ {
		ids = append(ids, mustStudy(t, db, p, fmt.Sprint(i)).ID)
		mustStudy(t, db, other, "noise")
	}
	var got []ID
	cursor := ""
	pages := 0
	for {
		page, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 5, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range page.Items {
			got = append(got, s.ID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if pages != 5 || len(got) != 23 {
		t.Fatalf("pages %d rows %d", pages, len(got))
	}
	for i, id := range got {
		if id != ids[len(ids)-1-i] {
			t.Fatalf("row %d out of newest-first order", i)
		}
	}
	exact, _ := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 23})
	if len(exact.Items) != 23 || exact.Next != "" {
		t.Fatalf("a page holding every row must have no next cursor: %d %q", len(exact.Items), exact.Next)
	}
	t.Run("ErrCursorFromOtherList", func(t *testing.T) {
		if _, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 5, Cursor: db.EncodeCursor(CursorInterviews, p, ids[0])}); ErrorCode(err) != EINVALID {
			t.Fatal(err)
		}
	})
}

// TestFindStudiesPagingHammer pages with limit 7 while 10 goroutines insert: every row
// that existed before paging began is seen exactly once.
func TestFindStudiesPagingHammer(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "hammer")
	p := Partition{Org: org.ID, Env: EnvLive}
	ctx := context.Background()
	before := map[ID]bool{}
	for i := 0; i < 150; i++ {
		before[mustStudy(t, db, p, "pre").ID] = true
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := db.CreateStudy(ctx, StudyInput{Partition: p, Brief: testBrief("new")}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[ID]int{}
	cursor := ""
	for {
		page, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Items {
			seen[s.ID]++
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	stop.Store(true)
	wg.Wait()
	dups, skipped := 0, 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	for id := range before {
		if seen[id] == 0 {
			skipped++
		}
	}
	if dups != 0 || skipped != 0 {
		t.Fatalf("duplicates %d, skipped pre-existing rows %d", dups, skipped)
	}
}

func FuzzDecodeCursor(f *testing.F) {
	db, err := Open(f.TempDir(), testOptions(f, Options{}))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = db.Close() })
	p := Partition{Org: NewV4(), Env: EnvLive}
	f.Add(db.EncodeCursor(CursorStudies, p, NewV4()))
	f.Add("")
	f.Add("AQ")
	f.Add(db.EncodeCursor(CursorInterviews, p, NewV4()))
	f.Add(db.EncodeCursor(CursorStudies, Partition{Org: NewV4(), Env: EnvLive}, NewV4()))
	f.Fuzz(func(t *testing.T, s string) {
		id, err := db.DecodeCursor(CursorStudies, p, s)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			return
		}
		if db.EncodeCursor(CursorStudies, p, id) != s {
			t.Fatalf("accepted %q, which does not re-encode to itself", s)
		}
	})
}
