package kv

import (
	"context"
	"time"

	json "github.com/goccy/go-json"
)

// JobKind names a kind of background work; each kind has its own worker pool.
type JobKind string

const (
	JobAuthoring  JobKind = "authoring"
	JobSimulation JobKind = "simulation"
	JobExport     JobKind = "export"
	JobAnalysis   JobKind = "analysis"
)

// Authoring job statuses as the API shows them.
const (
	AuthoringWorking = "working"
	AuthoringReady   = "ready"
	AuthoringFailed  = "failed"
)

// Job is one piece of background work in a partition. Status values are the kind's own
// (authoring: working/ready/failed; simulation: queued/running/completed/failed). Input
// and Output hold kind-specific JSON.
type Job struct {
	ID       ID              `json:"id"`
	Kind     JobKind         `json:"kind"`
	OrgID    ID              `json:"org_id"`
	Env      Environment     `json:"env"`
	Status   string          `json:"status"`
	Done     bool            `json:"done"`
	StudyID  *ID             `json:"study_id,omitempty"`
	ThreadID ID              `json:"thread_id"`
	Guidance string          `json:"guidance,omitempty"`
	FileIDs  []ID            `json:"file_ids,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	Attempts int             `json:"attempts"`
	// LeaseOwner is the node running the job and LeaseUntil when its lease ends unless
	// renewed (job_lease.go); empty for a job no node has claimed.
	LeaseOwner string     `json:"lease_owner,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// Partition returns the job's (organisation, environment).
func (j Job) Partition() Partition { return Partition{Org: j.OrgID, Env: j.Env} }

// AuthoringInput starts an authoring job: create (StudyID nil) or refine.
type AuthoringInput struct {
	Partition Partition
	JobID     ID // chosen by the caller so its response can be rendered before commit
	ThreadID  ID // for create: the new thread; for refine it is the study's thread
	StudyID   *ID
	Guidance  string
	FileIDs   []ID
}

// CreateAuthoringJob records a working authoring job in one transaction with its
// idempotency record (idem may be nil). ENOTFOUND when refining a study outside the
// partition; EINVALID at ["file_ids",i] for a file outside it.
func (db *DB) CreateAuthoringJob(ctx context.Context, in AuthoringInput, idem *IdemWrite) (Job, error) {
	now := db.Now()
	j := Job{ID: in.JobID, Kind: JobAuthoring, OrgID: in.Partition.Org, Env: in.Partition.Env, Status: AuthoringWorking,
		StudyID: in.StudyID, ThreadID: in.ThreadID, Guidance: in.Guidance, FileIDs: in.FileIDs, CreatedAt: now, UpdatedAt: now}
	err := db.update(ctx, func(tx Tx) error {
		if in.StudyID != nil {
			st, err := studyByID(tx, in.Partition, *in.StudyID)
			if err != nil {
				return err
			}
			j.ThreadID = st.ThreadID
		}
		var bad []FieldError
		for i, id := range in.FileIDs {
			if tx.Bucket(bucketFiles).Get(in.Partition.key(id)) == nil {
				bad = append(bad, FieldError{Loc: []any{"file_ids", i}, Msg: "No uploaded file with this id in your organisation and environment.", Type: "file_not_found"})
			}
		}
		if bad != nil {
			return Invalid(bad...)
		}
		if err := db.putJobRecord(tx, j); err != nil {
			return err
		}
		return db.writeIdem(tx, idem)
	})
	return j, err
}

// FindJobByID returns the job of the given kind in partition p, or ENOTFOUND (also for
// another kind's job, so ids cannot be probed across endpoints).
func (db *DB) FindJobByID(ctx context.Context, p Partition, kind JobKind, id ID) (Job, error) {
	var j Job
	err := db.view(ctx, func(tx Tx) error {
		var err error
		j, err = jobByID(tx, p, id)
		if err == nil && j.Kind != kind {
			err = notFound("Job")
		}
		return err
	})
	return j, err
}

func jobByID(tx Tx, p Partition, id ID) (Job, error) {
	var j Job
	ok, err := getJSON(tx.Bucket(bucketJobs), p.key(id), &j)
	if err != nil {
		return Job{}, err
	}
	if !ok {
		return Job{}, notFound("Job")
	}
	return j, nil
}

// putJob stores j. When ctx carries a job lease (WithJobLease) that is no longer the
// job's, nothing is stored: ECONFLICT lease_lost.
func (db *DB) putJob(ctx context.Context, tx Tx, j Job) error {
	if owner, ok := ctx.Value(leaseKey{}).(string); ok && j.LeaseOwner != owner {
		return errLeaseLost()
	}
	j.UpdatedAt = db.Now()
	return db.putJobRecord(tx, j)
}

// putJobRecord stores j and, on a shared store, keeps the index of unfinished jobs
// (bucket jobs_open) that the nodes' sweeps read instead of every job ever made.
func (db *DB) putJobRecord(tx Tx, j Job) error {
	key := j.Partition().key(j.ID)
	if err := putJSON(tx.Bucket(bucketJobs), key, j); err != nil {
		return err
	}
	if err := indexOpenAnalysis(tx, j); err != nil {
		return err
	}
	if err := analysisQueued(tx, j); err != nil {
		return err
	}
	if !db.Shared() {
		return nil
	}
	if j.Done {
		return tx.Bucket(bucketJobsOpen).Delete(key)
	}
	return tx.Bucket(bucketJobsOpen).Put(key, []byte{})
}

// bucketJobsOpen indexes, on a shared store, the jobs not yet done: partition + job id
// → nothing.
var bucketJobsOpen = []byte("jobs_open")

// FinishAuthoring saves an authored brief and marks the job ready, in one transaction:
// a create job makes the study (design version 1, test mode, plain link); a refine job
// adds the next design version. It returns the study. ECONFLICT if the job is done.
func (db *DB) FinishAuthoring(ctx context.Context, p Partition, jobID ID, brief Brief) (Study, error) {
	var st Study
	err := db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, jobID)
		if err != nil {
			return err
		}
		if j.Done {
			return Errorf(ECONFLICT, "job_done", "The job has already ended.")
		}
		if j.StudyID == nil {
			st, err = db.createStudy(tx, StudyInput{Partition: p, Brief: brief, Guidance: j.Guidance, ThreadID: j.ThreadID})
		} else {
			st, err = db.addBriefVersion(tx, p, *j.StudyID, j.Guidance, brief)
		}
		if err != nil {
			return err
		}
		j.Status, j.Done, j.StudyID = AuthoringReady, true, &st.ID
		return db.putJob(ctx, tx, j)
	})
	return st, err
}

// FailJob ends a job as failed with a message for the record. ECONFLICT if it is done.
func (db *DB) FailJob(ctx context.Context, p Partition, jobID ID, status, message string) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, jobID)
		if err != nil {
			return err
		}
		if j.Done {
			return Errorf(ECONFLICT, "job_done", "The job has already ended.")
		}
		j.Status, j.Done, j.Error = status, true, message
		return db.putJob(ctx, tx, j)
	})
}

// StartJobAttempt counts one more run of a job (so a job that keeps crashing the
// process can be given up on) and returns the updated job.
func (db *DB) StartJobAttempt(ctx context.Context, p Partition, jobID ID) (Job, error) {
	var j Job
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if j, err = jobByID(tx, p, jobID); err != nil {
			return err
		}
		j.Attempts++
		return db.putJob(ctx, tx, j)
	})
	return j, err
}

// FindUnfinishedJobs returns every job not yet done, oldest first: the work a restart
// must resume or fail.
func (db *DB) FindUnfinishedJobs(ctx context.Context) ([]Job, error) {
	var jobs []Job
	err := db.view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(_, v []byte) error {
			var j Job
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			if !j.Done {
				jobs = append(jobs, j)
			}
			return nil
		})
	})
	return jobs, err
}
