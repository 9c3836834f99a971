package kv

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
)

// TestCursorsAreSigned: a cursor is accepted only as issued, for the list and the
// partition it was issued for, by this instance (its secret survives a restart).
func TestCursorsAreSigned(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, testOptionsAt(t, dir, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "cursors").ID, Env: EnvLive}
	for i := range 4 {
		mustStudy(t, db, p, fmt.Sprint(i))
	}
	page, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2})
	if err != nil || page.Next == "" {
		t.Fatalf("%v %q", err, page.Next)
	}
	next := page.Next
	raw, _ := base64.RawURLEncoding.DecodeString(next)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	refused := map[string]string{
		"RowIDEdited":    flip(5),
		"KindEdited":     flip(1),
		"MACEdited":      flip(len(raw) - 1),
		"Truncated":      next[:len(next)-1],
		"Unsigned":       base64.RawURLEncoding.EncodeToString(raw[:18]),
		"OtherInterview": db.EncodeCursor(CursorInterviews, p, NewV4()),
	}
	for name, c := range refused {
		t.Run("Err"+name, func(t *testing.T) {
			if _, err := db.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2, Cursor: c}); ErrorCode(err) != EINVALID {
				t.Fatalf("cursor %q: %v", c, err)
			}
		})
	}
	t.Run("ErrOtherPartition", func(t *testing.T) {
		for _, q := range []Partition{{Org: NewV4(), Env: EnvLive}, {Org: p.Org, Env: EnvTest}} {
			if _, err := db.FindStudies(ctx, StudyFilter{Partition: q, Limit: 2, Cursor: next}); ErrorCode(err) != EINVALID {
				t.Fatalf("partition %+v: %v", q, err)
			}
		}
	})
	t.Run("ErrOtherInstance", func(t *testing.T) {
		other, err := Open(t.TempDir(), testOptions(t, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.DecodeCursor(CursorStudies, p, next); ErrorCode(err) != EINVALID {
			t.Fatal(err)
		}
	})
	t.Run("OK_AfterRestart", func(t *testing.T) {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db2, err := Open(dir, testOptionsAt(t, dir, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		defer db2.Close()
		rest, err := db2.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2, Cursor: next})
		if err != nil || len(rest.Items) != 2 || rest.Next != "" {
			t.Fatalf("%v %+v", err, rest)
		}
	})
}
