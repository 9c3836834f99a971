package kv

import (
	"context"
	"strings"
	"testing"
)

// completeInterview answers and ends the interview a session opened through token.
func completeInterview(tb testing.TB, db *DB, token, session string) Interview {
	tb.Helper()
	ctx := context.Background()
	o, err := db.OpenLink(ctx, token, session)
	if err != nil || o.State != LinkOpen {
		tb.Fatalf("open: %+v %v", o.State, err)
	}
	iv := o.Interview
	done, err := db.AppendTurn(ctx, iv.Partition(), iv.ID, Turn{Session: session, ExpectLen: iv.TranscriptLen, Status: InterviewCompleted,
		Messages: []Message{{Speaker: SpeakerParticipant, Text: "Fine.", At: db.Now()}, {Speaker: SpeakerInterviewer, Text: "Thanks!", At: db.Now()}}})
	if err != nil || done.Status != InterviewCompleted {
		tb.Fatalf("complete: %+v %v", done.Status, err)
	}
	return done
}

func statusOf(tb testing.TB, db *DB, p Partition, study ID, token string) LinkStatus {
	tb.Helper()
	ls, err := db.FindLinkStatuses(context.Background(), p, study)
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range ls {
		if l.Token == token {
			if l.ID != LinkIDOf(token) {
				tb.Fatalf("id %s, want the token's", l.ID)
			}
			return l
		}
	}
	tb.Fatalf("link %s not listed", token)
	return LinkStatus{}
}

func TestLinkStatus(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Recruit", Email: "r@example.com", Credits: 100})
	p := Partition{Org: org.ID, Env: EnvLive}

	t.Run("OK_CountsOpenedStartedCompletedPerLink", func(t *testing.T) {
		st := mustStudy(t, db, p, "Counts")
		if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
			t.Fatal(err)
		}
		a := mustLink(t, db, p, st, LinkRequest{Audience: AudienceGroup, Label: "  Enterprise panel  "})
		b := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson, Label: "Dana"})
		if a.Label != "Enterprise panel" {
			t.Fatalf("label %q, want it trimmed", a.Label)
		}
		for range 3 {
			if err := db.CountLinkOpen(ctx, p, st.ID, a.Token); err != nil {
				t.Fatal(err)
			}
		}
		completeInterview(t, db, a.Token, "s1")
		if _, err := db.OpenLink(ctx, a.Token, "s2"); err != nil { // started, not completed
			t.Fatal(err)
		}
		got := statusOf(t, db, p, st.ID, a.Token)
		if got.Stats.Opened != 3 || got.Stats.Started != 2 || got.Stats.Completed != 1 || got.Stats.Progress() != LinkCompleted || got.Stats.LastActivityAt == nil {
			t.Fatalf("group link stats %+v", got.Stats)
		}
		other := statusOf(t, db, p, st.ID, b.Token)
		if other.Stats != (LinkStats{}) || other.Stats.Progress() != LinkUnopened || other.Label != "Dana" {
			t.Fatalf("untouched person link %+v", other)
		}
		if n, _ := db.FindLinkOpens(ctx, p, st.ID); n != 3 {
			t.Fatalf("study funnel opened %d, want 3 (the per-link count adds to it)", n)
		}
	})

	t.Run("OK_RehearsalsAreNotCounted", func(t *testing.T) {
		st := mustStudy(t, db, p, "Rehearse")
		l := mustLink(t, db, p, st, LinkRequest{Audience: AudienceGroup})
		completeInterview(t, db, l.Token, "r1")
		if got := statusOf(t, db, p, st.ID, l.Token); got.Stats.Started != 0 || got.Stats.Completed != 0 {
			t.Fatalf("rehearsal counted: %+v", got.Stats)
		}
	})

	t.Run("OK_DisableShowsClosedAndKeepsInterviewsUnderWay", func(t *testing.T) {
		st := mustStudy(t, db, p, "Disable")
		db.SetStudyMode(ctx, p, st.ID, ModeLive)
		person := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson})
		group := mustLink(t, db, p, st, LinkRequest{Audience: AudienceGroup})
		first, err := db.OpenLink(ctx, person.Token, "owner")
		if err != nil || !first.Started {
			t.Fatalf("%+v %v", first, err)
		}
		under, _ := db.OpenLink(ctx, group.Token, "g1")
		yes, no := true, false
		for _, l := range []Link{person, group} {
			got, err := db.UpdateParticipantLink(ctx, p, st.ID, LinkIDOf(l.Token), LinkPatch{Disabled: &yes})
			if err != nil || !got.Disabled || got.DisabledAt == nil {
				t.Fatalf("disable: %+v %v", got, err)
			}
		}
		if o, _ := db.OpenLink(ctx, group.Token, "new"); o.State != LinkClosed || o.Interview != nil {
			t.Fatalf("a new visitor of a disabled group link: %+v", o.State)
		}
		if o, _ := db.ResumeLinkOpening(ctx, group.Token, "", "fresh-session", nil); o.State != LinkClosed {
			t.Fatalf("a fresh open of a disabled group link: %+v", o.State)
		}
		if o, _ := db.OpenLink(ctx, person.Token, "stranger"); o.State != LinkClosed || o.Interview != nil {
			t.Fatalf("another browser on a disabled person link: %+v", o.State)
		}
		if o, _ := db.OpenLink(ctx, person.Token, "owner"); o.State != LinkOpen || o.Interview.ID != first.Interview.ID {
			t.Fatalf("the person's own browser must continue: %+v", o.State)
		}
		if o, _ := db.OpenLink(ctx, group.Token, "g1"); o.State != LinkOpen || o.Interview.ID != under.Interview.ID {
			t.Fatalf("an interview under way must continue: %+v", o.State)
		}
		got, err := db.UpdateParticipantLink(ctx, p, st.ID, LinkIDOf(group.Token), LinkPatch{Disabled: &no})
		if err != nil || got.Disabled || got.DisabledAt != nil {
			t.Fatalf("enable: %+v %v", got, err)
		}
		if o, _ := db.OpenLink(ctx, group.Token, "new"); o.State != LinkOpen || !o.Started {
			t.Fatalf("re-enabled link: %+v", o.State)
		}
	})

	t.Run("ErrInvalid_LabelAndNotFound", func(t *testing.T) {
		st := mustStudy(t, db, p, "Bad")
		l := mustLink(t, db, p, st, LinkRequest{})
		long := strings.Repeat("é", LinkLabelMaxChars+1)
		if _, err := db.UpdateParticipantLink(ctx, p, st.ID, LinkIDOf(l.Token), LinkPatch{Label: &long}); ErrorCode(err) != EINVALID {
			t.Fatalf("long label: %v", err)
		}
		bad := "two\nlines"
		if _, err := db.UpdateParticipantLink(ctx, p, st.ID, LinkIDOf(l.Token), LinkPatch{Label: &bad}); ErrorCode(err) != EINVALID {
			t.Fatalf("control character: %v", err)
		}
		if _, err := ValidateLinkRequest(LinkRequest{Label: long}); ErrorCode(err) != EINVALID {
			t.Fatalf("create with a long label: %v", err)
		}
		other := Partition{Org: org.ID, Env: EnvTest}
		ok := "x"
		if _, err := db.UpdateParticipantLink(ctx, other, st.ID, LinkIDOf(l.Token), LinkPatch{Label: &ok}); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("another partition: %v", err)
		}
		if _, err := db.UpdateParticipantLink(ctx, p, st.ID, NewV4(), LinkPatch{Label: &ok}); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("unknown link: %v", err)
		}
	})

	t.Run("OK_BatchIsOneTransaction", func(t *testing.T) {
		st := mustStudy(t, db, p, "Batch")
		reqs := make([]LinkRequest, 3)
		tokens := make([]string, 3)
		for i := range reqs {
			reqs[i] = LinkRequest{Audience: AudiencePerson, Label: "P" + string(rune('1'+i)), Context: map[string]string{"tier": "gold"}}
			tokens[i] = NewLinkToken()
		}
		ls, err := db.CreateParticipantLinks(ctx, p, st.ID, reqs, tokens, nil)
		if err != nil || len(ls) != 3 || ls[2].Label != "P3" || ls[0].Context["tier"] != "gold" {
			t.Fatalf("%+v %v", ls, err)
		}
		reqs[0].Label = "never stored"
		tokens = []string{NewLinkToken(), NewLinkToken(), tokens[2]} // the last collides: nothing is stored
		if _, err := db.CreateParticipantLinks(ctx, p, st.ID, reqs, tokens, nil); err == nil {
			t.Fatal("a batch with a repeated token was stored")
		}
		all, _ := db.FindLinkStatuses(ctx, p, st.ID)
		if len(all) != 3 {
			t.Fatalf("%d links after a failed batch, want the first batch's 3", len(all))
		}
		if _, err := db.CreateParticipantLinks(ctx, p, st.ID, make([]LinkRequest, LinksBatchMax+1), make([]string, LinksBatchMax+1), nil); ErrorCode(err) != EINVALID {
			t.Fatalf("over the batch limit: %v", err)
		}
	})
}

func TestStudyQuota(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Quota", Email: "q@example.com", Credits: 100})
	p := Partition{Org: org.ID, Env: EnvLive}

	t.Run("OK_PausesWhenReached", func(t *testing.T) {
		st := mustStudy(t, db, p, "Q")
		db.SetStudyMode(ctx, p, st.ID, ModeLive)
		completeInterview(t, db, st.LinkToken, "before") // counted when the quota is set
		q, after, err := db.SetStudyQuota(ctx, p, st.ID, 3)
		if err != nil || q.Quota != 3 || q.Completed != 1 || q.Reached() || after.Mode != ModeLive {
			t.Fatalf("%+v %s %v", q, after.Mode, err)
		}
		completeInterview(t, db, st.LinkToken, "two")
		third, _ := db.OpenLink(ctx, st.LinkToken, "three")
		late, _ := db.OpenLink(ctx, st.LinkToken, "late") // under way when the quota is met
		if _, err := db.AppendTurn(ctx, p, third.Interview.ID, Turn{Session: "three", Status: InterviewCompleted,
			Messages: []Message{{Speaker: SpeakerParticipant, Text: "ok", At: db.Now()}}}); err != nil {
			t.Fatal(err)
		}
		got, _ := db.FindStudyByID(ctx, p, st.ID)
		q, _ = db.FindStudyQuota(ctx, p, st.ID)
		if got.Mode != ModePaused || !q.Reached() || q.ReachedAt == nil || q.Completed != 3 {
			t.Fatalf("mode %s quota %+v", got.Mode, q)
		}
		if o, _ := db.OpenLink(ctx, st.LinkToken, "new"); o.State != LinkPaused {
			t.Fatalf("a new participant after the quota: %s", o.State)
		}
		if o, _ := db.OpenLink(ctx, st.LinkToken, "late"); o.State != LinkOpen || o.Interview.ID != late.Interview.ID {
			t.Fatal("an interview under way continues after the quota")
		}
		q, _, err = db.SetStudyQuota(ctx, p, st.ID, 10)
		if err != nil || q.Reached() || q.ReachedAt != nil {
			t.Fatalf("raised quota %+v %v", q, err)
		}
	})

	t.Run("OK_QuotaAlreadyMetPausesAtOnce", func(t *testing.T) {
		st := mustStudy(t, db, p, "Met")
		db.SetStudyMode(ctx, p, st.ID, ModeLive)
		completeInterview(t, db, st.LinkToken, "a")
		q, after, err := db.SetStudyQuota(ctx, p, st.ID, 1)
		if err != nil || !q.Reached() || after.Mode != ModePaused {
			t.Fatalf("%+v %s %v", q, after.Mode, err)
		}
	})

	t.Run("ErrInvalid_Range", func(t *testing.T) {
		st := mustStudy(t, db, p, "Range")
		for _, n := range []int{-1, StudyQuotaMax + 1} {
			if _, _, err := db.SetStudyQuota(ctx, p, st.ID, n); ErrorCode(err) != EINVALID {
				t.Fatalf("%d: %v", n, err)
			}
		}
		if _, _, err := db.SetStudyQuota(ctx, Partition{Org: org.ID, Env: EnvTest}, st.ID, 3); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("another partition: %v", err)
		}
	})
}
