package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestAppendTurn_PreparedMatchesInCommit applies the same turns to two copies of one
// store, one through the turn prepared outside the commit and one applied inside it,
// and compares the stored interview and transcript byte for byte.
func TestAppendTurn_PreparedMatchesInCommit(t *testing.T) {
	boltOnly(t)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := &fixedClock{now: t0}
	ctx := context.Background()
	dirA := t.TempDir()
	a, err := Open(dirA, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	org := mustOrg(t, a, "prepared")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, a, p, "Prepared")
	opened, err := a.OpenLink(ctx, st.LinkToken, "sess")
	if err != nil || opened.Interview == nil {
		t.Fatal(opened, err)
	}
	id := opened.Interview.ID
	dirB := t.TempDir()
	var copyOf bytes.Buffer
	if err := a.Backup(&copyOf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, FileName), copyOf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dirB, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	turns := []Turn{
		{Messages: []Message{msg(SpeakerInterviewer, "Hello <there> & welcome", t0), msg(SpeakerInterviewer, "Q1?", t0)}, Status: InterviewInProgress, Script: []byte(`{"q":1}`)},
		{Messages: []Message{msg(SpeakerParticipant, "Ça va — \"quoted\"\n", t0.Add(40*time.Second)), msg(SpeakerInterviewer, "Q2?", t0.Add(41*time.Second))}, Status: InterviewInProgress, Script: []byte(`{"q":2}`)},
		{Messages: []Message{msg(SpeakerParticipant, "spoken", t0.Add(900*time.Second))}, Status: InterviewInProgress, Voice: true},
		{Messages: []Message{msg(SpeakerInterviewer, "Thanks", t0.Add(901*time.Second))}, Status: InterviewCompleted},
	}
	n := 0
	for i, turn := range turns {
		turn.Session, turn.ExpectLen = "sess", n
		prep := a.prepareTurn(ctx, p, id, turn)
		if prep == nil {
			t.Fatalf("turn %d: nothing prepared", i)
		}
		ivA, recA, errA := a.appendTurn(ctx, p, id, turn, sha256.Sum256([]byte(turn.Session)), prep)
		ivB, recB, errB := b.appendTurn(ctx, p, id, turn, sha256.Sum256([]byte(turn.Session)), nil)
		if errA != nil || errB != nil {
			t.Fatalf("turn %d: %v / %v", i, errA, errB)
		}
		if !reflect.DeepEqual(ivA, ivB) {
			t.Fatalf("turn %d: returned\n%+v\n%+v", i, ivA, ivB)
		}
		if !bytes.Equal(recA, recB) {
			t.Fatalf("turn %d: records returned differ\n%s\n%s", i, recA, recB)
		}
		n += len(turn.Messages)
	}
	records := func(db *DB) (out [][]byte) {
		_ = db.view(ctx, func(tx Tx) error {
			out = append(out, bytes.Clone(tx.Bucket(bucketInterviews).Get(p.key(id))))
			for i := 0; i < n; i++ {
				out = append(out, bytes.Clone(tx.Bucket(bucketTranscripts).Get(transcriptKey(id, i))))
			}
			return nil
		})
		return out
	}
	ra, rb := records(a), records(b)
	for i := range ra {
		if ra[i] == nil || !bytes.Equal(ra[i], rb[i]) {
			t.Fatalf("record %d differs:\n%s\n%s", i, ra[i], rb[i])
		}
	}
}

// TestAppendTurn_RacingTurnsOneWins sends the same next turn from many goroutines:
// all are prepared on the same interview, exactly one is appended and the others see
// the moved transcript.
func TestAppendTurn_RacingTurnsOneWins(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "raceturns")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Race")
	opened, err := db.OpenLink(ctx, st.LinkToken, "sess")
	if err != nil || opened.Interview == nil {
		t.Fatal(opened, err)
	}
	id := opened.Interview.ID
	const n = 24
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.AppendTurn(ctx, p, id, Turn{Session: "sess", Status: InterviewInProgress,
				Messages: []Message{msg(SpeakerInterviewer, fmt.Sprint("turn ", i), time.Now()), msg(SpeakerInterviewer, "second", time.Now())}})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case ErrorCode(err) != ECONFLICT:
			t.Errorf("turn %d: %v", i, err)
		}
	}
	iv, err := db.FindInterviewByID(ctx, p, id)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := db.FindTranscript(ctx, p, id)
	if won != 1 || iv.TranscriptLen != 2 || len(tr) != 2 {
		t.Fatalf("%d turns appended, transcript_len %d, %d messages stored; want 1, 2, 2", won, iv.TranscriptLen, len(tr))
	}
}
