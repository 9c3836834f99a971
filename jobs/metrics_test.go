package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/moderator"
)

// TestRunnerMetrics: a finished job moves its kind's ended counter and duration
// histogram and leaves nothing running; the runner's families pass Prometheus's lint
// (HELP on each, counters ending in _total) on a registry that checks every
// collector's descriptions against what it collects.
func TestRunnerMetrics(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Metered", Email: "m@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	reg := prometheus.NewPedanticRegistry()
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Metrics: reg})
	defer r.Close(ctx)

	const families = "interviewd_jobs_ended_total interviewd_jobs_running interviewd_jobs_queued"
	idle := `
# HELP interviewd_jobs_ended_total Background jobs that ended on this node, by kind and result (ok, failed, or interrupted by a shutdown).
# TYPE interviewd_jobs_ended_total counter
interviewd_jobs_ended_total{kind="analysis",result="failed"} 0
interviewd_jobs_ended_total{kind="analysis",result="interrupted"} 0
interviewd_jobs_ended_total{kind="analysis",result="ok"} 0
interviewd_jobs_ended_total{kind="authoring",result="failed"} 0
interviewd_jobs_ended_total{kind="authoring",result="interrupted"} 0
interviewd_jobs_ended_total{kind="authoring",result="ok"} %d
interviewd_jobs_ended_total{kind="export",result="failed"} 0
interviewd_jobs_ended_total{kind="export",result="interrupted"} 0
interviewd_jobs_ended_total{kind="export",result="ok"} 0
interviewd_jobs_ended_total{kind="simulation",result="failed"} 0
interviewd_jobs_ended_total{kind="simulation",result="interrupted"} 0
interviewd_jobs_ended_total{kind="simulation",result="ok"} 0
# HELP interviewd_jobs_queued Background jobs waiting in this node's queue, by kind.
# TYPE interviewd_jobs_queued gauge
interviewd_jobs_queued{kind="analysis"} 0
interviewd_jobs_queued{kind="authoring"} 0
interviewd_jobs_queued{kind="export"} 0
interviewd_jobs_queued{kind="simulation"} 0
# HELP interviewd_jobs_running Background jobs running on this node, by kind.
# TYPE interviewd_jobs_running gauge
interviewd_jobs_running{kind="analysis"} 0
interviewd_jobs_running{kind="authoring"} 0
interviewd_jobs_running{kind="export"} 0
interviewd_jobs_running{kind="simulation"} 0
`
	expect := func(ended int) error {
		return testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(idle, ended)), strings.Fields(families)...)
	}
	if err := expect(0); err != nil {
		t.Fatalf("before any job: %v", err)
	}

	job, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), Guidance: researchGuidance}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Enqueue(job)
	if j := waitJob(t, db, p, job.ID); j.Status != kv.AuthoringReady {
		t.Fatalf("job %+v", j)
	}
	// The end is counted once the job's record is written: poll.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := expect(1)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after one job: %v", err)
		}
	}
	if got := jobDurations(t, reg); got[string(kv.JobAuthoring)] != 1 || got[string(kv.JobExport)] != 0 || got[string(kv.JobAnalysis)] != 0 || len(got) != 4 {
		t.Errorf("job durations observed per kind: %v, want one authoring and a series per kind", got)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// jobDurations returns the job duration histogram's observation count by kind.
func jobDurations(t *testing.T, g prometheus.Gatherer) map[string]uint64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "interviewd_job_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" {
					out[l.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return out
}
