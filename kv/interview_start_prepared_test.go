package kv

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// outsideCommit runs write while an opening is being made and reports whether it could
// finish: only an opening made before the shared commit lets another writer through
// (inside it, write waits for the commit, which waits for the opening). The deadline
// only decides how long a broken build takes to fail.
func outsideCommit(t *testing.T, write func() error) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- write() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("write during the opening: %v", err)
		}
		return true
	case <-time.After(30 * time.Second):
		t.Errorf("a write could not commit while the opening was made: the opening ran inside the commit")
		return false
	}
}

// mustLiveStudy returns a new study of p, gone live.
func mustLiveStudy(t *testing.T, db *DB, p Partition, title string) Study {
	t.Helper()
	st, err := db.SetStudyMode(context.Background(), p, mustStudy(t, db, p, title).ID, ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestResumeLinkOpeningPrepared: a new interview and its opening are made before the
// shared commit, which only checks they still apply; a link or a study that changed in
// between is opened as it now stands.
func TestResumeLinkOpeningPrepared(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "prepared")
	p := Partition{Org: org.ID, Env: EnvTest}
	opening := func(brief Brief, iv Interview, l Link) Turn {
		return Turn{Status: InterviewInProgress, Script: []byte(`{"phase":"verbatim"}`),
			Messages: []Message{msg(SpeakerInterviewer, "Hello", t0), msg(SpeakerInterviewer, *brief.Title, t0)}}
	}

	t.Run("OK_OpeningMadeOutsideTheCommit", func(t *testing.T) {
		st := mustStudy(t, db, p, "Outside")
		other := mustLiveStudy(t, db, p, "Other")
		calls := 0
		open := func(brief Brief, iv Interview, l Link) Turn {
			calls++
			outsideCommit(t, func() error {
				_, err := db.SetStudyMode(ctx, p, other.ID, ModePaused)
				return err
			})
			return opening(brief, iv, l)
		}
		opened, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s1", open)
		if err != nil || !opened.Started || calls != 1 || *opened.Brief.Title != "Outside" {
			t.Fatalf("%+v %v (opening asked %d times)", opened, err, calls)
		}
		conv, err := db.FindConversation(ctx, st.LinkToken, "s1")
		if err != nil || !reflect.DeepEqual(conv.Interview, *opened.Interview) || len(conv.Transcript) != 2 ||
			conv.Transcript[1].Text != "Outside" || !reflect.DeepEqual(conv.Brief, opened.Brief) {
			t.Fatalf("stored %+v %+v %v, opened %+v", conv.Interview, conv.Transcript, err, opened)
		}
	})

	t.Run("OK_StudyPausedMeanwhileOpensPaused", func(t *testing.T) {
		st := mustLiveStudy(t, db, p, "Paused meanwhile")
		open := func(brief Brief, iv Interview, l Link) Turn {
			outsideCommit(t, func() error {
				_, err := db.SetStudyMode(ctx, p, st.ID, ModePaused)
				return err
			})
			return opening(brief, iv, l)
		}
		opened, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s2", open)
		if err != nil || opened.State != LinkPaused || opened.Started || opened.Interview != nil {
			t.Fatalf("%+v %v, want paused and nothing started", opened, err)
		}
		if _, err := db.FindConversation(ctx, st.LinkToken, "s2"); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("session of a paused opening: %v", err)
		}
	})

	t.Run("OK_PersonLinkClaimedMeanwhileIsContinued", func(t *testing.T) {
		st := mustStudy(t, db, p, "Claimed meanwhile")
		l := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson})
		var first Opened
		open := func(brief Brief, iv Interview, link Link) Turn {
			if first.Interview == nil {
				outsideCommit(t, func() error {
					var err error
					first, err = db.ResumeLinkOpening(ctx, l.Token, "", "first", opening)
					return err
				})
			}
			return opening(brief, iv, link)
		}
		opened, err := db.ResumeLinkOpening(ctx, l.Token, "", "second", open)
		if err != nil || first.Interview == nil || opened.Started || opened.Interview == nil || opened.Interview.ID != first.Interview.ID {
			t.Fatalf("%+v %v, want the interview the first opener started (%+v)", opened, err, first.Interview)
		}
		for _, s := range []string{"first", "second"} {
			if conv, err := db.FindConversation(ctx, l.Token, s); err != nil || conv.Interview.ID != first.Interview.ID || len(conv.Transcript) != 2 {
				t.Fatalf("session %s: %+v %v", s, conv.Interview, err)
			}
		}
	})

	t.Run("OK_LiveWithoutCreditsStartsNothing", func(t *testing.T) {
		live := Partition{Org: org.ID, Env: EnvLive}
		st := mustStudy(t, db, live, "No credits")
		if _, err := db.SetStudyMode(ctx, live, st.ID, ModeLive); err != nil {
			t.Fatal(err)
		}
		opened, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s3", opening)
		if err != nil || opened.State != LinkUnavailable || opened.Started || opened.Interview != nil || opened.Session != "s3" {
			t.Fatalf("%+v %v, want unavailable", opened, err)
		}
		if _, err := db.AddCredits(ctx, org.ID, 1); err != nil {
			t.Fatal(err)
		}
		opened, err = db.ResumeLinkOpening(ctx, st.LinkToken, "", "s3", opening)
		if err != nil || !opened.Started || !opened.SpentCredit || opened.CreditsLeft != 0 {
			t.Fatalf("%+v %v, want started on the last credit", opened, err)
		}
		if o, err := db.FindOrgByID(ctx, org.ID); err != nil || o.Credits != 0 {
			t.Fatalf("credits %d %v, want 0 left", o.Credits, err)
		}
	})

	t.Run("OK_ResumeCommitsNothing", func(t *testing.T) {
		st := mustStudy(t, db, p, "Resumed")
		person := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson})
		for _, token := range []string{st.LinkToken, person.Token} {
			first, err := db.ResumeLinkOpening(ctx, token, "", "r1", opening)
			if err != nil || !first.Started {
				t.Fatalf("%+v %v", first, err)
			}
			before := db.CommitStats()
			again, err := db.ResumeLinkOpening(ctx, token, "r1", "r2", opening)
			if err != nil || again.Started || again.State != LinkOpen || again.Session != "r1" || again.Opening != nil ||
				again.Interview == nil || again.Interview.ID != first.Interview.ID || again.Interview.TranscriptLen != 2 ||
				again.Study.ID != st.ID || again.Link.Token != token {
				t.Fatalf("resumed %+v %v, want %+v", again, err, first)
			}
			if after := db.CommitStats(); after != before {
				t.Fatalf("resuming committed: %+v then %+v", before, after)
			}
			if _, err := db.FindConversation(ctx, token, "r2"); ErrorCode(err) != EUNAUTHORIZED {
				t.Fatalf("the fresh session of a resumed open: %v", err)
			}
		}
	})
}
