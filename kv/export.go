package kv

import (
	"context"
	"math"
	"time"

	json "github.com/goccy/go-json"
)

// Export job statuses as the API shows them.
const (
	ExportQueued    = "queued"
	ExportRunning   = "running"
	ExportCompleted = "completed"
	ExportFailed    = "failed"
)

// ExportArtifactTTL is how long a finished export's file is kept.
const ExportArtifactTTL = 7 * 24 * time.Hour

// ExportSpec is what an export job was asked for (its Input).
type ExportSpec struct {
	StudyID ID     `json:"study_id"`
	Format  string `json:"format"`
	// AnalysisVersion is the analysis version an export of the study's findings
	// formats (0 for the interview formats): the one asked for, or the latest when the
	// export was started, so the export says what it was asked to say however long
	// it queues.
	AnalysisVersion int `json:"analysis_version,omitempty"`
}

// ExportResult is a finished export's artifact (its Output).
type ExportResult struct {
	Blob      string    `json:"blob"` // path relative to the blob folder
	MediaType string    `json:"media_type"`
	Filename  string    `json:"filename"`
	Rows      int       `json:"rows"`
	ExpiresAt time.Time `json:"expires_at"`
	// Interviews are the interviews the artifact holds, so erasing one finds it
	// (absent in artifacts written before the list was kept).
	Interviews []ID `json:"interviews"`
}

// ExportInput starts an export of a study's live participant interviews.
type ExportInput struct {
	Partition Partition
	JobID     ID // chosen by the caller so its response can be rendered before commit
	StudyID   ID
	Format    string
	// Analysis is set for a format made from the study's analysis rather than its
	// interviews; AnalysisVersion then names the version, 0 for the latest.
	Analysis        bool
	AnalysisVersion int
}

// ErrAnalysisNotReady is the ECONFLICT refusal to export the findings of a live study
// that has no completed analysis yet.
func ErrAnalysisNotReady() *Error {
	return Errorf(ECONFLICT, "analysis_not_ready",
		"This study has no completed analysis to export yet; start one (POST /v1/api/studies/{study_id}/analysis), wait until it completes, then export.")
}

// CreateExportJob records a queued export in one transaction with its idempotency
// record (idem may be nil). ENOTFOUND for a study outside the partition. For an export
// of the study's analysis (in.Analysis) it also settles the version in the same
// transaction: ECONFLICT study_not_live for a study never live, ECONFLICT
// analysis_not_ready when no version is complete, ENOTFOUND analysis_not_found for a
// version the study does not have.
func (db *DB) CreateExportJob(ctx context.Context, in ExportInput, idem *IdemWrite) (Job, error) {
	now := db.Now()
	study := in.StudyID
	j := Job{ID: in.JobID, Kind: JobExport, OrgID: in.Partition.Org, Env: in.Partition.Env, Status: ExportQueued,
		StudyID: &study, CreatedAt: now, UpdatedAt: now}
	err := db.update(ctx, func(tx Tx) error {
		st, err := studyByID(tx, in.Partition, in.StudyID)
		if err != nil {
			return err
		}
		spec := ExportSpec{StudyID: in.StudyID, Format: in.Format}
		if in.Analysis {
			if spec.AnalysisVersion, err = exportedAnalysisVersion(tx, in.Partition, st, in.AnalysisVersion); err != nil {
				return err
			}
		}
		if j.Input, err = json.Marshal(spec); err != nil {
			return err
		}
		if err := db.putJobRecord(tx, j); err != nil {
			return err
		}
		return db.writeIdem(tx, idem)
	})
	return j, err
}

// exportedAnalysisVersion returns the analysis version an export of st's findings
// formats: version when the study has it, else the latest.
func exportedAnalysisVersion(tx Tx, p Partition, st Study, version int) (int, error) {
	if st.LaunchedAt == nil {
		return 0, ErrStudyNotLive()
	}
	if version <= 0 {
		latest, err := latestAnalysisVersion(tx, p, st.ID)
		if err != nil {
			return 0, err
		}
		if latest == 0 {
			return 0, ErrAnalysisNotReady()
		}
		return latest, nil
	}
	if version > math.MaxUint32 || tx.Bucket(bucketAnalyses).Get(analysisKey(p, st.ID, version)) == nil {
		return 0, errAnalysisNotFound
	}
	return version, nil
}

// ExportSpec returns an export job's request.
func (j Job) ExportSpec() (ExportSpec, error) {
	var s ExportSpec
	return s, jsonUnmarshal(j.Input, &s)
}

// ExportResult returns a completed export's artifact; ok is false before completion.
func (j Job) ExportResult() (ExportResult, bool) {
	var r ExportResult
	if j.Status != ExportCompleted || len(j.Output) == 0 || jsonUnmarshal(j.Output, &r) != nil {
		return ExportResult{}, false
	}
	return r, true
}

// StartExport moves an export to running. ECONFLICT once it has ended.
func (db *DB) StartExport(ctx context.Context, p Partition, id ID) (Job, error) {
	var j Job
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if j, err = jobByID(tx, p, id); err != nil {
			return err
		}
		if j.Done {
			return Errorf(ECONFLICT, "job_done", "The job has already ended.")
		}
		j.Status = ExportRunning
		return db.putJob(ctx, tx, j)
	})
	return j, err
}

// FinishExport records a finished export's artifact. ECONFLICT once it has ended.
func (db *DB) FinishExport(ctx context.Context, p Partition, id ID, r ExportResult) error {
	out, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, id)
		if err != nil {
			return err
		}
		if j.Done {
			return Errorf(ECONFLICT, "job_done", "The job has already ended.")
		}
		for _, iv := range r.Interviews {
			if tx.Bucket(bucketInterviews).Get(p.key(iv)) == nil {
				return errExportErased
			}
		}
		j.Status, j.Done, j.Output = ExportCompleted, true, out
		return db.putJob(ctx, tx, j)
	})
}

// errExportErased refuses to record an artifact that holds an interview erased (or
// swept by retention) while the export was being built.
var errExportErased = Errorf(ECONFLICT, "interview_erased", "An interview in this export was erased while the export was being built; start the export again.")

// FindExpiredExports returns completed exports whose artifact has outlived
// ExportArtifactTTL, for the sweeper to delete.
func (db *DB) FindExpiredExports(ctx context.Context) ([]Job, error) {
	now := db.Now()
	var out []Job
	err := db.view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(_, v []byte) error {
			var j Job
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			if r, ok := j.ExportResult(); ok && r.Blob != "" && now.After(r.ExpiresAt) {
				out = append(out, j)
			}
			return nil
		})
	})
	return out, err
}

// ExpireExport marks an export's artifact as deleted: the job stays, its download
// answers not found.
func (db *DB) ExpireExport(ctx context.Context, p Partition, id ID) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := jobByID(tx, p, id)
		if err != nil {
			return err
		}
		r, ok := j.ExportResult()
		if !ok {
			return nil
		}
		r.Blob = ""
		if j.Output, err = json.Marshal(r); err != nil {
			return err
		}
		return db.putJob(ctx, tx, j)
	})
}

// FindExportInterviews returns a study's completed live participant interviews (never
// test rehearsals), oldest first: the rows of an export.
func (db *DB) FindExportInterviews(ctx context.Context, p Partition, study ID) ([]Interview, error) {
	var out []Interview
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		prefix := p.prefix()
		c := tx.Bucket(bucketInterviews).Cursor()
		for k, v := c.Seek(prefix); k != nil && len(k) == len(prefix)+16 && string(k[:len(prefix)]) == string(prefix); k, v = c.Next() {
			var iv Interview
			if err := jsonUnmarshal(v, &iv); err != nil {
				return err
			}
			if iv.StudyID == study && iv.Status == InterviewCompleted && !iv.IsTest {
				out = append(out, iv)
			}
		}
		return nil
	})
	return out, err
}
