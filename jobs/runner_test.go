package jobs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/moderator"
)

// testStores maps a data folder to its PostgreSQL database when the suite runs with
// INTERVIEWD_TEST_STORE=postgres, so a test that reopens a folder reopens its store.
var testStores sync.Map

func mustOpenDB(tb testing.TB, dir string) *kv.DB {
	tb.Helper()
	var opts kv.Options
	if os.Getenv("INTERVIEWD_TEST_STORE") == "postgres" {
		u, ok := testStores.Load(dir)
		if !ok {
			u = pgtest.URL(tb)
			testStores.Store(dir, u)
		}
		opts.Store = u.(string)
	}
	db, err := kv.Open(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// waitJob polls a job until it is done, with a deadline.
func waitJob(t *testing.T, db *kv.DB, p kv.Partition, id kv.ID) kv.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := db.FindJobByID(context.Background(), p, kv.JobAuthoring, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Done {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not done after 10 s: %+v", id, j)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

const researchGuidance = "Understand why new users abandon checkout on mobile. Interview shoppers who left in the last month."

// TestRestartResumesInterruptedJob: a job is in flight on an engine that hangs (a model
// endpoint that never answers); the runner is shut down as a crash would leave it; a
// new runner on the same file resumes the job and finishes it.
func TestRestartResumesInterruptedJob(t *testing.T) {
	dir := t.TempDir()
	db := mustOpenDB(t, dir)
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Restart", Email: "r@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}

	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hanging.Close()
	defer close(release)
	slow, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: hanging.URL + "/v1", Model: "m", MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first := NewRunner(Config{DB: db, Moderator: slow, Log: zerolog.Nop()})
	job, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Enqueue(job)
	select {
	case <-arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the job never reached the model endpoint")
	}
	// Stop without waiting: the in-flight job is cancelled and stays unfinished.
	stopCtx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_ = first.Close(stopCtx)
	if j, _ := db.FindJobByID(ctx, p, kv.JobAuthoring, job.ID); j.Done || j.Status != kv.AuthoringWorking {
		t.Fatalf("interrupted job was ended: %+v", j)
	}
	_ = db.Close()

	db = mustOpenDB(t, dir)
	defer db.Close()
	second := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop()})
	defer second.Close(ctx)
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, db, p, job.ID)
	if j.Status != kv.AuthoringReady || j.StudyID == nil || j.Attempts != 2 {
		t.Fatalf("resumed job %+v", j)
	}
	st, err := db.FindStudyByID(ctx, p, *j.StudyID)
	if err != nil || st.Brief == nil || st.ThreadID != job.ThreadID {
		t.Fatalf("study %+v %v", st, err)
	}
}

// TestRestartGivesUpOnPoisonJob: a job already interrupted MaxAttempts times is failed
// at start instead of being run again.
func TestRestartGivesUpOnPoisonJob(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Poison", Email: "p@example.com"})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	job, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // claimed three times by processes that died at once
		if _, err := db.ClaimJob(ctx, p, job.ID, fmt.Sprint("dead-", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), MaxAttempts: 3})
	defer r.Close(ctx)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j, _ := db.FindJobByID(ctx, p, kv.JobAuthoring, job.ID)
	if !j.Done || j.Status != kv.AuthoringFailed || j.StudyID != nil {
		t.Fatalf("poison job %+v", j)
	}
}

func TestAdmitRefusesWhenQueueFull(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Workers: 1, Queue: 1})
	if err := r.Admit(kv.JobAuthoring); err != nil {
		t.Fatalf("empty queue refused: %v", err)
	}
	_ = r.Close(context.Background())
	if err := r.Admit(kv.JobAuthoring); kv.ErrorCode(err) != kv.ELIMIT {
		t.Fatalf("closed runner admitted: %v", err)
	}
}

// BenchmarkAuthoringReady measures create → ready with the built-in engine: the job
// record, the queue hop, authoring and the committing transaction.
func BenchmarkAuthoringReady(b *testing.B) {
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Bench", Email: "b@example.com"})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop()})
	defer r.Close(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		job, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Enqueue(job)
		for {
			j, _ := db.FindJobByID(ctx, p, kv.JobAuthoring, job.ID)
			if j.Done {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// TestEnqueueIntoFullQueueFailsTheJob: a job that finds its pool full between Admit and
// Enqueue ends failed at once instead of waiting for a restart.
func TestEnqueueIntoFullQueueFailsTheJob(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Full", Email: "f@example.com"})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hanging.Close()
	defer close(release)
	slow, _ := moderator.NewOpenAI(moderator.OpenAIConfig{URL: hanging.URL + "/v1", Model: "m", MaxRetries: -1, Timeout: time.Minute})
	r := NewRunner(Config{DB: db, Moderator: slow, Log: zerolog.Nop(), Workers: 1, Queue: 1})
	defer func() {
		stop, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		_ = r.Close(stop)
	}()
	newJob := func() kv.Job {
		j, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	running := newJob()
	r.Enqueue(running)
	<-arrived // the only worker is busy
	queued, dropped := newJob(), newJob()
	r.Enqueue(queued) // fills the queue of one
	r.Enqueue(dropped)
	got, _ := db.FindJobByID(ctx, p, kv.JobAuthoring, dropped.ID)
	if !got.Done || got.Status != kv.AuthoringFailed {
		t.Fatalf("job enqueued into a full pool: %+v", got)
	}
	if q, _ := db.FindJobByID(ctx, p, kv.JobAuthoring, queued.ID); q.Done {
		t.Fatalf("the queued job ended: %+v", q)
	}
}
