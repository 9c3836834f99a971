package jobs

import (
	"context"
	"time"

	"interviewd/kv"
)

// A live interview completing asks for its study to be analysed again, soon rather than
// at once: interviews often finish in bursts, and one analysis after the burst reads
// them all. The request itself is stored by kv in the commit that completes the
// interview (kv.AnalysisWanted, one per study), so it outlives this process: Start
// finds the requests a previous process left and waits out what is left of their
// delay. In the process each study has at most one pending timer; when it fires it
// records the study's analysis job, or finds the one already queued (which reads the
// interview when it starts), and recording or claiming a queued job clears the stored
// request. A job already running may have read the interviews before this one
// completed, and an organisation at its limit must wait, so in those cases the request
// is kept for another delay.

// studyRef names one study in its partition.
type studyRef struct {
	p     kv.Partition
	study kv.ID
}

// InterviewCompleted asks for iv's study to be analysed after the debounce delay when
// iv is a completed live interview: never for test-mode rehearsals or test-environment
// interviews. Safe to call from any goroutine; nothing happens after Close (the stored
// request waits for the next Start).
func (r *Runner) InterviewCompleted(iv kv.Interview) {
	if iv.Status != kv.InterviewCompleted || iv.IsTest || iv.Env != kv.EnvLive {
		return
	}
	r.analyseSoon(studyRef{p: iv.Partition(), study: iv.StudyID}, r.analysisDelay)
}

// analyseSoon arms the study's timer to fire after wait, unless one is pending.
func (r *Runner) analyseSoon(ref studyRef, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.soon[ref] != nil {
		return
	}
	r.soon[ref] = time.AfterFunc(wait, func() { r.analyseNow(ref) })
}

// resumeWanted arms a timer for every stored request for an analysis, for what is left
// of its delay: those a previous process (or, on a shared store, another node) left.
func (r *Runner) resumeWanted(ctx context.Context) error {
	wanted, err := r.db.FindAnalysisWanted(ctx)
	if err != nil {
		return err
	}
	now := r.db.Now()
	for _, w := range wanted {
		r.analyseSoon(studyRef{p: w.Partition(), study: w.StudyID}, max(w.Since.Add(r.analysisDelay).Sub(now), 0))
	}
	return nil
}

// PendingAnalyses returns how many studies wait for their debounce delay to pass.
func (r *Runner) PendingAnalyses() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.soon)
}

// analyseNow records (or finds) the study's analysis job and queues it.
func (r *Runner) analyseNow(ref studyRef) {
	r.mu.Lock()
	delete(r.soon, ref)
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.bg.Add(1) // Close waits for it before the store may close
	r.mu.Unlock()
	defer r.bg.Done()
	if err := r.Admit(kv.JobAnalysis); err != nil {
		r.analyseSoon(ref, r.analysisDelay) // the pool is full: try again after another delay
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	j, created, err := r.db.CreateAnalysisJob(ctx, kv.AnalysisInput{Partition: ref.p, JobID: kv.NewV4(), StudyID: ref.study,
		Trigger: kv.AnalysisOnInterview, Limit: r.analysisLimit})
	switch code := kv.ErrorCode(err); {
	case code == kv.ELIMIT:
		r.analyseSoon(ref, r.analysisDelay)
	case code == kv.ENOTFOUND || code == kv.ECONFLICT || code == kv.EFORBIDDEN:
		// No analysis can serve it (the study is gone): forget the request.
		r.log.Warn().Err(err).Str("study_id", ref.study.String()).Msg("analysis after a completed interview cannot run; request dropped")
		if err := r.db.DropAnalysisWanted(ctx, ref.p, ref.study); err != nil && r.ctx.Err() == nil {
			r.log.Warn().Err(err).Str("study_id", ref.study.String()).Msg("could not drop the request for an analysis")
		}
	case err != nil:
		if r.ctx.Err() == nil {
			// The store is unreachable for now: the request stays stored; try again.
			r.log.Warn().Err(err).Str("study_id", ref.study.String()).Msg("analysis after a completed interview was not started; trying again later")
			r.analyseSoon(ref, r.analysisDelay)
		}
	case created:
		r.Enqueue(j)
	case j.Status == kv.AnalysisRunning:
		// It may have read the interviews before this one completed.
		r.analyseSoon(ref, r.analysisDelay)
	default:
		r.Enqueue(j) // queued: make sure a worker has it (a no-op when one does)
	}
}
