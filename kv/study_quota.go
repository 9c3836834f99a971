package kv

import (
	"bytes"
	"context"
	"time"
)

// A study's quota: "stop at 30 completed". Once that many real interviews of the study
// have completed, the study is paused in the transaction that completes the last one,
// and its invite pages say the study has the interviews it needs. Only studies with a
// quota keep a count: setting a quota counts the completed interviews so far once (a
// scan of the partition's interviews), and each completion after adds one.

// StudyQuotaMax bounds a quota: far above any interview study, low enough to be a
// number a person typed.
const StudyQuotaMax = 100000

// StudyQuota is a study's quota and its count of completed real interviews.
type StudyQuota struct {
	Quota     int `json:"quota"` // 0: none
	Completed int `json:"completed"`
	// ReachedAt is when the quota paused the study; nil while it has not, or since the
	// quota was raised above the count or removed.
	ReachedAt *time.Time `json:"reached_at,omitempty"`
}

// Reached reports whether the quota is set and met.
func (q StudyQuota) Reached() bool { return q.Quota > 0 && q.Completed >= q.Quota }

// SetStudyQuota sets study's quota (0 removes it) in one transaction, and returns it
// with the study after: a live study whose count already meets the new quota is paused
// at once. EINVALID at ["quota"] outside 0 to StudyQuotaMax; ENOTFOUND for a study
// outside the partition.
func (db *DB) SetStudyQuota(ctx context.Context, p Partition, study ID, quota int) (StudyQuota, Study, error) {
	if quota < 0 || quota > StudyQuotaMax {
		return StudyQuota{}, Study{}, Invalid(FieldError{Loc: []any{"quota"}, Type: "range",
			Msg: "Quota is a whole number of completed interviews from 1 to 100000, or 0 for none.",
			Ctx: map[string]any{"ge": 0, "le": StudyQuotaMax}})
	}
	var (
		q  StudyQuota
		st Study
	)
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if st, err = studyByID(tx, p, study); err != nil {
			return err
		}
		b := tx.Bucket(bucketStudyQuota)
		q = StudyQuota{}
		ok, err := getJSON(b, p.key(study), &q)
		if err != nil {
			return err
		}
		if !ok {
			if q.Completed, err = countCompleted(tx, p, study); err != nil {
				return err
			}
		}
		q.Quota = quota
		if !q.Reached() {
			q.ReachedAt = nil
		} else if st.Mode == ModeLive {
			if st, err = db.pauseForQuota(tx, st, &q); err != nil {
				return err
			}
		}
		return putJSON(b, p.key(study), q)
	})
	return q, st, err
}

// FindStudyQuota returns study's quota (the zero StudyQuota when it has none).
func (db *DB) FindStudyQuota(ctx context.Context, p Partition, study ID) (StudyQuota, error) {
	var q StudyQuota
	err := db.view(ctx, func(tx Tx) error {
		q = StudyQuota{}
		_, err := getJSON(tx.Bucket(bucketStudyQuota), p.key(study), &q)
		return err
	})
	return q, err
}

// countCompleted counts the study's completed real interviews (not rehearsals).
func countCompleted(tx Tx, p Partition, study ID) (int, error) {
	n := 0
	c := tx.Bucket(bucketInterviews).Cursor()
	prefix := p.prefix()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var iv Interview
		if err := jsonUnmarshal(v, &iv); err != nil {
			return 0, err
		}
		if iv.StudyID == study && iv.Status == InterviewCompleted && !iv.IsTest {
			n++
		}
	}
	return n, nil
}

// quotaCompleted counts a completed real interview against its study's quota, if it
// has one, and pauses a live study that has now met it.
func (db *DB) quotaCompleted(tx Tx, iv Interview, now time.Time) error {
	p := iv.Partition()
	b := tx.Bucket(bucketStudyQuota)
	var q StudyQuota
	ok, err := getJSON(b, p.key(iv.StudyID), &q)
	if err != nil || !ok {
		return err
	}
	q.Completed++
	if q.Reached() {
		st, err := studyByID(tx, p, iv.StudyID)
		if err != nil {
			return err
		}
		if st.Mode == ModeLive {
			if _, err := db.pauseForQuota(tx, st, &q); err != nil {
				return err
			}
		}
	}
	return putJSON(b, p.key(iv.StudyID), q)
}

// pauseForQuota pauses a live study whose quota is met and notes when.
func (db *DB) pauseForQuota(tx Tx, st Study, q *StudyQuota) (Study, error) {
	now := db.Now()
	at := now.UTC()
	q.ReachedAt = &at
	st.Mode, st.UpdatedAt = ModePaused, now
	return st, db.putStudy(tx, st)
}
