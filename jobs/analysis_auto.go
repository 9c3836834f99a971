package jobs

import (
	"context"
	"time"

	"interviewd/kv"
)

// A live interview completing asks for its study to be analysed again, soon rather than
// at once: interviews often finish in bursts, and one analysis after the burst reads
// them all. Each study has at most one pending request per process (a timer); when it
// fires it records the study's analysis job, or finds the one already queued (which
// reads the interview when it starts). A job already running may have read the
// interviews before this one completed, and an organisation at its limit must wait, so
// in those cases the request is kept for another delay.

// studyRef names one study in its partition.
type studyRef struct {
	p     kv.Partition
	study kv.ID
}

// InterviewCompleted asks for iv's study to be analysed after the debounce delay when
// iv is a completed live interview: never for test-mode rehearsals or test-environment
// interviews. Safe to call from any goroutine; nothing happens after Close.
func (r *Runner) InterviewCompleted(iv kv.Interview) {
	if iv.Status != kv.InterviewCompleted || iv.IsTest || iv.Env != kv.EnvLive {
		return
	}
	r.analyseSoon(studyRef{p: iv.Partition(), study: iv.StudyID})
}

// analyseSoon arms the study's timer unless one is pending.
func (r *Runner) analyseSoon(ref studyRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.soon[ref] != nil {
		return
	}
	r.soon[ref] = time.AfterFunc(r.analysisDelay, func() { r.analyseNow(ref) })
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
		r.analyseSoon(ref) // the pool is full: try again after another delay
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	j, created, err := r.db.CreateAnalysisJob(ctx, kv.AnalysisInput{Partition: ref.p, JobID: kv.NewV4(), StudyID: ref.study,
		Trigger: kv.AnalysisOnInterview, Limit: r.analysisLimit})
	switch {
	case kv.ErrorCode(err) == kv.ELIMIT:
		r.analyseSoon(ref)
	case err != nil:
		if r.ctx.Err() == nil {
			r.log.Warn().Err(err).Str("study_id", ref.study.String()).Msg("analysis after a completed interview was not started")
		}
	case created:
		r.Enqueue(j)
	case j.Status == kv.AnalysisRunning:
		// It may have read the interviews before this one completed.
		r.analyseSoon(ref)
	default:
		r.Enqueue(j) // queued: make sure a worker has it (a no-op when one does)
	}
}
