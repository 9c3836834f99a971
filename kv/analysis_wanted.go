package kv

import (
	"context"
	"time"
)

// A completed live interview asks for its study to be analysed again after a delay
// (jobs, analysis_auto.go). The request is stored in the transaction that completes the
// interview, so a restart (or a crash) during the delay cannot lose it: the next start
// finds it and waits out what is left of the delay. A study has at most one request
// (bucket analysis_wanted, keyed like the study), which keeps the time of the oldest
// completion no analysis has read yet. Recording a queued analysis of the study clears
// it, since a queued analysis reads every completed interview when it starts; a
// running one does not, as it may have read the interviews before this one completed.

// AnalysisWanted is a study's pending request for an analysis.
type AnalysisWanted struct {
	OrgID   ID          `json:"org_id"`
	Env     Environment `json:"env"`
	StudyID ID          `json:"study_id"`
	// Since is when the oldest completion the request stands for was stored.
	Since time.Time `json:"since"`
}

// Partition returns the request's (organisation, environment).
func (w AnalysisWanted) Partition() Partition { return Partition{Org: w.OrgID, Env: w.Env} }

// wantAnalysis records, in the transaction that stores iv, that iv's study is to be
// analysed again when iv is a completed live interview (never a rehearsal or a
// test-environment one). An earlier request of the study stands as it is.
func wantAnalysis(tx Tx, iv Interview, now time.Time) error {
	if iv.Status != InterviewCompleted || iv.IsTest || iv.Env != EnvLive {
		return nil
	}
	b := tx.Bucket(bucketAnalysisWanted)
	key := iv.Partition().key(iv.StudyID)
	if b.Get(key) != nil {
		return nil
	}
	return putJSON(b, key, AnalysisWanted{OrgID: iv.OrgID, Env: iv.Env, StudyID: iv.StudyID, Since: now.UTC()})
}

// analysisQueued clears the request of the study of j, an analysis job being stored
// queued: it reads every completed interview when it starts, so it serves the request.
func analysisQueued(tx Tx, j Job) error {
	if j.Kind != JobAnalysis || j.StudyID == nil || j.Done || j.Status != AnalysisQueued {
		return nil
	}
	return tx.Bucket(bucketAnalysisWanted).Delete(j.Partition().key(*j.StudyID))
}

// FindAnalysisWanted returns every study's pending request for an analysis, at most one
// per study, in key order (organisation, environment, study).
func (db *DB) FindAnalysisWanted(ctx context.Context) ([]AnalysisWanted, error) {
	var out []AnalysisWanted
	err := db.view(ctx, func(tx Tx) error {
		out = out[:0]
		return tx.Bucket(bucketAnalysisWanted).ForEach(func(_, v []byte) error {
			var w AnalysisWanted
			if err := jsonUnmarshal(v, &w); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		})
	})
	return out, err
}

// DropAnalysisWanted removes the study's request for an analysis: for a request no
// analysis can serve, such as one for a study that is gone. Removing none is not an
// error.
func (db *DB) DropAnalysisWanted(ctx context.Context, p Partition, study ID) error {
	return db.update(ctx, func(tx Tx) error {
		return tx.Bucket(bucketAnalysisWanted).Delete(p.key(study))
	})
}
