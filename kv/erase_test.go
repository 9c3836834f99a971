package kv

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable clock for tests.
type clock struct{ t atomic.Int64 }

func newClock(t time.Time) *clock    { c := &clock{}; c.t.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.t.Load()).UTC() }
func (c *clock) add(d time.Duration) { c.t.Add(int64(d)) }

// mustInterview opens a live link with session and has the participant answer once,
// completing the interview when complete is set.
func mustInterview(tb testing.TB, db *DB, st Study, session string, complete bool) Interview {
	tb.Helper()
	ctx := context.Background()
	o, err := db.OpenLink(ctx, st.LinkToken, session)
	if err != nil || o.Interview == nil {
		tb.Fatalf("open link: %+v %v", o, err)
	}
	status := InterviewInProgress
	if complete {
		status = InterviewCompleted
	}
	iv, err := db.AppendTurn(ctx, o.Interview.Partition(), o.Interview.ID, Turn{Session: session, Status: status, Messages: []Message{
		{Speaker: SpeakerInterviewer, Text: "Why?", At: db.Now()},
		{Speaker: SpeakerParticipant, Text: "My name is " + session, At: db.Now()},
	}})
	if err != nil {
		tb.Fatalf("append turn: %v", err)
	}
	return iv
}

// mustArtifact records a finished export of st holding ivs, with its file on disk.
func mustArtifact(tb testing.TB, db *DB, p Partition, st Study, ivs ...Interview) (Job, string) {
	tb.Helper()
	ctx := context.Background()
	j, err := db.CreateExportJob(ctx, ExportInput{Partition: p, JobID: db.NewID(), StudyID: st.ID, Format: "csv"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	rel := filepath.Join("exports", j.ID.String()+".csv")
	if err := os.MkdirAll(filepath.Join(db.BlobDir(), "exports"), 0o700); err != nil {
		tb.Fatal(err)
	}
	ids := []ID{}
	body := "id\n"
	for _, iv := range ivs {
		ids = append(ids, iv.ID)
		body += iv.ID.String() + "\n"
	}
	if err := os.WriteFile(filepath.Join(db.BlobDir(), rel), []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := db.FinishExport(ctx, p, j.ID, ExportResult{Blob: rel, Rows: len(ivs), Interviews: ids, ExpiresAt: db.Now().Add(ExportArtifactTTL)}); err != nil {
		tb.Fatal(err)
	}
	return j, rel
}

func liveStudy(tb testing.TB, db *DB, p Partition, title string) Study {
	tb.Helper()
	st := mustStudy(tb, db, p, title)
	if _, err := db.SetStudyMode(context.Background(), p, st.ID, ModeLive); err != nil {
		tb.Fatal(err)
	}
	return st
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestEraseInterview(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Erase", Email: "e@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "E")
	gone := mustInterview(t, db, st, "alice", true)
	kept := mustInterview(t, db, st, "bob", true)
	both, bothFile := mustArtifact(t, db, p, st, gone, kept)
	other, otherFile := mustArtifact(t, db, p, st, kept)

	rc, err := db.EraseInterview(ctx, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Interview || rc.InterviewID != gone.ID || rc.OrgID != org.ID || rc.Environment != EnvLive || rc.TranscriptMessages != 2 ||
		rc.Sessions != 2 || len(rc.ExportArtifacts) != 1 || rc.ExportArtifacts[0].JobID != both.ID || rc.ErasedAt.IsZero() {
		t.Fatalf("receipt %+v", rc)
	}
	if _, err := db.FindInterviewByID(ctx, p, gone.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("erased interview still found: %v", err)
	}
	if _, err := db.FindConversation(ctx, st.LinkToken, "alice"); err == nil {
		t.Fatal("the erased interview's session still reaches a conversation")
	}
	if n := countPrefix(t, db, bucketTranscripts, gone.ID[:]); n != 0 {
		t.Fatalf("%d transcript messages of the erased interview remain", n)
	}
	if n := countPrefix(t, db, bucketTranscripts, kept.ID[:]); n != 2 {
		t.Fatalf("the other interview has %d messages, want 2", n)
	}
	if exists(filepath.Join(db.BlobDir(), bothFile)) {
		t.Fatal("the artifact holding the erased interview is still on disk")
	}
	if r, ok := mustJob(t, db, p, both.ID).ExportResult(); !ok || r.Blob != "" {
		t.Fatalf("the erased artifact is still downloadable: %+v", r)
	}
	if !exists(filepath.Join(db.BlobDir(), otherFile)) {
		t.Fatal("an artifact without the erased interview was deleted")
	}
	if conv, err := db.FindConversation(ctx, st.LinkToken, "bob"); err != nil || len(conv.Transcript) != 2 {
		t.Fatalf("another participant's interview was touched: %v", err)
	}
	if r, _ := mustJob(t, db, p, other.ID).ExportResult(); r.Blob == "" {
		t.Fatal("the other artifact lost its file")
	}
	if _, err := db.EraseInterview(ctx, gone.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("erasing twice: %v", err)
	}
}

func countPrefix(tb testing.TB, db *DB, bucket, prefix []byte) int {
	tb.Helper()
	n := 0
	err := db.view(context.Background(), func(tx Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func mustJob(tb testing.TB, db *DB, p Partition, id ID) Job {
	tb.Helper()
	j, err := db.FindJobByID(context.Background(), p, JobExport, id)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

func TestEraseInterviewLegacyArtifactAndRace(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Legacy", Email: "l@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "L")
	iv := mustInterview(t, db, st, "carol", true)
	rehearsalStudy := mustStudy(t, db, p, "R")

	t.Run("OK_ArtifactWithoutListCountsAsHolding", func(t *testing.T) {
		j, rel := mustArtifact(t, db, p, st, iv)
		// An artifact from before artifacts listed their interviews.
		err := db.update(context.Background(), func(tx Tx) error {
			j := mustJob(t, db, p, j.ID)
			j.Output = []byte(`{"blob":"` + rel + `","rows":1}`)
			return putJSON(tx.Bucket(bucketJobs), p.key(j.ID), j)
		})
		if err != nil {
			t.Fatal(err)
		}
		unrelated, unrelatedFile := mustArtifact(t, db, p, rehearsalStudy)
		rc, err := db.EraseInterview(ctx, iv.ID)
		if err != nil || len(rc.ExportArtifacts) != 1 || rc.ExportArtifacts[0].JobID != j.ID {
			t.Fatalf("%+v %v", rc, err)
		}
		if exists(filepath.Join(db.BlobDir(), rel)) || !exists(filepath.Join(db.BlobDir(), unrelatedFile)) {
			t.Fatal("wrong artifacts deleted")
		}
		_ = unrelated
	})
	t.Run("ErrExportFinishedAfterErasure", func(t *testing.T) {
		iv := mustInterview(t, db, st, "dave", true)
		j, err := db.CreateExportJob(ctx, ExportInput{Partition: p, JobID: db.NewID(), StudyID: st.ID, Format: "csv"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.EraseInterview(ctx, iv.ID); err != nil {
			t.Fatal(err)
		}
		err = db.FinishExport(ctx, p, j.ID, ExportResult{Blob: "exports/x.csv", Interviews: []ID{iv.ID}})
		if ke, ok := err.(*Error); !ok || ke.Reason != "interview_erased" {
			t.Fatalf("an export built before the erasure was recorded: %v", err)
		}
	})
}

func TestSweepOrphanExports(t *testing.T) {
	c := newClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Orphan", Email: "o@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "O")
	_, kept := mustArtifact(t, db, p, st)
	orphan := filepath.Join(db.BlobDir(), "exports", "orphan.csv")
	if err := os.WriteFile(orphan, []byte("words"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := c.now().Add(-2 * time.Hour)
	for _, f := range []string{orphan, filepath.Join(db.BlobDir(), kept)} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(db.BlobDir(), "exports", "fresh.csv")
	if err := os.WriteFile(fresh, []byte("words"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(fresh, c.now(), c.now()); err != nil {
		t.Fatal(err)
	}
	n, err := db.SweepOrphanExports(ctx)
	if err != nil || n != 1 || exists(orphan) || !exists(fresh) || !exists(filepath.Join(db.BlobDir(), kept)) {
		t.Fatalf("swept %d %v; orphan %v fresh %v", n, err, exists(orphan), exists(fresh))
	}
}

func TestEraseInterviewPersonLink(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Person", Email: "p@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "P")
	l := mustLink(t, db, p, st, LinkRequest{Audience: AudiencePerson, Context: map[string]string{"crm_id": "C-9"}, Note: "Frank runs the Leeds bakery"})
	o, err := db.OpenLink(ctx, l.Token, "frank")
	if err != nil || !o.Started {
		t.Fatalf("%+v %v", o, err)
	}
	rc, err := db.EraseInterview(ctx, o.Interview.ID)
	if err != nil || rc.Sessions != 1 || rc.LinksScrubbed != 1 {
		t.Fatalf("%+v %v", rc, err)
	}
	// The context written about the person goes with the interview.
	if kept, err := db.FindLinkByToken(ctx, l.Token); err != nil || kept.Context != nil || kept.Note != "" || kept.InterviewID == nil {
		t.Fatalf("person link after erasure: %+v %v", kept, err)
	}
	// The link stays used: no new interview (and no credit) from it.
	if _, err := db.OpenLink(ctx, l.Token, "frank"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("reopening an erased person link: %v", err)
	}
	if o, _ := db.FindOrgByID(ctx, org.ID); o.Credits != 9 {
		t.Fatalf("credits %d", o.Credits)
	}
}
