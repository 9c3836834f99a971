package kv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func mustLink(tb testing.TB, db *DB, p Partition, st Study, req LinkRequest) Link {
	tb.Helper()
	req, err := ValidateLinkRequest(req)
	if err != nil {
		tb.Fatal(err)
	}
	l, _, err := db.CreateParticipantLink(context.Background(), p, st.ID, req, NewLinkToken(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func TestOpenLink(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Open", Email: "o@example.com", Credits: 1})
	live := Partition{Org: org.ID, Env: EnvLive}
	test := Partition{Org: org.ID, Env: EnvTest}

	t.Run("OK_TestModeRehearsalSpendsNothing", func(t *testing.T) {
		st := mustStudy(t, db, live, "T")
		got, err := db.OpenLink(ctx, st.LinkToken, "s1")
		if err != nil || got.State != LinkOpen || !got.Started || !got.Interview.IsTest || got.Interview.InviteAudience != nil {
			t.Fatalf("%+v %v", got, err)
		}
		again, _ := db.OpenLink(ctx, st.LinkToken, "s1")
		other, _ := db.OpenLink(ctx, st.LinkToken, "s2")
		if again.Started || again.Interview.ID != got.Interview.ID || !other.Started || other.Interview.ID == got.Interview.ID {
			t.Fatal("plain link: a session must resume its own interview and a new session start another")
		}
		if o, _ := db.FindOrgByID(ctx, org.ID); o.Credits != 1 {
			t.Fatalf("rehearsal spent credits: %d", o.Credits)
		}
	})
	t.Run("OK_LiveSpendsOneCreditThenUnavailable", func(t *testing.T) {
		st := mustStudy(t, db, live, "L")
		if _, err := db.SetStudyMode(ctx, live, st.ID, ModeLive); err != nil {
			t.Fatal(err)
		}
		first, err := db.OpenLink(ctx, st.LinkToken, "a")
		if err != nil || first.State != LinkOpen || first.Interview.IsTest {
			t.Fatalf("%+v %v", first, err)
		}
		if o, _ := db.FindOrgByID(ctx, org.ID); o.Credits != 0 {
			t.Fatalf("credits %d", o.Credits)
		}
		none, err := db.OpenLink(ctx, st.LinkToken, "b")
		if err != nil || none.State != LinkUnavailable || none.Interview != nil {
			t.Fatalf("%+v %v", none, err)
		}
		resumed, _ := db.OpenLink(ctx, st.LinkToken, "a")
		if resumed.State != LinkOpen || resumed.Interview.ID != first.Interview.ID {
			t.Fatal("an interview already under way must continue without credits")
		}
	})
	t.Run("OK_LiveInTestEnvironmentIsFree", func(t *testing.T) {
		st := mustStudy(t, db, test, "TE")
		if _, err := db.SetStudyMode(ctx, test, st.ID, ModeLive); err != nil {
			t.Fatal(err)
		}
		got, err := db.OpenLink(ctx, st.LinkToken, "x")
		if err != nil || got.State != LinkOpen || got.Interview.IsTest {
			t.Fatalf("%+v %v", got, err)
		}
	})
	t.Run("OK_PausedAndClosedCreateNothing", func(t *testing.T) {
		for _, m := range []Mode{ModePaused, ModeClosed} {
			st := mustStudy(t, db, test, "P")
			db.SetStudyMode(ctx, test, st.ID, ModeLive)
			db.SetStudyMode(ctx, test, st.ID, m)
			got, err := db.OpenLink(ctx, st.LinkToken, "x")
			if err != nil || got.State != string(m) || got.Interview != nil {
				t.Fatalf("%s: %+v %v", m, got, err)
			}
		}
	})
	t.Run("OK_PersonLinkBelongsToFirstOpener", func(t *testing.T) {
		st := mustStudy(t, db, test, "Person")
		l := mustLink(t, db, test, st, LinkRequest{Audience: AudiencePerson, Context: map[string]string{"customer": "c-9"}})
		a, _ := db.OpenLink(ctx, l.Token, "browser-1")
		b, _ := db.OpenLink(ctx, l.Token, "browser-2")
		if !a.Started || b.Started || a.Interview.ID != b.Interview.ID || b.Interview.EntryAttributes["customer"] != "c-9" || *b.Interview.InviteAudience != "person" {
			t.Fatalf("person link: %+v / %+v", a.Interview, b.Interview)
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		if _, err := db.OpenLink(ctx, "nope", "x"); ErrorCode(err) != ENOTFOUND {
			t.Fatal(err)
		}
	})
	t.Run("OK_ConcurrentPersonOpensMakeOneInterview", func(t *testing.T) {
		st := mustStudy(t, db, test, "Race")
		l := mustLink(t, db, test, st, LinkRequest{Audience: AudiencePerson})
		var wg sync.WaitGroup
		var started atomic.Int32
		ids := sync.Map{}
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := db.OpenLink(ctx, l.Token, fmt.Sprint("s", i))
				if err != nil {
					t.Error(err)
					return
				}
				if got.Started {
					started.Add(1)
				}
				ids.Store(got.Interview.ID, true)
			}()
		}
		wg.Wait()
		n := 0
		ids.Range(func(any, any) bool { n++; return true })
		if started.Load() != 1 || n != 1 {
			t.Fatalf("started %d interviews, saw %d ids", started.Load(), n)
		}
	})
}

func TestFindInterviewsHammer(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "H", Email: "h@example.com"})
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "H")
	before := map[ID]bool{}
	for i := 0; i < 100; i++ {
		got, err := db.OpenLink(ctx, st.LinkToken, fmt.Sprint("pre", i))
		if err != nil {
			t.Fatal(err)
		}
		before[got.Interview.ID] = true
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				if _, err := db.OpenLink(ctx, st.LinkToken, fmt.Sprint("w", w, "-", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[ID]int{}
	cursor := ""
	for {
		page, err := db.FindInterviews(ctx, InterviewFilter{Partition: p, StudyID: &st.ID, Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, iv := range page.Items {
			seen[iv.ID]++
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	stop.Store(true)
	wg.Wait()
	for id, n := range seen {
		if n > 1 {
			t.Fatalf("interview %s seen %d times", id, n)
		}
	}
	for id := range before {
		if seen[id] != 1 {
			t.Fatalf("pre-existing interview %s skipped", id)
		}
	}
}
