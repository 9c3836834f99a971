package kv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fixedClock is a settable clock for duration arithmetic.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func msg(speaker, text string, at time.Time) Message {
	return Message{Speaker: speaker, Text: text, At: at}
}

func TestAppendTurn(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := &fixedClock{now: t0}
	db := mustOpenDB(t, clock.Now)
	ctx := context.Background()
	org := mustOrg(t, db, "turns")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Turns")
	open := func(session string) Interview {
		t.Helper()
		got, err := db.OpenLink(ctx, st.LinkToken, session)
		if err != nil || got.Interview == nil {
			t.Fatalf("open: %+v %v", got, err)
		}
		return *got.Interview
	}

	t.Run("OK_FullInterviewMeasuresCappedGaps", func(t *testing.T) {
		iv := open("s-full")
		steps := []struct {
			msgs     []Message
			status   string
			voice    bool
			wantDur  *int
			wantMode string
		}{
			{msgs: []Message{msg(SpeakerInterviewer, "Hello", t0), msg(SpeakerInterviewer, "Q1?", t0)}, status: InterviewInProgress, wantMode: ModalityText},
			// 30 s to answer, the reply 1 s later: 31 s.
			{msgs: []Message{msg(SpeakerParticipant, "A1", t0.Add(30*time.Second)), msg(SpeakerInterviewer, "Q2?", t0.Add(31*time.Second))}, status: InterviewInProgress, wantDur: ptr(31), wantMode: ModalityText},
			// A ten-minute pause counts 120 s; spoken: the interview becomes voice.
			{msgs: []Message{msg(SpeakerParticipant, "A2", t0.Add(631*time.Second)), msg(SpeakerInterviewer, "Thanks", t0.Add(632*time.Second))}, status: InterviewCompleted, voice: true, wantDur: ptr(152), wantMode: ModalityVoice},
		}
		n := 0
		for i, s := range steps {
			got, err := db.AppendTurn(ctx, p, iv.ID, Turn{Session: "s-full", ExpectLen: n, Messages: s.msgs, Script: []byte(fmt.Sprint(i)), Status: s.status, Voice: s.voice})
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			n += len(s.msgs)
			if (got.DurationSeconds == nil) != (s.wantDur == nil) || (s.wantDur != nil && *got.DurationSeconds != *s.wantDur) {
				t.Fatalf("step %d: duration %v, want %v", i, got.DurationSeconds, s.wantDur)
			}
			if got.Modality != s.wantMode || got.Status != s.status || got.TranscriptLen != n || string(got.Script) != fmt.Sprint(i) {
				t.Fatalf("step %d: %+v", i, got)
			}
		}
		stored, _ := db.FindInterviewByID(ctx, p, iv.ID)
		if stored.CompletedAt == nil || !stored.CompletedAt.Equal(t0.Add(632*time.Second)) || !stored.LastMessageAt.Equal(t0.Add(632*time.Second)) {
			t.Fatalf("completed_at %v last %v", stored.CompletedAt, stored.LastMessageAt)
		}
		tr, err := db.FindTranscript(ctx, p, iv.ID)
		if err != nil || len(tr) != 6 || tr[0].Text != "Hello" || tr[2].Text != "A1" || tr[5].Text != "Thanks" || tr[5].Speaker != SpeakerInterviewer {
			t.Fatalf("transcript %+v %v", tr, err)
		}
	})
	t.Run("ErrRefusals", func(t *testing.T) {
		iv := open("s-err")
		first := Turn{Session: "s-err", Messages: []Message{msg(SpeakerInterviewer, "Hi", t0)}, Status: InterviewInProgress}
		if _, err := db.AppendTurn(ctx, p, iv.ID, first); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name   string
			turn   Turn
			code   string
			reason string
		}{
			{"ErrTranscriptMoved", Turn{Session: "s-err", ExpectLen: 0, Status: InterviewInProgress}, ECONFLICT, "transcript_moved"},
			{"ErrOtherSession", Turn{Session: "s-full", ExpectLen: 1, Status: InterviewInProgress}, EUNAUTHORIZED, "invalid_session"},
			{"ErrNoSession", Turn{ExpectLen: 1, Status: InterviewInProgress}, EUNAUTHORIZED, "invalid_session"},
			{"ErrUnknownStatus", Turn{Session: "s-err", ExpectLen: 1, Status: "done"}, EINVALID, "status"},
			{"ErrUnknownSpeaker", Turn{Session: "s-err", ExpectLen: 1, Status: InterviewInProgress, Messages: []Message{msg("bot", "x", t0)}}, EINVALID, "speaker"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := db.AppendTurn(ctx, p, iv.ID, c.turn)
				var ke *Error
				if ErrorCode(err) != c.code || !asError(err, &ke) || ke.Reason != c.reason {
					t.Fatalf("got %v, want %s %s", err, c.code, c.reason)
				}
			})
		}
		if _, err := db.AppendTurn(ctx, p, iv.ID, Turn{Session: "s-err", ExpectLen: 1, Status: InterviewFailed}); err != nil {
			t.Fatal(err)
		}
		_, err := db.AppendTurn(ctx, p, iv.ID, Turn{Session: "s-err", ExpectLen: 1, Status: InterviewInProgress})
		var ke *Error
		if !asError(err, &ke) || ke.Reason != "interview_finished" {
			t.Fatalf("append after failure: %v", err)
		}
		if got, _ := db.FindInterviewByID(ctx, p, iv.ID); got.Status != InterviewFailed || got.CompletedAt != nil {
			t.Fatalf("failed interview %+v", got)
		}
	})
	t.Run("ErrOtherPartition", func(t *testing.T) {
		iv := open("s-part")
		other := Partition{Org: org.ID, Env: EnvLive}
		if _, err := db.AppendTurn(ctx, other, iv.ID, Turn{Session: "s-part", Status: InterviewInProgress}); ErrorCode(err) != ENOTFOUND {
			t.Fatal(err)
		}
	})
	t.Run("OK_ConcurrentTurnsNeverInterleave", func(t *testing.T) {
		iv := open("s-race")
		var wg sync.WaitGroup
		var won atomic.Int32
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					conv, err := db.FindConversation(ctx, st.LinkToken, "s-race")
					if err != nil {
						t.Error(err)
						return
					}
					turn := Turn{Session: "s-race", ExpectLen: len(conv.Transcript), Status: InterviewInProgress, Messages: []Message{
						msg(SpeakerParticipant, fmt.Sprintf("w%d-%d", w, i), t0), msg(SpeakerInterviewer, fmt.Sprintf("re w%d-%d", w, i), t0),
					}}
					_, err = db.AppendTurn(ctx, p, iv.ID, turn)
					if err == nil {
						won.Add(1)
					} else if ErrorCode(err) != ECONFLICT {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		tr, _ := db.FindTranscript(ctx, p, iv.ID)
		if len(tr) != int(won.Load())*2 {
			t.Fatalf("%d messages for %d turns", len(tr), won.Load())
		}
		for i := 0; i < len(tr); i += 2 {
			if tr[i+1].Text != "re "+tr[i].Text {
				t.Fatalf("turn at %d interleaved: %q then %q", i, tr[i].Text, tr[i+1].Text)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func TestFindConversation(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "conv")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Version one")
	person := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson, Context: map[string]string{"plan": "pro"}, Note: "private"})
	group := mustLink(t, db, p, st, LinkRequest{Audience: AudienceGroup})
	if _, err := db.OpenLink(ctx, person.Token, "phone"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenLink(ctx, group.Token, "g1"); err != nil {
		t.Fatal(err)
	}
	// Refine the study after the interviews started: they keep version 1.
	err := db.update(ctx, func(tx Tx) error {
		_, err := db.addBriefVersion(tx, p, st.ID, "rename", testBrief("Version two"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenLink(ctx, group.Token, "g2"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, token, session string
		code                 string
		wantTitle            string
	}{
		{"OK_PersonLinkFirstSession", person.Token, "phone", "", "Version one"},
		{"OK_GroupKeepsStartVersion", group.Token, "g1", "", "Version one"},
		{"OK_GroupNewSessionNewVersion", group.Token, "g2", "", "Version two"},
		{"ErrPersonLinkUnknownSession", person.Token, "laptop", EUNAUTHORIZED, ""},
		{"ErrGroupUnknownSession", group.Token, "g3", EUNAUTHORIZED, ""},
		{"ErrEmptySession", group.Token, "", EUNAUTHORIZED, ""},
		{"ErrSessionOfAnotherLink", group.Token, "phone", EUNAUTHORIZED, ""},
		{"ErrUnknownToken", "nope", "g1", ENOTFOUND, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conv, err := db.FindConversation(ctx, c.token, c.session)
			if ErrorCode(err) != c.code {
				t.Fatalf("got %v, want %q", err, c.code)
			}
			id, err := db.FindSessionInterview(ctx, c.token, c.session)
			if ErrorCode(err) != c.code || id != conv.Interview.ID {
				t.Fatalf("FindSessionInterview: %s %v, want %s %q", id, err, conv.Interview.ID, c.code)
			}
			if c.code == "" && (*conv.Brief.Title != c.wantTitle || conv.Transcript == nil) {
				t.Fatalf("brief %q transcript %v", *conv.Brief.Title, conv.Transcript)
			}
		})
	}
	t.Run("OK_PersonLinkSecondDeviceAfterOpen", func(t *testing.T) {
		if _, err := db.OpenLink(ctx, person.Token, "laptop"); err != nil {
			t.Fatal(err)
		}
		conv, err := db.FindConversation(ctx, person.Token, "laptop")
		if err != nil || conv.Interview.EntryAttributes["plan"] != "pro" || conv.Link.Note != "private" {
			t.Fatalf("%+v %v", conv, err)
		}
	})
	t.Run("FindBriefVersion", func(t *testing.T) {
		bv, err := db.FindBriefVersion(ctx, p, st.ID, 1)
		if err != nil || *bv.Brief.Title != "Version one" {
			t.Fatalf("%+v %v", bv, err)
		}
		for _, v := range []int{0, 3} {
			if _, err := db.FindBriefVersion(ctx, p, st.ID, v); ErrorCode(err) != ENOTFOUND {
				t.Fatalf("version %d: %v", v, err)
			}
		}
		if _, err := db.FindBriefVersion(ctx, Partition{Org: org.ID, Env: EnvLive}, st.ID, 1); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("other partition: %v", err)
		}
	})
}

func TestPeekLink(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Peek", Email: "p@example.com", Credits: 1})
	live := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, live, "Peek")
	person := mustLink(t, db, live, st, LinkRequest{Audience: AudiencePerson})
	count := func() int {
		page, err := db.FindInterviews(ctx, InterviewFilter{Partition: live, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Items)
	}
	t.Run("OK_OpenWouldStartButNothingChanges", func(t *testing.T) {
		got, err := db.PeekLink(ctx, st.LinkToken, "x")
		if err != nil || got.State != LinkOpen || got.Interview != nil || got.Started || count() != 0 {
			t.Fatalf("%+v %v", got, err)
		}
	})
	t.Run("OK_LiveWithCreditSpendsNothing", func(t *testing.T) {
		if _, err := db.SetStudyMode(ctx, live, st.ID, ModeLive); err != nil {
			t.Fatal(err)
		}
		got, err := db.PeekLink(ctx, st.LinkToken, "x")
		if o, _ := db.FindOrgByID(ctx, org.ID); err != nil || got.State != LinkOpen || o.Credits != 1 {
			t.Fatalf("%+v %v credits %d", got, err, o.Credits)
		}
	})
	t.Run("OK_ExistingSessionAndClaimedPersonLink", func(t *testing.T) {
		opened, err := db.OpenLink(ctx, person.Token, "first")
		if err != nil || !opened.Started {
			t.Fatal(err)
		}
		got, err := db.PeekLink(ctx, person.Token, "second")
		if err != nil || got.Interview == nil || got.Interview.ID != opened.Interview.ID {
			t.Fatalf("%+v %v", got, err)
		}
		if _, err := db.FindConversation(ctx, person.Token, "second"); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("peeking must not record the session: %v", err)
		}
	})
	t.Run("OK_NoCreditsUnavailable", func(t *testing.T) {
		got, err := db.PeekLink(ctx, st.LinkToken, "y")
		if err != nil || got.State != LinkUnavailable {
			t.Fatalf("%+v %v", got, err)
		}
	})
	t.Run("OK_PausedAndClosed", func(t *testing.T) {
		for _, m := range []Mode{ModePaused, ModeClosed} {
			if _, err := db.SetStudyMode(ctx, live, st.ID, m); err != nil {
				t.Fatal(err)
			}
			got, err := db.PeekLink(ctx, st.LinkToken, "z")
			if err != nil || got.State != string(m) {
				t.Fatalf("%s: %+v %v", m, got, err)
			}
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		if _, err := db.PeekLink(ctx, "nope", ""); ErrorCode(err) != ENOTFOUND {
			t.Fatal(err)
		}
	})
}
