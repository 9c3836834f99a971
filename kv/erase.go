package kv

import (
	"bytes"
	"context"
	"path/filepath"
	"time"

	json "github.com/goccy/go-json"
)

// Erasure removes a participant's interview everywhere it is kept: the interview record,
// its transcript, the session secrets that reach it, its quotes and counts in every
// analysis version of its study, and every export artifact that holds its words. Artifacts are files; the records change in one transaction and the files
// are removed right after it. A crash between the two leaves files no record points at,
// which SweepOrphanExports removes on the next maintenance pass.

// ErasedArtifact is an export artifact deleted because it held an erased interview.
type ErasedArtifact struct {
	JobID ID     `json:"job_id"`
	File  string `json:"file"` // path relative to the blob folder
}

// EraseReceipt says what erasing one interview deleted, and when.
type EraseReceipt struct {
	InterviewID        ID          `json:"interview_id"`
	OrgID              ID          `json:"org_id"`
	Environment        Environment `json:"environment"`
	StudyID            ID          `json:"study_id"`
	ErasedAt           time.Time   `json:"erased_at"`
	Interview          bool        `json:"interview"`
	TranscriptMessages int         `json:"transcript_messages"`
	Sessions           int         `json:"sessions"`
	// Annotations counts the researchers' highlights of its transcript deleted with it.
	Annotations int `json:"annotations"`
	// LinksScrubbed counts person links whose context and note (which may name the
	// person) were cleared; the link stays used, so it starts no new interview.
	LinksScrubbed int `json:"links_scrubbed"`
	// AgentTasks counts the ended agent (A2A) tasks deleted because their answer
	// held the interview (a get_interview or list_interviews result).
	AgentTasks      int              `json:"agent_tasks"`
	ExportArtifacts []ErasedArtifact `json:"export_artifacts"`
	// AnalysisVersions lists the stored analysis versions the interview was taken out
	// of (its quotes and counts).
	AnalysisVersions []AnalysisRef `json:"analysis_versions"`
	// FilesNotRemoved lists artifact files that could not be deleted (the records no
	// longer point at them; SweepOrphanExports retries).
	FilesNotRemoved []string `json:"files_not_removed,omitempty"`
}

// EraseInterview erases the interview with id, whichever organisation and environment it
// belongs to, and returns a receipt. ENOTFOUND for an unknown interview.
func (db *DB) EraseInterview(ctx context.Context, id ID) (EraseReceipt, error) {
	var rc EraseReceipt
	err := db.update(ctx, func(tx Tx) error {
		iv, err := interviewAnywhere(tx, id)
		if err != nil {
			return err
		}
		rc = EraseReceipt{InterviewID: id, OrgID: iv.OrgID, Environment: iv.Env, StudyID: iv.StudyID, ErasedAt: db.Now(),
			AnalysisVersions: []AnalysisRef{}}
		arts, err := db.eraseInterviews(tx, []Interview{iv}, &rc)
		rc.ExportArtifacts = arts
		return err
	})
	if err != nil {
		return EraseReceipt{}, err
	}
	rc.FilesNotRemoved = db.removeBlobs(ctx, rc.ExportArtifacts)
	return rc, nil
}

// interviewAnywhere finds an interview by id alone (for an operator who holds only the
// id). Keys are partition + id, so this is a scan: an administrative operation, rare.
func interviewAnywhere(tx Tx, id ID) (Interview, error) {
	c := tx.Bucket(bucketInterviews).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) == partitionLen+16 && bytes.Equal(k[partitionLen:], id[:]) {
			var iv Interview
			if err := jsonUnmarshal(v, &iv); err != nil {
				return Interview{}, err
			}
			return iv, nil
		}
	}
	return Interview{}, notFound("Interview")
}

// eraseInterviews deletes the interviews, their transcripts and sessions, and marks the
// export artifacts that contain any of them as deleted; it returns those artifacts for
// the caller to remove once the transaction has committed. Counts go into rc.
func (db *DB) eraseInterviews(tx Tx, ivs []Interview, rc *EraseReceipt) ([]ErasedArtifact, error) {
	if len(ivs) == 0 {
		return nil, nil
	}
	byID := make(map[ID]Interview, len(ivs))
	tokens := map[string]bool{}
	for _, iv := range ivs {
		byID[iv.ID] = iv
		tokens[iv.LinkToken] = true
		if err := tx.Bucket(bucketInterviews).Delete(iv.Partition().key(iv.ID)); err != nil {
			return nil, err
		}
		if rc != nil {
			rc.Interview = true
		}
		n, err := deletePrefix(tx.Bucket(bucketTranscripts), iv.ID[:], nil)
		if err != nil {
			return nil, err
		}
		s, err := deletePrefix(tx.Bucket(bucketSessions), append([]byte("i:"), iv.ID[:]...), nil)
		if err != nil {
			return nil, err
		}
		a, err := eraseAnnotationsOf(tx, iv)
		if err != nil {
			return nil, err
		}
		if rc != nil {
			rc.TranscriptMessages += n
			rc.Sessions += s
			rc.Annotations += a
		}
	}
	// A person link's context and note were written about this one participant: clear
	// them with the interview. Group links are shared by many visitors and keep theirs.
	for token := range tokens {
		n, err := scrubPersonLink(tx, token, byID)
		if err != nil {
			return nil, err
		}
		if rc != nil {
			rc.LinksScrubbed += n
		}
	}
	// A group link's session rows point at the interview they continue.
	for token := range tokens {
		s, err := deletePrefix(tx.Bucket(bucketSessions), []byte("l:"+token+":"), func(v []byte) bool {
			var id ID
			copy(id[:], v)
			_, ok := byID[id]
			return len(v) == 16 && ok
		})
		if err != nil {
			return nil, err
		}
		if rc != nil {
			rc.Sessions += s
		}
	}
	n, err := deleteAgentTasksMentioning(tx, byID)
	if err != nil {
		return nil, err
	}
	if rc != nil {
		rc.AgentTasks += n
	}
	refs, err := eraseAnalysesOf(tx, byID)
	if err != nil {
		return nil, err
	}
	if rc != nil {
		rc.AnalysisVersions = append(rc.AnalysisVersions, refs...)
	}
	return expireArtifactsContaining(tx, func(j Job, r ExportResult) bool {
		for _, iv := range byID {
			if exportContains(j, r, iv) {
				return true
			}
		}
		return false
	})
}

// deleteAgentTasksMentioning deletes the ended agent tasks of the interviews'
// partitions whose record names one of them. A task keeps the answer it gave, and the
// answer of get_interview or list_interviews is the interview itself (answers, person
// fields); the store does not know which skills those are, so any ended task that names
// the interview goes (a failed get_interview only loses its record). A task still
// working waits on a job whose answer holds no interview, and is kept.
func deleteAgentTasksMentioning(tx Tx, ivs map[ID]Interview) (int, error) {
	byPart := map[Partition][][]byte{}
	for _, iv := range ivs {
		byPart[iv.Partition()] = append(byPart[iv.Partition()], []byte(iv.ID.String()))
	}
	n := 0
	for part, ids := range byPart {
		d, err := deletePrefix(tx.Bucket(bucketAgentTasks), part.prefix(), func(v []byte) bool {
			var t AgentTask
			if err := decodeAgentTask(v, &t, true); err != nil || !t.Final {
				return false
			}
			for _, id := range ids {
				if bytes.Contains(t.Body, id) {
					return true
				}
			}
			return false
		})
		if err != nil {
			return 0, err
		}
		n += d
	}
	return n, nil
}

// scrubPersonLink clears the context and note of the person link token when its one
// interview is among the erased; it returns 1 when it did.
func scrubPersonLink(tx Tx, token string, erased map[ID]Interview) (int, error) {
	b := tx.Bucket(bucketLinks)
	var l Link
	ok, err := getJSON(b, []byte(token), &l)
	if err != nil || !ok || l.InterviewID == nil {
		return 0, err
	}
	if _, hit := erased[*l.InterviewID]; !hit || (l.Context == nil && l.Note == "" && l.Label == "") {
		return 0, nil
	}
	l.Context, l.Note, l.Label = nil, "", "" // a person link's label may name its person
	return 1, putJSON(b, []byte(token), l)
}

// exportContains reports whether a completed export's artifact holds the interview. An
// artifact lists its interviews; one written before that list existed is taken to hold
// every completed live interview of its study finished before the export was asked for,
// which is what an export then selected.
func exportContains(j Job, r ExportResult, iv Interview) bool {
	if j.OrgID != iv.OrgID || j.Env != iv.Env {
		return false
	}
	if r.Interviews != nil {
		for _, id := range r.Interviews {
			if id == iv.ID {
				return true
			}
		}
		return false
	}
	return j.StudyID != nil && *j.StudyID == iv.StudyID && !iv.IsTest && iv.CompletedAt != nil &&
		!j.UpdatedAt.Before(*iv.CompletedAt)
}

// expireArtifactsContaining marks every completed export whose artifact still exists and
// matches as deleted (the job stays; its download answers not found) and returns the
// artifacts.
func expireArtifactsContaining(tx Tx, match func(Job, ExportResult) bool) ([]ErasedArtifact, error) {
	var out []ErasedArtifact
	var changed []Job
	err := tx.Bucket(bucketJobs).ForEach(func(_, v []byte) error {
		var j Job
		if err := jsonUnmarshal(v, &j); err != nil {
			return err
		}
		r, ok := j.ExportResult()
		if !ok || r.Blob == "" || !match(j, r) {
			return nil
		}
		out = append(out, ErasedArtifact{JobID: j.ID, File: r.Blob})
		r.Blob = ""
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		j.Output = raw
		changed = append(changed, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, j := range changed { // bbolt forbids writes to a bucket inside its ForEach
		// Completed exports only: the index of unfinished jobs is not concerned.
		if err := putJSON(tx.Bucket(bucketJobs), j.Partition().key(j.ID), j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deletePrefix deletes the keys under prefix whose value keep does not refuse (keep nil
// deletes all) and returns how many it deleted.
func deletePrefix(b Bucket, prefix []byte, match func(v []byte) bool) (int, error) {
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if match == nil || match(v) {
			keys = append(keys, append([]byte(nil), k...))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// removeBlobs deletes the artifacts' blobs and returns those that could not be deleted
// (a blob already gone counts as deleted). The records no longer name them, so the
// deletes run even when ctx has ended: the caller's commit is already made.
func (db *DB) removeBlobs(ctx context.Context, arts []ErasedArtifact) []string {
	ctx = context.WithoutCancel(ctx)
	var failed []string
	for _, a := range arts {
		if err := db.blobs.Delete(ctx, filepath.ToSlash(filepath.Clean(a.File))); err != nil {
			failed = append(failed, a.File)
		}
	}
	return failed
}

// orphanGrace keeps a freshly written export file that its job has not recorded yet (it
// is renamed into place just before the job finishes) out of SweepOrphanExports' reach.
const orphanGrace = time.Hour

// SweepOrphanExports deletes export files that no job record points at (left by a crash
// between an erasure's commit and its file removal, or by an export that failed after
// writing) and returns how many it deleted.
func (db *DB) SweepOrphanExports(ctx context.Context) (int, error) {
	list, err := db.blobs.List(ctx, "exports/")
	if err != nil {
		return 0, err
	}
	if len(list) == 0 {
		return 0, nil
	}
	live := map[string]bool{}
	err = db.view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(_, v []byte) error {
			var j Job
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			if r, ok := j.ExportResult(); ok && r.Blob != "" {
				live[filepath.ToSlash(filepath.Clean(r.Blob))] = true
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	cutoff := db.Now().Add(-orphanGrace)
	n := 0
	for _, b := range list {
		if live[b.Key] || b.ModTime.After(cutoff) {
			continue
		}
		if db.blobs.Delete(ctx, b.Key) == nil {
			n++
		}
	}
	return n, nil
}
