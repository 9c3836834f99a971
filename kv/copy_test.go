package kv

import (
	"context"
	"testing"
)

// A store copied to bbolt and from there into a fresh store of the round's engine
// (bbolt, or PostgreSQL: the migration both ways) keeps every record, its secret, and
// what was issued under it.
func TestCopyThereAndBack(t *testing.T) {
	ctx := context.Background()
	src := mustOpenDB(t, nil)
	org := mustOrg(t, src, "copy")
	p := Partition{Org: org.ID, Env: EnvLive}
	var studies []Study
	for range 3 {
		studies = append(studies, mustStudy(t, src, p, "Copied"))
	}
	opened, err := src.OpenLink(ctx, studies[0].LinkToken, "sess")
	if err != nil || opened.Interview == nil {
		t.Fatal(opened, err)
	}
	_, secret, err := src.CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "k", Environment: EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := src.CreateAuthoringJob(ctx, AuthoringInput{Partition: p, JobID: NewV4(), ThreadID: NewV4(), Guidance: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := src.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2})
	if err != nil || page.Next == "" {
		t.Fatal(page, err)
	}

	mid, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	there, err := src.CopyTo(ctx, mid)
	if err != nil {
		t.Fatal(err)
	}
	back := mustOpenDB(t, nil)
	again, err := mid.CopyTo(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	if there.Records == 0 || there.Records != again.Records || there.Buckets["studies"] != 3 || there.Buckets["interviews"] != 1 {
		t.Fatalf("copied %+v there, %+v back", there, again)
	}
	if string(back.Secret()) != string(src.Secret()) {
		t.Fatal("the secret did not move with the records")
	}
	rest, err := back.FindStudies(ctx, StudyFilter{Partition: p, Limit: 2, Cursor: page.Next})
	if err != nil || len(rest.Items) != 1 {
		t.Fatalf("a cursor issued before the copy, after it: %+v %v", rest, err)
	}
	open, err := back.FindClaimableJobs(ctx, 0)
	if err != nil || len(open) != 1 || open[0].ID != job.ID {
		t.Fatalf("an unfinished job before the copy is not found to resume after it: %+v %v", open, err)
	}
	if _, err := back.Authenticate(ctx, secret); err != nil {
		t.Fatalf("a key issued before the copy, after it: %v", err)
	}
	if _, err := src.CopyTo(ctx, back); ErrorCode(err) != EINVALID {
		t.Fatalf("copy into a store in use: %v, want EINVALID", err)
	}
}
