package kv

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestSweepRetention(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	keep, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Keeps", Email: "k@example.com", Credits: 10})
	trim, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Trims", Email: "t@example.com", Credits: 10})
	kp := Partition{Org: keep.ID, Env: EnvLive}
	tp := Partition{Org: trim.ID, Env: EnvLive}
	tt := Partition{Org: trim.ID, Env: EnvTest}
	kst, tst, rst := liveStudy(t, db, kp, "K"), liveStudy(t, db, tp, "T"), mustStudy(t, db, tt, "R")

	if _, err := db.SetRetention(ctx, trim.ID, -1); ErrorCode(err) != EINVALID {
		t.Fatalf("negative days: %v", err)
	}
	if _, err := db.SetRetention(ctx, db.NewID(), 30); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("unknown org: %v", err)
	}
	if o, err := db.SetRetention(ctx, trim.ID, 30); err != nil || o.RetentionDays != 30 {
		t.Fatalf("%+v %v", o, err)
	}

	// Day 0: old interviews in both organisations, a rehearsal, and artifacts.
	oldKeep := mustInterview(t, db, kst, "k-old", true)
	oldTrim := mustInterview(t, db, tst, "t-old", true)
	oldRehearsal := mustInterview(t, db, rst, "r-old", false)
	_, oldKeepFile := mustArtifact(t, db, kp, kst, oldKeep)
	_, oldTrimFile := mustArtifact(t, db, tp, tst, oldTrim)
	_, emptyOldFile := mustArtifact(t, db, tp, tst)

	// Day 20: a newer interview; day 25: an artifact holding the old and the new one.
	c.add(20 * 24 * time.Hour)
	newTrim := mustInterview(t, db, tst, "t-new", true)
	c.add(5 * 24 * time.Hour)
	_, mixedFile := mustArtifact(t, db, tp, tst, oldTrim, newTrim)
	_, newOnlyFile := mustArtifact(t, db, tp, tst, newTrim)

	// Day 29: nothing is older than 30 days yet.
	c.add(4 * 24 * time.Hour)
	if sw, err := db.SweepRetention(ctx); err != nil || sw.Interviews != 0 || len(sw.ExportArtifacts) != 0 {
		t.Fatalf("early sweep deleted %+v %v", sw, err)
	}

	// Day 31: the day-0 interviews and artifacts of the trimming organisation go, with
	// the day-25 artifact that holds the old interview.
	c.add(2 * 24 * time.Hour)
	sw, err := db.SweepRetention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Interviews != 2 || sw.TranscriptMessages != 4 || len(sw.ExportArtifacts) != 3 || len(sw.FilesNotRemoved) != 0 {
		t.Fatalf("sweep %+v", sw)
	}
	for _, iv := range []Interview{oldTrim, oldRehearsal} {
		if _, err := db.FindInterviewByID(ctx, iv.Partition(), iv.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("interview %s outlived retention: %v", iv.ID, err)
		}
		if n := countPrefix(t, db, bucketTranscripts, iv.ID[:]); n != 0 {
			t.Fatalf("%d transcript messages outlived retention", n)
		}
	}
	for _, f := range []string{oldTrimFile, emptyOldFile, mixedFile} {
		if exists(filepath.Join(db.BlobDir(), f)) {
			t.Fatalf("artifact %s outlived retention", f)
		}
	}
	for _, f := range []string{oldKeepFile, newOnlyFile} {
		if !exists(filepath.Join(db.BlobDir(), f)) {
			t.Fatalf("artifact %s was deleted", f)
		}
	}
	for _, iv := range []Interview{oldKeep, newTrim} {
		if _, err := db.FindInterviewByID(ctx, iv.Partition(), iv.ID); err != nil {
			t.Fatalf("interview %s was deleted: %v", iv.ID, err)
		}
	}

	// Turning retention off keeps everything from then on.
	if _, err := db.SetRetention(ctx, trim.ID, 0); err != nil {
		t.Fatal(err)
	}
	c.add(365 * 24 * time.Hour)
	if sw, err := db.SweepRetention(ctx); err != nil || sw.Interviews != 0 {
		t.Fatalf("retention off still swept %+v %v", sw, err)
	}
}

func TestSweepRetentionBatches(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Many", Email: "m@example.com"})
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "M")
	const n = retentionBatch + 7
	for i := 0; i < n; i++ {
		mustInterview(t, db, st, "s"+itoa(i), i%2 == 0)
	}
	if _, err := db.SetRetention(ctx, org.ID, 1); err != nil {
		t.Fatal(err)
	}
	c.add(48 * time.Hour)
	sw, err := db.SweepRetention(ctx)
	if err != nil || sw.Interviews != n {
		t.Fatalf("swept %d of %d: %v", sw.Interviews, n, err)
	}
	if k := countPrefix(t, db, bucketInterviews, p.prefix()); k != 0 {
		t.Fatalf("%d interviews left", k)
	}
}

// The sweep chooses candidates in a read transaction; the write deletes only those still
// past the cut-off, so an answer given in between keeps the interview.
func TestSweepRetentionRechecksCandidates(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, OrgInput{Name: "Recheck", Email: "r@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "R")
	iv := mustInterview(t, db, st, "session-recheck-1", false)
	cutoffs := map[ID]time.Time{org.ID: c.now().Add(time.Hour)}
	err = db.view(ctx, func(tx Tx) error {
		got, err := stillExpired(tx, []Interview{iv}, cutoffs)
		if err == nil && len(got) != 1 {
			t.Errorf("before the answer: %d still expired, want 1", len(got))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c.add(2 * time.Hour)
	if _, err := db.AppendTurn(ctx, p, iv.ID, Turn{Session: "session-recheck-1", ExpectLen: 2, Status: InterviewInProgress, Messages: []Message{
		{Speaker: SpeakerParticipant, Text: "One more thing.", At: c.now()},
	}}); err != nil {
		t.Fatal(err)
	}
	err = db.view(ctx, func(tx Tx) error {
		got, err := stillExpired(tx, []Interview{iv}, cutoffs)
		if err == nil && len(got) != 0 {
			t.Errorf("after the answer: %d still expired, want 0", len(got))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
