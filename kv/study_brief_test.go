package kv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// editedBrief is a valid brief that differs from testBrief's in every part.
func editedBrief(title string) Brief {
	minutes := 25
	return Brief{Title: &title, Objectives: []string{"Learn why people leave", "Learn what they use instead"},
		PreInterviewQuestions: []string{"Do you run a team?"}, VerbatimQuestions: []string{"Tell me about the last time you planned a week.", "What got in the way?"},
		EstimatedDurationMinutes: &minutes}
}

// TestEditBrief: an edit is the study's next design version, like a refine's, with the
// version before it kept as it was; the study's name follows the title; an edit that
// changes nothing saves nothing.
func TestEditBrief(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "edit").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Checkout")

	// Text as a person types it: surrounding space goes, line breaks inside an item stay.
	typed := editedBrief("  Weekly planning \n")
	typed.VerbatimQuestions[1] = "\tWhat got in the way?\nAnd what helped?  "
	saved, changed, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: typed})
	if err != nil || !changed {
		t.Fatalf("edit: changed %v, %v", changed, err)
	}
	want := editedBrief("Weekly planning")
	want.VerbatimQuestions[1] = "What got in the way?\nAnd what helped?"
	if saved.Version != 2 || saved.Name != "Weekly planning" || !saved.Brief.Equal(want) || saved.UpdatedAt.Before(st.UpdatedAt) {
		t.Fatalf("saved study %+v brief %+v", saved, saved.Brief)
	}
	got, err := db.FindStudyByID(ctx, p, st.ID)
	if err != nil || got.Version != 2 || !got.Brief.Equal(want) {
		t.Fatalf("stored study %+v %v", got, err)
	}
	versions, err := db.FindBriefVersions(ctx, p, st.ID)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions %+v %v", versions, err)
	}
	if v := versions[0]; v.Version != 1 || v.Source != BriefAuthored || !v.Brief.Equal(testBrief("Checkout")) {
		t.Fatalf("version 1 changed: %+v", v)
	}
	if v := versions[1]; v.Version != 2 || v.Source != BriefEdited || v.Guidance != "" || !v.Brief.Equal(want) {
		t.Fatalf("version 2 %+v", v)
	}

	t.Run("OK_UnchangedSavesNothing", func(t *testing.T) {
		again, changed, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: want})
		if err != nil || changed || again.Version != 2 || !again.UpdatedAt.Equal(got.UpdatedAt) {
			t.Fatalf("unchanged edit: %+v changed %v %v", again, changed, err)
		}
		if vs, _ := db.FindBriefVersions(ctx, p, st.ID); len(vs) != 2 {
			t.Fatalf("%d versions after an edit that changed nothing", len(vs))
		}
	})
	t.Run("OK_ReorderIsAChange", func(t *testing.T) {
		swapped := want
		swapped.VerbatimQuestions = []string{want.VerbatimQuestions[1], want.VerbatimQuestions[0]}
		after, changed, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: swapped})
		if err != nil || !changed || after.Version != 3 || after.Brief.VerbatimQuestions[0] != want.VerbatimQuestions[1] {
			t.Fatalf("reorder: %+v changed %v %v", after, changed, err)
		}
	})
	t.Run("ErrNotFound_OtherPartition", func(t *testing.T) {
		other := Partition{Org: mustOrg(t, db, "other").ID, Env: EnvLive}
		for _, q := range []Partition{other, {Org: p.Org, Env: EnvTest}} {
			if _, _, err := db.EditBrief(ctx, BriefEdit{Partition: q, StudyID: st.ID, Brief: want}); ErrorCode(err) != ENOTFOUND {
				t.Errorf("partition %+v: %v, want ENOTFOUND", q, err)
			}
		}
	})
}

// TestEditBriefModes: a closed study refuses edits; a live or paused one takes them,
// and an interview that started before keeps its version while a new one gets the
// edit. A stale base version is refused with nothing saved.
func TestEditBriefModes(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "modes").ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Version one")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	group := mustLink(t, db, p, st, LinkRequest{Audience: AudienceGroup})
	if _, err := db.OpenLink(ctx, group.Token, "before"); err != nil {
		t.Fatal(err)
	}
	live, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Version two"), BaseVersion: 1})
	if err != nil || live.Version != 2 || live.Mode != ModeLive {
		t.Fatalf("edit of a live study: %+v %v", live, err)
	}
	if _, err := db.OpenLink(ctx, group.Token, "after"); err != nil {
		t.Fatal(err)
	}
	for session, title := range map[string]string{"before": "Version one", "after": "Version two"} {
		conv, err := db.FindConversation(ctx, group.Token, session)
		if err != nil || *conv.Brief.Title != title {
			t.Fatalf("interview %s: brief %q %v, want %q", session, *conv.Brief.Title, err, title)
		}
	}

	t.Run("ErrBriefChanged", func(t *testing.T) {
		_, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Stale"), BaseVersion: 1})
		var ke *Error
		if ErrorCode(err) != ECONFLICT || !asError(err, &ke) || ke.Reason != "brief_changed" {
			t.Fatalf("edit from version 1 of a study at version 2: %v", err)
		}
		if got, _ := db.FindStudyByID(ctx, p, st.ID); got.Version != 2 || got.Name != "Version two" {
			t.Fatalf("a refused edit changed the study: %+v", got)
		}
	})
	t.Run("OK_Paused", func(t *testing.T) {
		if _, err := db.SetStudyMode(ctx, p, st.ID, ModePaused); err != nil {
			t.Fatal(err)
		}
		if got, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Paused edit")}); err != nil || got.Version != 3 {
			t.Fatalf("edit of a paused study: %+v %v", got, err)
		}
	})
	t.Run("ErrClosed", func(t *testing.T) {
		if _, err := db.SetStudyMode(ctx, p, st.ID, ModeClosed); err != nil {
			t.Fatal(err)
		}
		_, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Closed edit")})
		var ke *Error
		if ErrorCode(err) != ECONFLICT || !asError(err, &ke) || ke.Reason != "study_closed" {
			t.Fatalf("edit of a closed study: %v", err)
		}
		if vs, _ := db.FindBriefVersions(ctx, p, st.ID); len(vs) != 3 {
			t.Fatalf("%d versions after a refused edit, want 3", len(vs))
		}
		if _, err := db.SetStudyMode(ctx, p, st.ID, ModeTest); err != nil {
			t.Fatal(err)
		}
		if got, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Reopened edit")}); err != nil || got.Version != 4 {
			t.Fatalf("edit once reopened: %+v %v", got, err)
		}
	})
}

// TestEditBriefOneTransaction: the new version, the study and the idempotency record
// are one transaction. A replayable record exists exactly when the edit committed; an
// edit whose idempotency record cannot be written leaves no version behind; and
// readers running beside a stream of edits never see a study whose current version
// lacks its version record or its request's record.
func TestEditBriefOneTransaction(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "tx").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Atomic")
	idemFor := func(key string) func(Study) *IdemWrite {
		return func(s Study) *IdemWrite {
			return &IdemWrite{Partition: p, Key: key, Fingerprint: [32]byte{1}, Output: []byte(fmt.Sprintf(`{"version":%d}`, s.Version))}
		}
	}
	claim := func(t *testing.T, key string) (IdemOutcome, string) {
		t.Helper()
		out, stored, err := db.ClaimIdem(ctx, p, key, [32]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		return out, string(stored)
	}

	t.Run("OK_RecordWithTheVersion", func(t *testing.T) {
		if out, _ := claim(t, "edit-1"); out != IdemClaimed {
			t.Fatalf("first claim: %v", out)
		}
		saved, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Two"), Idem: idemFor("edit-1")})
		if err != nil || saved.Version != 2 {
			t.Fatalf("edit: %+v %v", saved, err)
		}
		if out, body := claim(t, "edit-1"); out != IdemReplay || body != `{"version":2}` {
			t.Fatalf("after the edit: %v %s, want a replay of version 2", out, body)
		}
	})
	t.Run("ErrRefusedEditRecordsNothing", func(t *testing.T) {
		if out, _ := claim(t, "edit-bad"); out != IdemClaimed {
			t.Fatalf("claim: %v", out)
		}
		bad := editedBrief("")
		if _, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: bad, Idem: idemFor("edit-bad")}); ErrorCode(err) != EINVALID {
			t.Fatalf("untitled edit: %v", err)
		}
		if out, _ := claim(t, "edit-bad"); out != IdemInFlight {
			t.Fatalf("a refused edit finished its idempotency record: %v", out)
		}
	})
	t.Run("ErrRecordFailsNoVersion", func(t *testing.T) {
		// A key no engine can store (bbolt keys stop at 32 KiB, PostgreSQL index rows
		// at a few KiB): the record's write fails after the version's.
		raw := make([]byte, 20000)
		if _, err := rand.Read(raw); err != nil {
			t.Fatal(err)
		}
		huge := hex.EncodeToString(raw)
		_, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief("Never saved"), Idem: idemFor(huge)})
		if err == nil {
			t.Fatal("an edit whose idempotency record cannot be stored succeeded")
		}
		got, err := db.FindStudyByID(ctx, p, st.ID)
		if err != nil || got.Version != 2 || got.Name != "Two" {
			t.Fatalf("the study after a failed edit: %+v %v", got, err)
		}
		if vs, err := db.FindBriefVersions(ctx, p, st.ID); err != nil || len(vs) != 2 {
			t.Fatalf("%d versions after a failed edit (%v), want 2", len(vs), err)
		}
	})
	t.Run("OK_ReadersSeeWholeEdits", func(t *testing.T) {
		const edits = 20
		base := 2
		stop := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					err := db.view(ctx, func(tx Tx) error {
						s, err := studyByID(tx, p, st.ID)
						if err != nil {
							return err
						}
						v, err := briefVersion(tx, p, st.ID, s.Version)
						if err != nil {
							return fmt.Errorf("study at version %d without its version record: %w", s.Version, err)
						}
						if !v.Brief.Equal(*s.Brief) {
							return fmt.Errorf("version %d record and study brief differ", s.Version)
						}
						if _, err := briefVersion(tx, p, st.ID, s.Version+1); ErrorCode(err) != ENOTFOUND {
							return fmt.Errorf("version %d stored beyond the study's %d", s.Version+1, s.Version)
						}
						if s.Version > base {
							var rec idemRecord
							ok, err := getJSON(tx.Bucket(bucketIdempotency), idemKey(p, fmt.Sprintf("stream-%d", s.Version)), &rec)
							if err != nil || !ok || !rec.Done {
								return fmt.Errorf("study at version %d without its request's record (%v, %v)", s.Version, ok, err)
							}
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for i := 1; i <= edits; i++ {
			key := fmt.Sprintf("stream-%d", base+i)
			if _, _, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief(fmt.Sprintf("Edit %d", i)), Idem: idemFor(key)}); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

// TestEditBriefConcurrent: edits racing each other each get their own version, with no
// version lost or given twice.
func TestEditBriefConcurrent(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "race").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Race")
	const n = 12
	var wg sync.WaitGroup
	got := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, changed, err := db.EditBrief(ctx, BriefEdit{Partition: p, StudyID: st.ID, Brief: editedBrief(fmt.Sprintf("Racer %d", i))})
			if err != nil || !changed {
				t.Errorf("racer %d: changed %v, %v", i, changed, err)
				return
			}
			got <- s.Version
		}()
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for v := range got {
		if seen[v] {
			t.Fatalf("version %d given twice", v)
		}
		seen[v] = true
	}
	vs, err := db.FindBriefVersions(ctx, p, st.ID)
	if err != nil || len(vs) != n+1 {
		t.Fatalf("%d versions (%v), want %d", len(vs), err, n+1)
	}
	for i, v := range vs {
		if v.Version != i+1 || (i > 0 && !seen[v.Version]) {
			t.Fatalf("version record %d is %d", i, v.Version)
		}
	}
}

// TestValidateBrief: every limit refuses at its field, by its place in a list, and
// the limits themselves pass.
func TestValidateBrief(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	many := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s %d?", s, i)
		}
		return out
	}
	ok := editedBrief("Fine")
	with := func(change func(*Brief)) Brief {
		b := ok
		b.Objectives = append([]string(nil), ok.Objectives...)
		b.PreInterviewQuestions = append([]string(nil), ok.PreInterviewQuestions...)
		b.VerbatimQuestions = append([]string(nil), ok.VerbatimQuestions...)
		change(&b)
		return b
	}
	cases := []struct {
		name  string
		brief Brief
		want  []FieldError // loc and type only
	}{
		{"OK_AtTheLimits", with(func(b *Brief) {
			b.Title = str(strings.Repeat("é", BriefMaxTitle))
			b.Objectives = many(BriefMaxObjectives, "o")
			b.PreInterviewQuestions = many(BriefMaxQuestions, "s")
			b.VerbatimQuestions = append(many(BriefMaxQuestions-1, "v"), strings.Repeat("x", BriefMaxItem-3)+"\n\t?")
			b.EstimatedDurationMinutes = num(BriefMaxDuration)
		}), nil},
		{"OK_NoScreenerNoDuration", with(func(b *Brief) { b.PreInterviewQuestions, b.EstimatedDurationMinutes = nil, nil }), nil},
		{"OK_OneMinute", with(func(b *Brief) { b.EstimatedDurationMinutes = num(1) }), nil},
		{"ErrTitleMissing", with(func(b *Brief) { b.Title = nil }), []FieldError{{Loc: []any{"title"}, Type: "string_too_short"}}},
		{"ErrTitleBlank", with(func(b *Brief) { b.Title = str(" \t ") }), []FieldError{{Loc: []any{"title"}, Type: "string_too_short"}}},
		{"ErrTitleLong", with(func(b *Brief) { b.Title = str(strings.Repeat("a", BriefMaxTitle+1)) }), []FieldError{{Loc: []any{"title"}, Type: "string_too_long"}}},
		{"ErrTitleTwoLines", with(func(b *Brief) { b.Title = str("One\ntwo") }), []FieldError{{Loc: []any{"title"}, Type: "control_character"}}},
		{"ErrTitleBadUTF8", with(func(b *Brief) { b.Title = str("a\xffb") }), []FieldError{{Loc: []any{"title"}, Type: "string_unicode"}}},
		{"ErrNoObjectives", with(func(b *Brief) { b.Objectives = nil }), []FieldError{{Loc: []any{"objectives"}, Type: "too_short"}}},
		{"ErrTooManyObjectives", with(func(b *Brief) { b.Objectives = many(BriefMaxObjectives+1, "o") }), []FieldError{{Loc: []any{"objectives"}, Type: "too_long"}}},
		{"ErrTooManyScreener", with(func(b *Brief) { b.PreInterviewQuestions = many(BriefMaxQuestions+1, "s") }), []FieldError{{Loc: []any{"pre_interview_questions"}, Type: "too_long"}}},
		{"ErrNoVerbatim", with(func(b *Brief) { b.VerbatimQuestions = []string{} }), []FieldError{{Loc: []any{"verbatim_questions"}, Type: "too_short"}}},
		{"ErrTooManyVerbatim", with(func(b *Brief) { b.VerbatimQuestions = many(BriefMaxQuestions+1, "v") }), []FieldError{{Loc: []any{"verbatim_questions"}, Type: "too_long"}}},
		{"ErrItemBlank", with(func(b *Brief) { b.VerbatimQuestions[1] = "  " }), []FieldError{{Loc: []any{"verbatim_questions", 1}, Type: "string_too_short"}}},
		{"ErrItemLong", with(func(b *Brief) { b.Objectives[0] = strings.Repeat("a", BriefMaxItem+1) }), []FieldError{{Loc: []any{"objectives", 0}, Type: "string_too_long"}}},
		{"ErrItemControl", with(func(b *Brief) { b.PreInterviewQuestions[0] = "Bell\x07?" }), []FieldError{{Loc: []any{"pre_interview_questions", 0}, Type: "control_character"}}},
		{"ErrItemLineSeparator", with(func(b *Brief) { b.VerbatimQuestions[0] = "One\u2028two" }), []FieldError{{Loc: []any{"verbatim_questions", 0}, Type: "control_character"}}},
		{"ErrDurationZero", with(func(b *Brief) { b.EstimatedDurationMinutes = num(0) }), []FieldError{{Loc: []any{"estimated_duration_minutes"}, Type: "greater_than_equal"}}},
		{"ErrDurationLong", with(func(b *Brief) { b.EstimatedDurationMinutes = num(BriefMaxDuration + 1) }), []FieldError{{Loc: []any{"estimated_duration_minutes"}, Type: "less_than_equal"}}},
		{"ErrEveryFieldAtOnce", with(func(b *Brief) {
			b.Title, b.Objectives, b.VerbatimQuestions[0], b.EstimatedDurationMinutes = str(""), nil, "", num(-5)
		}), []FieldError{{Loc: []any{"title"}, Type: "string_too_short"}, {Loc: []any{"objectives"}, Type: "too_short"},
			{Loc: []any{"verbatim_questions", 0}, Type: "string_too_short"}, {Loc: []any{"estimated_duration_minutes"}, Type: "greater_than_equal"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := ValidateBrief(c.brief)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if out.Objectives == nil || out.PreInterviewQuestions == nil || out.VerbatimQuestions == nil || out.Title == nil {
					t.Fatalf("normalised brief has nil parts: %+v", out)
				}
				return
			}
			var ke *Error
			if ErrorCode(err) != EINVALID || !asError(err, &ke) {
				t.Fatalf("got %v, want EINVALID", err)
			}
			var got []FieldError
			for _, f := range ke.Fields {
				if f.Msg == "" || strings.Contains(f.Msg, "\xff") {
					t.Errorf("field %v: message %q", f.Loc, f.Msg)
				}
				got = append(got, FieldError{Loc: f.Loc, Type: f.Type})
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("fields %+v, want %+v", got, c.want)
			}
		})
	}
	t.Run("OK_MessagesNameTheItem", func(t *testing.T) {
		_, err := ValidateBrief(with(func(b *Brief) { b.VerbatimQuestions[1] = strings.Repeat("a", BriefMaxItem+1) }))
		if err == nil || !strings.Contains(err.Error(), "Verbatim question 2 must be at most 1000 characters.") {
			t.Fatalf("message: %v", err)
		}
	})
}
