package kv

import (
	"context"
	"time"
)

// Job leases: which node runs a job.
//
// A worker claims a job before running it (ClaimJob), which records the node as its
// lease owner until a deadline, and renews the lease while it works (RenewJobLease).
// A job whose lease has run out belongs to nobody: its node died or lost the database,
// and another node's sweep (FindClaimableJobs) claims it and resumes it from what was
// committed. Claims are serializable transactions, so two nodes never both win one.
//
// On a store only one process can open (bbolt), every lease was taken by an earlier
// process of this data folder, which is gone: leases are then ignored when claiming.

type leaseKey struct{}

// WithJobLease returns ctx for running a job under owner's lease: every write of the job
// made with it is refused (ECONFLICT lease_lost) once the lease is no longer owner's, so
// a node that lost a job to another (it stalled past its lease) cannot write over the
// other's progress, however late it notices.
func WithJobLease(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, leaseKey{}, owner)
}

// ErrJobLeased is the ECONFLICT a claim gets while another node's lease runs.
func errJobLeased() *Error {
	return Errorf(ECONFLICT, "job_leased", "Another node is running this job.")
}

// ErrLeaseLost is the ECONFLICT a renewal gets when the lease went to another node.
func errLeaseLost() *Error {
	return Errorf(ECONFLICT, "lease_lost", "The job's lease was taken over by another node.")
}

// ClaimJob leases the job in p to owner for lease and counts one more attempt. It
// returns the job (a job already done is returned as it is, unclaimed), ECONFLICT
// job_leased while another owner's lease runs, ENOTFOUND for no such job.
func (db *DB) ClaimJob(ctx context.Context, p Partition, id ID, owner string, lease time.Duration) (Job, error) {
	var j Job
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if j, err = jobByID(tx, p, id); err != nil || j.Done {
			return err
		}
		now := db.Now()
		if db.Shared() && j.LeaseOwner != "" && j.LeaseOwner != owner && j.LeaseUntil != nil && now.Before(*j.LeaseUntil) {
			return errJobLeased()
		}
		until := now.Add(lease)
		j.LeaseOwner, j.LeaseUntil = owner, &until
		j.Attempts++
		return db.putJob(ctx, tx, j)
	})
	return j, err
}

// RenewJobLease extends owner's lease of the job to lease from now. ECONFLICT
// lease_lost when another node holds it now, job_done once it has ended.
func (db *DB) RenewJobLease(ctx context.Context, p Partition, id ID, owner string, lease time.Duration) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, id)
		if err != nil {
			return err
		}
		if j.Done {
			return Errorf(ECONFLICT, "job_done", "The job has already ended.")
		}
		if j.LeaseOwner != owner {
			return errLeaseLost()
		}
		until := db.Now().Add(lease)
		j.LeaseUntil = &until
		return db.putJob(ctx, tx, j)
	})
}

// ReleaseJobLease gives owner's lease of an unfinished job up, so another node may
// claim it at once (a node shutting down). Not holding it is not an error.
func (db *DB) ReleaseJobLease(ctx context.Context, p Partition, id ID, owner string) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, id)
		if err != nil || j.Done || j.LeaseOwner != owner {
			return err
		}
		// Owned by nobody with a lease already run out: claimable by any sweep now.
		now := db.Now()
		j.LeaseOwner, j.LeaseUntil = "", &now
		return db.putJob(ctx, tx, j)
	})
}

// FindClaimableJobs returns the unfinished jobs nobody runs: those whose lease ran out,
// and those never claimed and untouched for unclaimed (the node that recorded them died
// before its worker claimed them). On a shared store it reads the index of unfinished
// jobs, so a sweep costs what is open, not every job ever made.
func (db *DB) FindClaimableJobs(ctx context.Context, unclaimed time.Duration) ([]Job, error) {
	jobs, err := db.findOpenJobs(ctx)
	if err != nil {
		return nil, err
	}
	now := db.Now()
	out := jobs[:0]
	for _, j := range jobs {
		switch {
		case j.LeaseUntil != nil && !now.Before(*j.LeaseUntil):
			out = append(out, j)
		case j.LeaseOwner == "" && now.Sub(j.UpdatedAt) >= unclaimed:
			out = append(out, j)
		}
	}
	return out, nil
}

// findOpenJobs returns the jobs not yet done: through the index on a shared store,
// by reading every job otherwise.
func (db *DB) findOpenJobs(ctx context.Context) ([]Job, error) {
	if !db.Shared() {
		return db.FindUnfinishedJobs(ctx)
	}
	var jobs []Job
	err := db.view(ctx, func(tx Tx) error {
		jobs = jobs[:0]
		all := tx.Bucket(bucketJobs)
		return tx.Bucket(bucketJobsOpen).ForEach(func(k, _ []byte) error {
			var j Job
			ok, err := getJSON(all, k, &j)
			if err != nil || !ok || j.Done {
				return err
			}
			jobs = append(jobs, j)
			return nil
		})
	})
	return jobs, err
}

// indexOpenJobs builds the index of unfinished jobs from the jobs (a store filled by a
// copy).
func indexOpenJobs(tx Tx) error {
	open := tx.Bucket(bucketJobsOpen)
	return tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j Job
		if err := jsonUnmarshal(v, &j); err != nil {
			return err
		}
		if j.Done {
			return nil
		}
		return open.Put(k, []byte{})
	})
}

// countOpenSimulations returns how many simulations of org, all environments
// together, are queued or running.
func countOpenSimulations(tx Tx, org ID) (int, error) {
	n := 0
	c := tx.Bucket(bucketJobs).Cursor()
	for k, v := c.Seek(org[:]); k != nil && string(k[:16]) == string(org[:]); k, v = c.Next() {
		var j Job
		if err := jsonUnmarshal(v, &j); err != nil {
			return 0, err
		}
		if j.Kind == JobSimulation && !j.Done {
			n++
		}
	}
	return n, nil
}
