package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"interviewd/kv"
)

// Jobs across nodes. Every job is claimed with a lease before it runs (kv.ClaimJob) and
// the lease is renewed while it runs; on a shared store each node also sweeps for jobs
// whose lease ran out (their node died) and runs them from what was committed. A node
// woken by another's signal (a node shutting down hands its jobs over) sweeps at once.

// nodeName names this process in leases: host, process id and a random suffix, so a
// restarted process never mistakes its predecessor's leases for its own.
func nodeName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// takeLocal marks a job queued here; false when it already is.
func (r *Runner) takeLocal(id kv.ID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.local[id]; ok {
		return false
	}
	r.local[id] = struct{}{}
	return true
}

func (r *Runner) dropLocal(id kv.ID) {
	r.mu.Lock()
	delete(r.local, id)
	r.mu.Unlock()
}

// renewLease renews j's lease every third of the lease until the returned stop is
// called. A renewal that finds the lease taken over cancels the job: another node runs
// it now, and this one must stop writing.
func (r *Runner) renewLease(ctx context.Context, cancel context.CancelFunc, j kv.Job) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(r.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := r.db.RenewJobLease(ctx, j.Partition(), j.ID, r.node, r.lease)
			if kv.ErrorCode(err) == kv.ECONFLICT {
				if ctx.Err() == nil {
					r.log.Warn().Str("job_id", j.ID.String()).Err(err).Msg("job lease lost; stopping it here")
				}
				cancel()
				return
			}
		}
	}()
	return func() { close(done); <-ended }
}

// sweepLeases queues the jobs whose lease ran out and arms the stored analysis
// requests, every half lease and whenever another node signals (on wake), until Close;
// ctx ends with it.
func (r *Runner) sweepLeases(ctx context.Context, cancel context.CancelFunc, wake <-chan struct{}) {
	defer r.bg.Done()
	defer cancel()
	go func() {
		select {
		case <-r.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	tick := time.NewTicker(r.lease / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-wake:
		}
		if err := r.resume(ctx); err != nil && ctx.Err() == nil {
			r.log.Error().Err(err).Msg("sweep for jobs whose node stopped")
		}
		// A node that stopped during an analysis request's delay left it stored.
		if err := r.resumeWanted(ctx); err != nil && ctx.Err() == nil {
			r.log.Error().Err(err).Msg("sweep for pending analysis requests")
		}
	}
}

// handOver gives up the lease of a job this node's shutdown interrupted and wakes the
// other nodes, so one of them resumes it now rather than when the lease runs out.
func (r *Runner) handOver(j kv.Job) {
	if !r.db.Shared() {
		return // the next start of this store resumes it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.db.ReleaseJobLease(ctx, j.Partition(), j.ID, r.node); err != nil {
		r.log.Warn().Err(err).Str("job_id", j.ID.String()).Msg("could not hand the job over; another node resumes it when its lease runs out")
		return
	}
	_ = r.db.SignalJobs(ctx)
}
