package kv

import (
	"context"
	"time"
)

// MaxRetentionDays bounds an organisation's retention setting (100 years).
const MaxRetentionDays = 36500

// SetRetention sets how many days the organisation keeps interviews, transcripts and
// export artifacts (0 turns retention off) and returns the organisation. EINVALID for a
// negative or absurd number of days; ENOTFOUND for an unknown organisation.
func (db *DB) SetRetention(ctx context.Context, org ID, days int) (Org, error) {
	if days < 0 || days > MaxRetentionDays {
		return Org{}, Invalid(FieldError{Loc: []any{"days"}, Msg: "Retention must be 1 to 36500 days, or off.", Type: "range"})
	}
	var o Org
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if o, err = orgByID(tx, org); err != nil {
			return err
		}
		o.RetentionDays = days
		return db.putOrg(tx, o)
	})
	return o, err
}

// RetentionSweep is what one retention pass deleted.
type RetentionSweep struct {
	At                 time.Time        `json:"at"`
	Interviews         int              `json:"interviews"`
	TranscriptMessages int              `json:"transcript_messages"`
	Sessions           int              `json:"sessions"`
	Annotations        int              `json:"annotations"` // researchers' highlights of the deleted transcripts
	AgentTasks         int              `json:"agent_tasks"`
	AnalysisVersions   int              `json:"analysis_versions"` // analysis versions interviews were taken out of
	ExportArtifacts    []ErasedArtifact `json:"export_artifacts"`
	FilesNotRemoved    []string         `json:"files_not_removed,omitempty"`
}

// retentionBatch bounds how many interviews one transaction deletes, so a first sweep
// over years of data does not hold the writer for long.
const retentionBatch = 200

// SweepRetention applies every organisation's retention setting: it deletes the
// interviews whose last activity (completion, else last message, else start) is older
// than the organisation's retention, with their transcripts and sessions, every export
// artifact asked for before that cut-off, and every artifact that holds a deleted
// interview. Organisations without a setting are untouched.
func (db *DB) SweepRetention(ctx context.Context) (RetentionSweep, error) {
	now := db.Now()
	out := RetentionSweep{At: now}
	cutoffs := map[ID]time.Time{}
	err := db.view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketOrgs).ForEach(func(_, v []byte) error {
			var o Org
			if err := jsonUnmarshal(v, &o); err != nil {
				return err
			}
			if o.RetentionDays > 0 {
				cutoffs[o.ID] = now.AddDate(0, 0, -o.RetentionDays)
			}
			return nil
		})
	})
	if err != nil || len(cutoffs) == 0 {
		return out, err
	}
	// Candidates are found in a read transaction, so the hourly scan never holds the
	// store's one writer; the write re-reads each and deletes only what is still expired.
	for {
		var cands []Interview
		if err := db.view(ctx, func(tx Tx) error {
			var err error
			cands, err = expiredInterviews(tx, cutoffs, retentionBatch)
			return err
		}); err != nil {
			return out, err
		}
		if len(cands) == 0 {
			break
		}
		var rc EraseReceipt
		var arts []ErasedArtifact
		n := 0
		err := db.update(ctx, func(tx Tx) error {
			rc, arts, n = EraseReceipt{}, nil, 0
			old, err := stillExpired(tx, cands, cutoffs)
			if err != nil {
				return err
			}
			n = len(old)
			arts, err = db.eraseInterviews(tx, old, &rc)
			return err
		})
		if err != nil {
			return out, err
		}
		out.Interviews += n
		out.TranscriptMessages += rc.TranscriptMessages
		out.Sessions += rc.Sessions
		out.Annotations += rc.Annotations
		out.AgentTasks += rc.AgentTasks
		out.AnalysisVersions += len(rc.AnalysisVersions)
		out.ExportArtifacts = append(out.ExportArtifacts, arts...)
		out.FilesNotRemoved = append(out.FilesNotRemoved, db.removeBlobs(ctx, arts)...)
		if len(cands) < retentionBatch {
			break
		}
	}
	var arts []ErasedArtifact
	err = db.update(ctx, func(tx Tx) error {
		var err error
		arts, err = expireArtifactsContaining(tx, func(j Job, _ ExportResult) bool {
			cut, ok := cutoffs[j.OrgID]
			return ok && j.CreatedAt.Before(cut)
		})
		return err
	})
	if err != nil {
		return out, err
	}
	out.ExportArtifacts = append(out.ExportArtifacts, arts...)
	out.FilesNotRemoved = append(out.FilesNotRemoved, db.removeBlobs(ctx, arts)...)
	return out, nil
}

// stillExpired re-reads the candidate interviews in tx and returns those that still
// exist and are still past their organisation's cut-off (a participant may have answered
// since they were chosen).
func stillExpired(tx Tx, cands []Interview, cutoffs map[ID]time.Time) ([]Interview, error) {
	b := tx.Bucket(bucketInterviews)
	out := make([]Interview, 0, len(cands))
	for _, c := range cands {
		var iv Interview
		ok, err := getJSON(b, c.Partition().key(c.ID), &iv)
		if err != nil {
			return nil, err
		}
		if ok && lastActivity(iv).Before(cutoffs[iv.OrgID]) {
			out = append(out, iv)
		}
	}
	return out, nil
}

// expiredInterviews returns up to limit interviews of the organisations in cutoffs whose
// last activity is before their organisation's cut-off.
func expiredInterviews(tx Tx, cutoffs map[ID]time.Time, limit int) ([]Interview, error) {
	var out []Interview
	c := tx.Bucket(bucketInterviews).Cursor()
	for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
		var org ID
		copy(org[:], k)
		cut, ok := cutoffs[org]
		if !ok {
			// Keys lead with the organisation: skip the rest of this one's range.
			next := append(append([]byte(nil), k[:16]...), 0xff)
			if k, v = c.Seek(next); k == nil {
				break
			}
			k, v = c.Prev()
			continue
		}
		var iv Interview
		if err := jsonUnmarshal(v, &iv); err != nil {
			return nil, err
		}
		if lastActivity(iv).Before(cut) {
			out = append(out, iv)
		}
	}
	return out, nil
}

func lastActivity(iv Interview) time.Time {
	switch {
	case iv.CompletedAt != nil:
		return *iv.CompletedAt
	case iv.LastMessageAt != nil:
		return *iv.LastMessageAt
	}
	return iv.StartedAt
}
