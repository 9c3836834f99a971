package jobs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/moderator"
)

// hangingEngine is a model endpoint that takes every request and never answers, and
// reports the first arrival on arrived.
func hangingEngine(t *testing.T) (moderator.Engine, <-chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	eng, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: srv.URL + "/v1", Model: "m", MaxRetries: -1, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return eng, arrived
}

func sharedStore(t *testing.T) (url string, open func() *kv.DB) {
	t.Helper()
	url = pgtest.URL(t)
	return url, func() *kv.DB {
		db, err := kv.Open(t.TempDir(), kv.Options{Store: url})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 2 minutes", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A node dies mid-job (its database connections gone, its lease no longer renewed);
// another node finds the lease run out and finishes the job.
func TestLeases_NodeDiesAnotherFinishes(t *testing.T) {
	_, open := sharedStore(t)
	ctx := context.Background()
	dbA, dbB := open(), open()
	defer dbB.Close()
	org, _, err := dbA.CreateOrg(ctx, kv.OrgInput{Name: "Lease", Email: "l@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	hang, arrived := hangingEngine(t)
	a := NewRunner(Config{DB: dbA, Moderator: hang, Log: zerolog.Nop(), Lease: time.Second, Node: "node-a"})
	job, err := dbA.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Enqueue(job)
	select {
	case <-arrived:
	case <-time.After(2 * time.Minute):
		t.Fatal("node A never started the job")
	}
	if j, _ := dbB.FindJobByID(ctx, p, kv.JobAuthoring, job.ID); j.LeaseOwner != "node-a" {
		t.Fatalf("job running on node A is leased to %q", j.LeaseOwner)
	}
	// Node B starts while A holds the lease: it must not take the job.
	b := NewRunner(Config{DB: dbB, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Lease: time.Second, Node: "node-b"})
	defer b.Close(ctx)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A dies: its store goes away, so its renewals stop.
	_ = dbA.Close()
	defer func() {
		stop, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		_ = a.Close(stop)
	}()
	var j kv.Job
	waitFor(t, "job finished by node B", func() bool {
		j, err = dbB.FindJobByID(ctx, p, kv.JobAuthoring, job.ID)
		return err == nil && j.Done
	})
	if j.Status != kv.AuthoringReady || j.StudyID == nil || j.LeaseOwner != "node-b" || j.Attempts != 2 {
		t.Fatalf("job after takeover %+v", j)
	}
}

// A node shutting down hands its interrupted job over at once: the other node, whose
// sweep would not come for half an hour, is woken by the signal and finishes it.
func TestLeases_ShutdownHandsOver(t *testing.T) {
	_, open := sharedStore(t)
	ctx := context.Background()
	dbA, dbB := open(), open()
	defer dbA.Close()
	defer dbB.Close()
	org, _, err := dbA.CreateOrg(ctx, kv.OrgInput{Name: "Handover", Email: "h@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	b := NewRunner(Config{DB: dbB, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Lease: time.Hour, Node: "node-b"})
	defer b.Close(ctx)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	hang, arrived := hangingEngine(t)
	a := NewRunner(Config{DB: dbA, Moderator: hang, Log: zerolog.Nop(), Lease: time.Hour, Node: "node-a"})
	job, err := dbA.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Enqueue(job)
	select {
	case <-arrived:
	case <-time.After(2 * time.Minute):
		t.Fatal("node A never started the job")
	}
	stop, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_ = a.Close(stop)
	var j kv.Job
	waitFor(t, "job finished by node B", func() bool {
		j, err = dbB.FindJobByID(ctx, p, kv.JobAuthoring, job.ID)
		return err == nil && j.Done
	})
	if j.Status != kv.AuthoringReady || j.LeaseOwner != "node-b" {
		t.Fatalf("job after handover %+v", j)
	}
}
