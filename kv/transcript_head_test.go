package kv

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestConversationTurnPath covers what a participant turn reads and writes: the
// conversation without its transcript, the check that it is still current after
// waiting, and the turn appended from the interview as it was read.
func TestConversationTurnPath(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "head")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Version one")
	if _, err := db.OpenLink(ctx, st.LinkToken, "s1"); err != nil {
		t.Fatal(err)
	}
	turn := func(n int, text string, at time.Time) Turn {
		return Turn{Session: "s1", ExpectLen: n, Status: InterviewInProgress,
			Messages: []Message{msg(SpeakerParticipant, text, at), msg(SpeakerInterviewer, "Next?", at)}}
	}
	transcript := func() []Message {
		t.Helper()
		conv, err := db.FindConversation(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		return conv.Transcript
	}

	t.Run("OK_HeadIsTheConversationWithoutTranscript", func(t *testing.T) {
		full, err := db.FindConversation(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		head, err := db.FindConversationHead(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if head.Transcript != nil || !reflect.DeepEqual(head.Interview, full.Interview) ||
			!reflect.DeepEqual(head.Brief, full.Brief) || !reflect.DeepEqual(head.Link, full.Link) {
			t.Fatalf("head %+v\nfull %+v", head, full)
		}
		if _, err := db.FindConversationHead(ctx, st.LinkToken, "nobody"); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("unknown session: %v", err)
		}
	})

	t.Run("OK_ChangingAReadBriefLeavesTheStoredOneAlone", func(t *testing.T) {
		first, err := db.FindConversationHead(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		*first.Brief.Title = "changed"
		first.Brief.VerbatimQuestions[0] = "changed"
		again, err := db.FindConversationHead(ctx, st.LinkToken, "s1")
		if err != nil || *again.Brief.Title != "Version one" || again.Brief.VerbatimQuestions[0] != "Why?" {
			t.Fatalf("%+v %v", again.Brief, err)
		}
	})

	t.Run("OK_AppendTurnToFollowsTheConversation", func(t *testing.T) {
		conv, err := db.FindConversationHead(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			n := conv.Interview.TranscriptLen
			iv, err := db.AppendTurnTo(ctx, &conv, turn(n, "A", t0.Add(time.Duration(i+1)*time.Minute)))
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
			if iv.TranscriptLen != n+2 || !reflect.DeepEqual(conv.Interview, iv) {
				t.Fatalf("turn %d: returned %+v, conversation %+v", i, iv, conv.Interview)
			}
		}
		stored, err := db.FindInterviewByID(ctx, p, conv.Interview.ID)
		if err != nil || !reflect.DeepEqual(stored, conv.Interview) || len(transcript()) != 6 {
			t.Fatalf("stored %+v %v, transcript %d", stored, err, len(transcript()))
		}
		// Unchanged since: CurrentConversation answers with it as it is.
		cur, err := db.CurrentConversation(ctx, st.LinkToken, "s1", conv)
		if err != nil || !reflect.DeepEqual(cur, conv) {
			t.Fatalf("current %+v %v", cur, err)
		}
	})

	t.Run("OK_MovedConversationIsReadAgain", func(t *testing.T) {
		head, err := db.FindConversationHead(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		full, err := db.FindConversation(ctx, st.LinkToken, "s1")
		if err != nil {
			t.Fatal(err)
		}
		n := head.Interview.TranscriptLen
		if _, err := db.AppendTurn(ctx, p, head.Interview.ID, turn(n, "elsewhere", t0.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		curHead, err := db.CurrentConversation(ctx, st.LinkToken, "s1", head)
		if err != nil || curHead.Interview.TranscriptLen != n+2 || curHead.Transcript != nil {
			t.Fatalf("head: %+v %v", curHead.Interview, err)
		}
		curFull, err := db.CurrentConversation(ctx, st.LinkToken, "s1", full)
		if err != nil || len(curFull.Transcript) != n+2 || curFull.Transcript[n].Text != "elsewhere" {
			t.Fatalf("full: %+v %v", curFull.Transcript, err)
		}
		// A turn based on the old reading is refused, not interleaved...
		stale := head
		if _, err := db.AppendTurnTo(ctx, &stale, turn(n, "late", t0.Add(2*time.Hour))); ErrorCode(err) != ECONFLICT || !reflect.DeepEqual(stale, head) {
			t.Fatalf("stale turn: %v", err)
		}
		// ...and one that knows the transcript's length lands on the interview as stored.
		iv, err := db.AppendTurnTo(ctx, &stale, turn(n+2, "after", t0.Add(2*time.Hour)))
		if err != nil || iv.TranscriptLen != n+4 {
			t.Fatalf("%+v %v", iv, err)
		}
		got := transcript()
		if len(got) != n+4 || got[n].Text != "elsewhere" || got[n+2].Text != "after" {
			t.Fatalf("transcript %+v", got)
		}
	})
}
