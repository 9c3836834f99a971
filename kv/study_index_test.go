package kv

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestStudyRowRoundTrip(t *testing.T) {
	launched := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)
	for _, st := range []Study{
		{ID: NewV4(), Name: "Checkout · friction 😀", Mode: ModePaused, CreatedAt: launched.Add(-time.Hour), UpdatedAt: launched, LaunchedAt: &launched, Version: 7},
		{ID: NewV4(), Name: "", Mode: ModeTest, CreatedAt: launched, UpdatedAt: launched, Version: 1},
	} {
		got, err := decodeStudyRow(encodeStudyRow(st))
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != st.ID || got.Name != st.Name || got.Mode != st.Mode || !got.CreatedAt.Equal(st.CreatedAt) ||
			!got.UpdatedAt.Equal(st.UpdatedAt) || got.Version != st.Version || (got.LaunchedAt == nil) != (st.LaunchedAt == nil) {
			t.Fatalf("round trip %+v → %+v", st, got)
		}
	}
	for _, bad := range [][]byte{nil, {2}, make([]byte, 45)} {
		if _, err := decodeStudyRow(bad); err == nil {
			t.Fatalf("accepted %v", bad)
		}
	}
}

// TestMigrationBuildsStudyIndex opens a schema-1 file (studies without list rows) and
// checks the migration builds the rows so listing sees every study.
func TestMigrationBuildsStudyIndex(t *testing.T) {
	boltOnly(t)
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	org := mustOrg(t, db, "migrate")
	p := Partition{Org: org.ID, Env: EnvLive}
	for i := 0; i < 3; i++ {
		mustStudy(t, db, p, "old")
	}
	err = db.bolt.File().Update(func(tx *bolt.Tx) error { // make it look like a schema-1 file
		if err := tx.DeleteBucket(bucketStudyIndex); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put([]byte("schema"), []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page, err := db.FindStudies(context.Background(), StudyFilter{Partition: p, Limit: 10})
	if err != nil || len(page.Items) != 3 || page.Items[0].Name != "old" {
		t.Fatalf("after migration: %+v %v", page.Items, err)
	}
}
