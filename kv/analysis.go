package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	json "github.com/goccy/go-json"
)

// A study's analysis is a series of versions: each completed analysis job stores the
// next one (1, 2, ...) in the transaction that ends the job, so a reader sees a job
// completed only with its version readable, and a failed job leaves the previous
// version as it was. A study has at most one analysis job queued or running: asking
// again while one is returns that job (bucket analysis_open indexes it).
//
// kv keeps the findings as the JSON the analysis package writes; it reads into them
// only to take an erased interview out (analysis_erase.go).

// Analysis job statuses as the API shows them.
const (
	AnalysisQueued    = "queued"
	AnalysisRunning   = "running"
	AnalysisCompleted = "completed"
	AnalysisFailed    = "failed"
)

// Why an analysis job was started.
const (
	AnalysisOnRequest   = "request"   // a researcher or agent asked for it
	AnalysisOnInterview = "interview" // a live interview of the study completed
)

// AnalysisSpec is what an analysis job was asked for (its Input).
type AnalysisSpec struct {
	StudyID ID     `json:"study_id"`
	Trigger string `json:"trigger"`
}

// AnalysisOutcome is what a completed analysis job produced (its Output).
type AnalysisOutcome struct {
	Version int `json:"version"`
}

// AnalysisSource is one interview an analysis version was made from, with what the
// version counted it under, so erasing it later takes out its counts as well as its
// quotes.
type AnalysisSource struct {
	InterviewID ID `json:"interview_id"`
	// Context is the interview's (redacted) context, the segments themes count it in.
	Context map[string]string `json:"context,omitempty"`
	// Answered lists the scripted questions (their text) the interview answered; the
	// others it skipped.
	Answered []string `json:"answered,omitempty"`
	// Objectives lists the objectives (by position) whose coverage counts the
	// interview, and Groups the answer groups whose counts do: an erasure subtracts
	// it from exactly these, quoted or not.
	Objectives []int              `json:"objectives,omitempty"`
	Groups     []AnalysisGroupRef `json:"groups,omitempty"`
}

// AnalysisGroupRef names one answer group of a stored analysis.
type AnalysisGroupRef struct {
	Question int    `json:"question"` // the question's position in the findings
	Label    string `json:"label"`
}

// AnalysisVersion is one stored version of a study's findings.
type AnalysisVersion struct {
	StudyID   ID               `json:"study_id"`
	Version   int              `json:"version"`
	JobID     ID               `json:"job_id"`
	CreatedAt time.Time        `json:"created_at"`
	Sources   []AnalysisSource `json:"sources"`
	// Erased counts the interviews taken out of this version since it was made.
	Erased int `json:"erased,omitempty"`
	// Counted is set when the sources say which counts each interview is part of
	// (AnalysisSource.Objectives and Groups); versions stored before they did are
	// erased by their quotes alone.
	Counted bool `json:"counted,omitempty"`
	// Body is the analysis as the analysis package encodes it; its "version" member
	// is set to Version when the version is stored.
	Body json.RawMessage `json:"body"`
}

// AnalysisResult is what a finished analysis job hands kv to store.
type AnalysisResult struct {
	Sources []AnalysisSource
	Body    json.RawMessage
	// Counted: the sources carry each interview's objectives and answer groups.
	Counted bool
}

// AnalysisInput starts an analysis of a study's completed live interviews.
type AnalysisInput struct {
	Partition Partition
	JobID     ID // used when a new job is recorded
	StudyID   ID
	Trigger   string // AnalysisOnRequest or AnalysisOnInterview
	// Limit, when positive, is how many analyses the organisation may have queued or
	// running at once, all environments and nodes together (ELIMIT analysis_limit).
	Limit int
	// Idem, when set, returns the idempotency record to write for the job the request
	// ends up with (the new one, or the study's job already under way).
	Idem func(job ID) *IdemWrite
}

// ErrStudyNotLive is the ECONFLICT refusal to analyse a study that never went live:
// test-mode rehearsals are not findings.
func ErrStudyNotLive() *Error {
	return Errorf(ECONFLICT, "study_not_live", "Test mode: no analysis. This study has never been live, so it has no live interviews to analyse.")
}

// ErrAnalysisLimit is the ELIMIT refusal of one analysis more than limit.
func ErrAnalysisLimit(limit int) *Error {
	return Errorf(ELIMIT, "analysis_limit",
		fmt.Sprintf("Your organisation already has %d analyses queued or running; start another when one has finished.", limit))
}

var errAnalysisNotFound = Errorf(ENOTFOUND, "analysis_not_found", "This study has no completed analysis yet; start one and poll it until it completes.")

var errAnalysisTestEnv = Errorf(EFORBIDDEN, "test_environment", "Test-environment data has no analysis; use a live key.")

// CreateAnalysisJob records a queued analysis of the study, or returns the study's
// analysis already queued or running (created false), in one transaction with the
// idempotency record. ENOTFOUND for a study outside the partition; ECONFLICT
// study_not_live for a study that never went live; EFORBIDDEN test_environment in the
// test environment; ELIMIT analysis_limit when the organisation is at in.Limit.
func (db *DB) CreateAnalysisJob(ctx context.Context, in AnalysisInput) (Job, bool, error) {
	if in.Partition.Env != EnvLive {
		return Job{}, false, errAnalysisTestEnv
	}
	trigger := in.Trigger
	if trigger == "" {
		trigger = AnalysisOnRequest
	}
	spec, err := json.Marshal(AnalysisSpec{StudyID: in.StudyID, Trigger: trigger})
	if err != nil {
		return Job{}, false, err
	}
	var j Job
	var created bool
	err = db.update(ctx, func(tx Tx) error {
		j, created = Job{}, false
		st, err := studyByID(tx, in.Partition, in.StudyID)
		if err != nil {
			return err
		}
		if st.LaunchedAt == nil {
			return ErrStudyNotLive()
		}
		open, err := openAnalysis(tx, in.Partition, in.StudyID)
		if err != nil {
			return err
		}
		if open != nil {
			j = *open
		} else {
			if in.Limit > 0 {
				if n := countOpenAnalyses(tx, in.Partition.Org); n >= in.Limit {
					return ErrAnalysisLimit(in.Limit)
				}
			}
			now := db.Now()
			study := in.StudyID
			j = Job{ID: in.JobID, Kind: JobAnalysis, OrgID: in.Partition.Org, Env: in.Partition.Env, Status: AnalysisQueued,
				StudyID: &study, Input: spec, CreatedAt: now, UpdatedAt: now}
			if err := db.putJobRecord(tx, j); err != nil {
				return err
			}
			created = true
		}
		if in.Idem != nil {
			return db.writeIdem(tx, in.Idem(j.ID))
		}
		return nil
	})
	return j, created, err
}

// openAnalysis returns the study's analysis job queued or running, or nil.
func openAnalysis(tx Tx, p Partition, study ID) (*Job, error) {
	raw := tx.Bucket(bucketAnalysisOpen).Get(p.key(study))
	if len(raw) != 16 {
		return nil, nil
	}
	var id ID
	copy(id[:], raw)
	j, err := jobByID(tx, p, id)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil
	}
	if err != nil || j.Done || j.Kind != JobAnalysis {
		return nil, err
	}
	return &j, nil
}

// indexOpenAnalysis keeps bucket analysis_open in step with an analysis job being
// stored: the study points at the job while it is not done.
func indexOpenAnalysis(tx Tx, j Job) error {
	if j.Kind != JobAnalysis || j.StudyID == nil {
		return nil
	}
	b := tx.Bucket(bucketAnalysisOpen)
	key := j.Partition().key(*j.StudyID)
	if !j.Done {
		return b.Put(key, append([]byte(nil), j.ID[:]...))
	}
	if bytes.Equal(b.Get(key), j.ID[:]) {
		return b.Delete(key)
	}
	return nil
}

// countOpenAnalyses returns how many analyses of org, all environments together, are
// queued or running.
func countOpenAnalyses(tx Tx, org ID) int {
	n := 0
	c := tx.Bucket(bucketAnalysisOpen).Cursor()
	for k, _ := c.Seek(org[:]); k != nil && bytes.HasPrefix(k, org[:]); k, _ = c.Next() {
		n++
	}
	return n
}

// CountOpenAnalyses returns how many analyses of org are queued or running.
func (db *DB) CountOpenAnalyses(ctx context.Context, org ID) (int, error) {
	n := 0
	err := db.view(ctx, func(tx Tx) error {
		n = countOpenAnalyses(tx, org)
		return nil
	})
	return n, err
}

// AnalysisSpec returns an analysis job's request.
func (j Job) AnalysisSpec() (AnalysisSpec, error) {
	var s AnalysisSpec
	if len(j.Input) == 0 {
		return s, Errorf(EINVALID, "analysis_input", "The job carries no analysis request.")
	}
	return s, jsonUnmarshal(j.Input, &s)
}

// AnalysisOutcome returns the version a completed analysis job stored; ok is false
// before completion.
func (j Job) AnalysisOutcome() (AnalysisOutcome, bool) {
	var o AnalysisOutcome
	if j.Kind != JobAnalysis || j.Status != AnalysisCompleted || jsonUnmarshal(j.Output, &o) != nil {
		return AnalysisOutcome{}, false
	}
	return o, true
}

// analysisJob loads an analysis job that has not ended: ENOTFOUND for none (or
// another kind's), ECONFLICT job_done once it has ended.
func analysisJob(tx Tx, p Partition, id ID) (Job, error) {
	j, err := jobByID(tx, p, id)
	if err != nil {
		return Job{}, err
	}
	if j.Kind != JobAnalysis {
		return Job{}, notFound("Job")
	}
	if j.Done {
		return Job{}, Errorf(ECONFLICT, "job_done", "The job has already ended.")
	}
	return j, nil
}

// StartAnalysis moves an analysis job to running. ECONFLICT once it has ended.
func (db *DB) StartAnalysis(ctx context.Context, p Partition, id ID) (Job, error) {
	var j Job
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if j, err = analysisJob(tx, p, id); err != nil {
			return err
		}
		j.Status = AnalysisRunning
		return db.putJob(ctx, tx, j)
	})
	return j, err
}

// FinishAnalysis stores the job's findings as the study's next version and marks the
// job completed, in one transaction, and returns the version stored. An interview
// erased while the job ran is taken out of the findings before they are stored.
// ECONFLICT once the job has ended; ENOTFOUND when the study is gone.
func (db *DB) FinishAnalysis(ctx context.Context, p Partition, id ID, r AnalysisResult) (AnalysisVersion, error) {
	var v AnalysisVersion
	err := db.update(ctx, func(tx Tx) error {
		j, err := analysisJob(tx, p, id)
		if err != nil {
			return err
		}
		if j.StudyID == nil {
			return Errorf(EINVALID, "analysis_input", "The job names no study.")
		}
		study := *j.StudyID
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		latest, err := latestAnalysisVersion(tx, p, study)
		if err != nil {
			return err
		}
		v = AnalysisVersion{StudyID: study, Version: latest + 1, JobID: j.ID, CreatedAt: db.Now(),
			Sources: append([]AnalysisSource{}, r.Sources...), Body: r.Body, Counted: r.Counted}
		for _, src := range r.Sources {
			if tx.Bucket(bucketInterviews).Get(p.key(src.InterviewID)) == nil {
				if v, err = eraseFromVersion(v, src.InterviewID); err != nil {
					return err
				}
			}
		}
		if v.Body, err = setAnalysisVersion(v.Body, study, v.Version); err != nil {
			return err
		}
		if err := putJSON(tx.Bucket(bucketAnalyses), analysisKey(p, study, v.Version), v); err != nil {
			return err
		}
		if j.Output, err = json.Marshal(AnalysisOutcome{Version: v.Version}); err != nil {
			return err
		}
		j.Status, j.Done, j.Error = AnalysisCompleted, true, ""
		return db.putJob(ctx, tx, j)
	})
	return v, err
}

// setAnalysisVersion writes the study and version into the body's own members, so the
// findings say which version they are wherever they are read.
func setAnalysisVersion(body json.RawMessage, study ID, version int) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, fmt.Errorf("analysis body is not a JSON object: %v", err)
	}
	doc["version"] = version
	doc["study_id"] = study.String()
	return json.Marshal(doc)
}

// FindAnalysis returns a study's analysis version, the latest when version is 0.
// ENOTFOUND for a study outside the partition, ENOTFOUND analysis_not_found when the
// study has no such version.
func (db *DB) FindAnalysis(ctx context.Context, p Partition, study ID, version int) (AnalysisVersion, error) {
	var v AnalysisVersion
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		if version <= 0 {
			latest, err := latestAnalysisVersion(tx, p, study)
			if err != nil {
				return err
			}
			if latest == 0 {
				return errAnalysisNotFound
			}
			version = latest
		}
		if version > math.MaxUint32 {
			return errAnalysisNotFound // keys hold 32-bit versions: never alias a smaller one
		}
		ok, err := getJSON(tx.Bucket(bucketAnalyses), analysisKey(p, study, version), &v)
		if err != nil {
			return err
		}
		if !ok {
			return errAnalysisNotFound
		}
		return nil
	})
	return v, err
}

// FindAnalysisVersions returns the numbers of a study's stored versions, oldest first.
func (db *DB) FindAnalysisVersions(ctx context.Context, p Partition, study ID) ([]int, error) {
	var out []int
	err := db.view(ctx, func(tx Tx) error {
		prefix := p.key(study)
		c := tx.Bucket(bucketAnalyses).Cursor()
		for k, _ := c.Seek(prefix); k != nil && len(k) == len(prefix)+4 && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			out = append(out, int(binary.BigEndian.Uint32(k[len(prefix):])))
		}
		return nil
	})
	return out, err
}

func analysisKey(p Partition, study ID, version int) []byte {
	return binary.BigEndian.AppendUint32(p.key(study), uint32(version))
}

// latestAnalysisVersion returns the study's highest stored version, 0 for none.
func latestAnalysisVersion(tx Tx, p Partition, study ID) (int, error) {
	prefix := p.key(study)
	c := tx.Bucket(bucketAnalyses).Cursor()
	end := binary.BigEndian.AppendUint32(append([]byte(nil), prefix...), 0xffffffff)
	k, _ := c.Seek(end)
	switch {
	case k == nil:
		k, _ = c.Last()
	case !bytes.Equal(k, end):
		k, _ = c.Prev()
	}
	if k == nil || len(k) != len(prefix)+4 || !bytes.HasPrefix(k, prefix) {
		return 0, nil
	}
	return int(binary.BigEndian.Uint32(k[len(prefix):])), nil
}

// FindOpenAnalysis returns the study's analysis job that is queued or running, with
// true, or false when it has none. It reads the study's entry in the index of open
// analyses (one key) and that job, never the other jobs.
func (db *DB) FindOpenAnalysis(ctx context.Context, p Partition, study ID) (Job, bool, error) {
	var j Job
	var ok bool
	err := db.view(ctx, func(tx Tx) error {
		open, err := openAnalysis(tx, p, study)
		if err != nil || open == nil {
			return err
		}
		j, ok = *open, true
		return nil
	})
	return j, ok, err
}
