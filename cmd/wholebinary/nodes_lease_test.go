package wholebinary

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
)

// Lease checks of the several-node suites: the store the nodes share is read directly,
// so a test can see which node holds a job (a job's lease owner is named
// host/PID/random by the node that claimed it) and that another node finished it.

// storeReader opens the shared PostgreSQL store for reading job records.
func storeReader(t *testing.T, storeURL string) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{Store: storeURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// storedJob reads job id (of kind, in org's live partition) from the store.
func storedJob(t *testing.T, db *kv.DB, org string, kind kv.JobKind, id string) kv.Job {
	t.Helper()
	o, ok := kv.ParseID(org)
	j, ok2 := kv.ParseID(id)
	if !ok || !ok2 {
		t.Fatalf("ids %q, %q", org, id)
	}
	job, err := db.FindJobByID(context.Background(), kv.Partition{Org: o, Env: kv.EnvLive}, kind, j)
	if err != nil {
		t.Fatalf("read job %s: %v", id, err)
	}
	return job
}

// ownedBy reports whether the job is unfinished and leased, right now, by the process p.
func ownedBy(j kv.Job, p *crashProcess, now time.Time) bool {
	return !j.Done && strings.Contains(j.LeaseOwner, fmt.Sprintf("/%d/", p.cmd.Process.Pid)) &&
		j.LeaseUntil != nil && now.Before(*j.LeaseUntil)
}

// waitHeldOn waits until the job is held (held reports it stopped at the fake the test
// controls) and leased by p, and returns its lease owner; or until another node claimed
// or finished it first (a job nobody claims within the lease is anyone's), and returns
// "". The caller then starts another.
func waitHeldOn(t *testing.T, db *kv.DB, p *crashProcess, org string, kind kv.JobKind, id string, held func() bool) string {
	t.Helper()
	pid := fmt.Sprintf("/%d/", p.cmd.Process.Pid)
	var j kv.Job
	var mine bool
	crashWait(t, p, fmt.Sprintf("job %s held on the node to be killed, or taken by another", id), func() bool {
		j = storedJob(t, db, org, kind, id)
		if held() && ownedBy(j, p, time.Now()) {
			mine = true
			return true
		}
		return j.Done || (j.LeaseOwner != "" && !strings.Contains(j.LeaseOwner, pid))
	})
	if !mine {
		t.Logf("job %s was claimed by %q before the node to be killed ran it; starting another", id, j.LeaseOwner)
		return ""
	}
	return j.LeaseOwner
}

// checkTakenOver fails unless the job ended with status want under another lease than
// owner's, after at least two claims.
func checkTakenOver(t *testing.T, db *kv.DB, org string, kind kv.JobKind, id, owner, want string) {
	t.Helper()
	j := storedJob(t, db, org, kind, id)
	if !j.Done || j.Status != want || j.LeaseOwner == owner || j.LeaseOwner == "" || j.Attempts < 2 {
		t.Fatalf("job %s left by the killed node %s: done %v, status %q, finished under the lease of %q after %d claims; want %s by another node",
			id, owner, j.Done, j.Status, j.LeaseOwner, j.Attempts, want)
	}
}
