// Package jobs runs interviewd's background work (authoring, simulation, export,
// analysis) on bounded worker pools with persisted job state, restart recovery and
// per-organisation limits. The engines that do the thinking live in moderator and
// analysis; jobs decides when they run, under which deadline, and what of their output
// is committed, so a crash or a shutdown never loses or duplicates work.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/plugins"
)

// Config configures a Runner. Zero values have working defaults except DB.
type Config struct {
	DB        *kv.DB
	Moderator moderator.Engine // required: the built-in engine or an OpenAI-compatible one
	Log       zerolog.Logger
	// Workers and Queue size each kind's pool; a full queue refuses new work (429).
	Workers int
	Queue   int
	// Timeout is each job's deadline.
	Timeout time.Duration
	// MaxAttempts gives up on a job that was interrupted this many times (for example a
	// job that keeps crashing the process) instead of resuming it again.
	MaxAttempts int
	// SimulationLimit is how many simulations one organisation may have queued or
	// running at once, all environments together; default 3 (api-spec Limits).
	SimulationLimit int
	// SimulationTimeout is a simulation's deadline; default 30 minutes, since up to 200
	// turns may each wait on a model endpoint twice.
	SimulationTimeout time.Duration
	// Plugins runs the redaction and export-format plugins; exports and analyses fail
	// without it.
	Plugins *plugins.Host
	// Analyser is the findings engine; default the built-in offline one.
	Analyser analysis.Engine
	// AnalysisLimit is how many analyses one organisation may have queued or running at
	// once, all environments and nodes together; default 3.
	AnalysisLimit int
	// AnalysisTimeout is an analysis's deadline; default 10 minutes, since a model
	// engine reads every interview.
	AnalysisTimeout time.Duration
	// AnalysisDelay is how long after a live interview completes its study is analysed
	// again (interviews completing meanwhile share that analysis); default 1 minute.
	AnalysisDelay time.Duration
	// Metrics is the Prometheus registry the runner's figures are registered on; nil
	// keeps a private one.
	Metrics *prometheus.Registry
	// Lease is how long a claimed job stays this node's without a renewal (renewed
	// every third of it); default 30 seconds. On a shared store a node that dies
	// mid-job leaves it to another node this long after its last renewal.
	Lease time.Duration
	// Node names this process in job leases; default host name, process id and a
	// random suffix.
	Node string
}

// Runner owns the worker pools. Every job is a kv record first and a queued reference
// second, so a crash loses nothing: Start resumes what was left unfinished.
type Runner struct {
	db     *kv.DB
	mod    moderator.Engine
	log    zerolog.Logger
	maxTry int
	ctx    context.Context // cancelled when Close runs out of patience
	cancel context.CancelFunc
	pools  map[kv.JobKind]*pool
	mu     sync.Mutex
	closed bool
	sims   simSlots
	// running holds the cancel of every job a worker is running, for Cancel.
	running map[kv.ID]context.CancelFunc
	plugins *plugins.Host
	// analyser, analysisLimit and analysisDelay: see Config; soon holds each study's
	// pending analysis after a completed interview (analysis_auto.go, guarded by mu).
	analyser      analysis.Engine
	analysisLimit int
	analysisDelay time.Duration
	soon          map[studyRef]*time.Timer
	metrics       *jobMetrics
	node          string
	lease         time.Duration
	// local holds the jobs queued or running in this process, so a sweep never queues
	// one twice (guarded by mu).
	local map[kv.ID]struct{}
	// stop ends the lease sweep (leases.go); bg waits for it.
	stop chan struct{}
	bg   sync.WaitGroup
}

type jobRef struct {
	p  kv.Partition
	id kv.ID
}

type pool struct {
	queue   chan jobRef
	run     func(ctx context.Context, j kv.Job) error
	timeout time.Duration
	// ended, when set, is told about every job the pool is done with (finished, failed
	// or not runnable), except those left unfinished by a shutdown.
	ended func(ref jobRef)
	wg    sync.WaitGroup
}

// errQueueFull is returned (as a coded ELIMIT error) when a pool cannot take more work.
var errQueueFull = kv.Errorf(kv.ELIMIT, "queue_full", "Too much background work is queued; try again shortly.")

// NewRunner builds the pools; call Start to begin work.
func NewRunner(cfg Config) *Runner {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.SimulationLimit <= 0 {
		cfg.SimulationLimit = 3
	}
	if cfg.SimulationTimeout <= 0 {
		cfg.SimulationTimeout = 30 * time.Minute
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Analyser == nil {
		cfg.Analyser = analysis.NewBuiltin()
	}
	if cfg.AnalysisLimit <= 0 {
		cfg.AnalysisLimit = 3
	}
	if cfg.AnalysisTimeout <= 0 {
		cfg.AnalysisTimeout = 10 * time.Minute
	}
	if cfg.AnalysisDelay <= 0 {
		cfg.AnalysisDelay = time.Minute
	}
	if cfg.Node == "" {
		cfg.Node = nodeName()
	}
	r := &Runner{db: cfg.DB, plugins: cfg.Plugins, mod: cfg.Moderator, log: cfg.Log, maxTry: cfg.MaxAttempts, pools: map[kv.JobKind]*pool{},
		sims: simSlots{limit: cfg.SimulationLimit, held: map[kv.ID]map[kv.ID]struct{}{}}, running: map[kv.ID]context.CancelFunc{},
		node: cfg.Node, lease: cfg.Lease, local: map[kv.ID]struct{}{}, stop: make(chan struct{}),
		analyser: cfg.Analyser, analysisLimit: cfg.AnalysisLimit, analysisDelay: cfg.AnalysisDelay, soon: map[studyRef]*time.Timer{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.pools[kv.JobAuthoring] = &pool{queue: make(chan jobRef, cfg.Queue), run: r.runAuthoring, timeout: cfg.Timeout}
	r.pools[kv.JobExport] = &pool{queue: make(chan jobRef, cfg.Queue), run: r.runExport, timeout: cfg.Timeout}
	r.pools[kv.JobAnalysis] = &pool{queue: make(chan jobRef, cfg.Queue), run: r.runAnalysis, timeout: cfg.AnalysisTimeout}
	r.pools[kv.JobSimulation] = &pool{queue: make(chan jobRef, cfg.Queue), run: r.runSimulation, timeout: cfg.SimulationTimeout,
		ended: func(ref jobRef) { r.sims.release(ref.p.Org, ref.id) }}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	r.metrics = newJobMetrics(cfg.Metrics, r.pools)
	for _, p := range r.pools {
		for i := 0; i < cfg.Workers; i++ {
			p.wg.Add(1)
			go r.work(p)
		}
	}
	return r
}

// Moderator returns the engine the runner uses.
func (r *Runner) Moderator() moderator.Engine { return r.mod }

// Start resumes the jobs a previous process left unfinished. A job interrupted
// MaxAttempts times is failed instead, so a poison job cannot crash-loop the server.
// Simulations resumed hold their organisation's slots again; those failed do not.
//
// It also arms the stored requests for an analysis after a completed interview
// (analysis_auto.go). On a shared store Start resumes only the jobs no node runs (their
// lease ran out), and keeps sweeping for such jobs, and for requests another node left,
// until Close (leases.go).
func (r *Runner) Start(ctx context.Context) error {
	if err := r.resume(ctx); err != nil {
		return err
	}
	if err := r.resumeWanted(ctx); err != nil {
		return fmt.Errorf("find pending analysis requests: %w", err)
	}
	if r.db.Shared() {
		// Listening before Start returns: a job handed over from now on is not missed.
		sctx, cancel := context.WithCancel(context.Background())
		wake := r.db.JobSignals(sctx)
		r.bg.Add(1)
		go r.sweepLeases(sctx, cancel, wake)
	}
	return nil
}

// resume queues the unfinished jobs nobody runs.
func (r *Runner) resume(ctx context.Context) error {
	var jobs []kv.Job
	var err error
	if r.db.Shared() {
		jobs, err = r.db.FindClaimableJobs(ctx, r.lease)
	} else {
		jobs, err = r.db.FindUnfinishedJobs(ctx)
	}
	if err != nil {
		return fmt.Errorf("find unfinished jobs: %w", err)
	}
	for _, j := range jobs {
		p := r.pools[j.Kind]
		if p == nil || !r.takeLocal(j.ID) {
			continue
		}
		if j.Attempts >= r.maxTry {
			r.fail(j, "The job was interrupted too many times and was given up.")
			r.dropLocal(j.ID)
			continue
		}
		// The slot is held before the job is queued: a worker may finish it at once.
		if j.Kind == kv.JobSimulation {
			r.sims.hold(j.OrgID, j.ID)
		}
		r.mu.Lock()
		queued := false
		if !r.closed {
			select {
			case p.queue <- jobRef{p: j.Partition(), id: j.ID}:
				queued = true
			default:
			}
		}
		closed := r.closed
		r.mu.Unlock()
		switch {
		case queued:
			r.log.Info().Str("job_id", j.ID.String()).Str("kind", string(j.Kind)).Msg("resuming job left unfinished")
		case closed:
			r.sims.release(j.OrgID, j.ID)
			r.dropLocal(j.ID)
		case r.db.Shared():
			// Another node may have room: leave it for their sweeps.
			r.sims.release(j.OrgID, j.ID)
			r.dropLocal(j.ID)
		default:
			r.sims.release(j.OrgID, j.ID)
			r.dropLocal(j.ID)
			r.fail(j, "The job could not be resumed after a restart; start it again.")
		}
	}
	return nil
}

// Admit checks that kind's pool has room before the caller records a job.
func (r *Runner) Admit(kind kv.JobKind) error {
	p := r.pools[kind]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || p == nil || len(p.queue) >= cap(p.queue) {
		return errQueueFull
	}
	return nil
}

// Enqueue hands a recorded job to its pool. A job that finds the pool full (it filled
// between Admit and Enqueue) is ended failed at once, and anything it holds (a
// simulation slot) is released: never left waiting with no worker to take it. A job
// enqueued after Close stays unfinished in kv for the next Start.
func (r *Runner) Enqueue(j kv.Job) {
	p := r.pools[j.Kind]
	r.mu.Lock()
	if r.closed || p == nil {
		r.mu.Unlock()
		return
	}
	ref := jobRef{p: j.Partition(), id: j.ID}
	if _, ok := r.local[j.ID]; ok {
		r.mu.Unlock()
		return
	}
	select {
	case p.queue <- ref:
		r.local[j.ID] = struct{}{}
		r.mu.Unlock()
		return
	default:
	}
	r.mu.Unlock()
	r.log.Warn().Str("job_id", j.ID.String()).Msg("queue full; job failed")
	r.fail(j, "The server was too busy to start this job; start it again.")
	if p.ended != nil {
		p.ended(ref)
	}
}

// Running reports whether the runner takes work: true until Close.
func (r *Runner) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.closed
}

// Close stops taking work and waits for running jobs until ctx ends; then it cancels
// them, leaving them unfinished in kv for the next Start to resume.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		for ref, t := range r.soon {
			t.Stop() // its request is stored: the next Start arms it again
			delete(r.soon, ref)
		}
		close(r.stop)
		for _, p := range r.pools {
			close(p.queue)
		}
	}
	r.mu.Unlock()
	r.bg.Wait()
	done := make(chan struct{})
	go func() {
		for _, p := range r.pools {
			p.wg.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		<-done
		return ctx.Err()
	}
}

func (r *Runner) work(p *pool) {
	defer p.wg.Done()
	for ref := range p.queue {
		if r.ctx.Err() != nil {
			continue // shutting down: leave queued jobs for the next start
		}
		r.runOne(p, ref)
		if p.ended != nil && r.ctx.Err() == nil {
			p.ended(ref)
		}
		r.dropLocal(ref.id)
	}
}

func (r *Runner) runOne(p *pool, ref jobRef) {
	j, err := r.db.ClaimJob(r.ctx, ref.p, ref.id, r.node, r.lease)
	if err != nil || j.Done {
		return // another node's (job_leased), or gone
	}
	// Every write the job makes is fenced by its lease: refused once another node has it.
	ctx, cancel := context.WithTimeout(kv.WithJobLease(r.ctx, r.node), p.timeout)
	defer cancel()
	stopRenewing := r.renewLease(ctx, cancel, j)
	defer stopRenewing()
	r.mu.Lock()
	r.running[j.ID] = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, j.ID)
		r.mu.Unlock()
	}()
	start := time.Now()
	r.metrics.jobStarted(j.Kind)
	err = p.run(ctx, j)
	result := resultOK
	switch {
	case r.ctx.Err() != nil:
		result = resultInterrupted
		r.handOver(j)
	case err != nil:
		result = resultFailed
		r.log.Error().Err(err).Str("job_id", j.ID.String()).Str("kind", string(j.Kind)).Msg("job failed")
	}
	r.metrics.jobEnded(j.Kind, result, time.Since(start))
}

// CanceledMessage is the error a job cancelled by its caller ends with.
const CanceledMessage = "The job was cancelled at the caller's request."

// Cancel ends a job that has not finished: it is recorded failed with CanceledMessage
// first (so a queued job never starts and a running one cannot commit a result), then
// a running job's work is stopped. It returns ECONFLICT when the job had already
// ended and ENOTFOUND when p has no such job.
func (r *Runner) Cancel(ctx context.Context, p kv.Partition, kind kv.JobKind, id kv.ID) error {
	if err := r.db.FailJob(ctx, p, id, failedStatus(kind), CanceledMessage); err != nil {
		return err
	}
	r.mu.Lock()
	stop := r.running[id]
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	return nil
}

func (r *Runner) fail(j kv.Job, msg string) {
	ctx := context.Background()
	if j.LeaseOwner == r.node {
		ctx = kv.WithJobLease(ctx, r.node) // a job this node runs: fenced like its other writes
	}
	if err := r.db.FailJob(ctx, j.Partition(), j.ID, failedStatus(j.Kind), msg); err != nil && kv.ErrorCode(err) != kv.ECONFLICT {
		r.log.Error().Err(err).Str("job_id", j.ID.String()).Msg("could not record job failure")
	}
}

func failedStatus(kind kv.JobKind) string {
	if kind == kv.JobAuthoring {
		return kv.AuthoringFailed
	}
	return "failed"
}

// runAuthoring drafts or refines a brief and saves it, or ends the job failed.
func (r *Runner) runAuthoring(ctx context.Context, j kv.Job) error {
	req := moderator.AuthorRequest{Guidance: j.Guidance}
	p := j.Partition()
	if j.StudyID != nil {
		st, err := r.db.FindStudyByID(ctx, p, *j.StudyID)
		if err != nil {
			r.fail(j, "The study no longer exists.")
			return err
		}
		req.Current = st.Brief
	}
	if len(j.FileIDs) > 0 {
		files, err := r.db.FindFilesByID(ctx, p, j.FileIDs)
		if err != nil {
			r.fail(j, "An uploaded file is no longer available.")
			return err
		}
		for _, f := range files {
			req.Files = append(req.Files, moderator.FileText{Name: f.Filename, Text: f.Text})
		}
	}
	brief, err := r.mod.Author(ctx, req)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil // shutting down: resume after restart
		}
		if errors.Is(err, moderator.ErrRefused) {
			// The engine declined the request: the researcher's answer, not a fault. The
			// reason is the job's error, which the app, A2A and MCP show.
			r.fail(j, refusalMessage(j, err))
			r.log.Info().Str("job_id", j.ID.String()).Str("org_id", j.OrgID.String()).Str("reason", err.Error()).Msg("authoring request refused")
			return nil
		}
		r.fail(j, "Authoring did not complete.")
		return err
	}
	_, err = r.db.FinishAuthoring(ctx, p, j.ID, brief)
	return err
}

// refusalMessage is a refused authoring job's error, for the researcher: what did not
// happen (a refine changes nothing unless it applies in full) and the engine's reason.
func refusalMessage(j kv.Job, err error) string {
	lead := "No study was drafted"
	if j.StudyID != nil {
		lead = "Nothing was changed"
	}
	reason := moderator.RefusalReason(err)
	if reason == "" {
		return lead + ": the engine declined the guidance."
	}
	if !strings.HasSuffix(reason, ".") && !strings.HasSuffix(reason, "?") && !strings.HasSuffix(reason, "!") {
		reason += "."
	}
	return lead + ": " + reason
}
