package kv

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestResumeLinkOpening: a new interview is stored with its opening turn in the same
// transaction; a resumed one is not opened again; an opening the store refuses creates
// nothing and spends no credit.
func TestResumeLinkOpening(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "opening")
	if _, err := db.AddCredits(ctx, org.ID, 1); err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Opening")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	calls := 0
	open := func(brief Brief, iv Interview, l Link) Turn {
		calls++
		if *brief.Title != "Opening" || iv.Status != InterviewInProgress || l.Token != st.LinkToken {
			t.Errorf("opening asked for %+v %+v %+v", brief, iv, l)
		}
		return Turn{Status: InterviewInProgress, Script: []byte(`{"phase":"verbatim"}`),
			Messages: []Message{msg(SpeakerInterviewer, "Hello", t0), msg(SpeakerInterviewer, "Why?", t0)}}
	}

	t.Run("ErrRefusedOpeningCreatesNothing", func(t *testing.T) {
		bad := func(Brief, Interview, Link) Turn { return Turn{Status: "chatting"} }
		if _, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s0", bad); ErrorCode(err) != EINVALID {
			t.Fatalf("got %v, want EINVALID", err)
		}
		if o, err := db.FindOrgByID(ctx, org.ID); err != nil || o.Credits != 1 {
			t.Fatalf("credits %d %v, want 1 left", o.Credits, err)
		}
		if _, err := db.FindConversation(ctx, st.LinkToken, "s0"); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("session of a refused opening: %v", err)
		}
	})

	t.Run("OK_NewInterviewStoredWithItsOpening", func(t *testing.T) {
		before := db.CommitStats()
		opened, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s1", open)
		if err != nil || !opened.Started || calls != 1 {
			t.Fatalf("%+v %v (opening asked %d times)", opened, err, calls)
		}
		if !testPostgres {
			if after := db.CommitStats(); after.Commits != before.Commits+1 {
				t.Fatalf("%d commits, want 1", after.Commits-before.Commits)
			}
		}
		iv := *opened.Interview
		if iv.TranscriptLen != 2 || string(iv.Script) != `{"phase":"verbatim"}` || len(opened.Opening) != 2 || opened.Opening[1].Text != "Why?" {
			t.Fatalf("opened %+v, opening %+v", iv, opened.Opening)
		}
		conv, err := db.FindConversation(ctx, st.LinkToken, "s1")
		if err != nil || !reflect.DeepEqual(conv.Interview, iv) || len(conv.Transcript) != 2 || conv.Transcript[0].Text != "Hello" {
			t.Fatalf("stored %+v %+v %v", conv.Interview, conv.Transcript, err)
		}
		if o, err := db.FindOrgByID(ctx, org.ID); err != nil || o.Credits != 0 {
			t.Fatalf("credits %d %v, want 0 left", o.Credits, err)
		}
	})

	t.Run("OK_ResumedInterviewIsNotOpenedAgain", func(t *testing.T) {
		opened, err := db.ResumeLinkOpening(ctx, st.LinkToken, "s1", "s2", open)
		if err != nil || opened.Started || opened.Session != "s1" || opened.Opening != nil || calls != 1 {
			t.Fatalf("%+v %v (opening asked %d times)", opened, err, calls)
		}
		if tr, _ := db.FindTranscript(ctx, p, opened.Interview.ID); len(tr) != 2 {
			t.Fatalf("transcript %+v", tr)
		}
	})
}
