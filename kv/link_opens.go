package kv

import "context"

// Link opens: how many browsers opened a study's invite pages, the first step of the
// dashboard's funnel (link opened → interview started → completed). The participant
// page counts a browser once, on its first visit (it keeps a cookie saying it was
// counted), so the store holds one counter per study, never a row per visit: a flood
// of visits costs one small write each and no space.

// linkOpens is a study's counter.
type linkOpens struct {
	Opened int `json:"opened"`
}

// AddLinkOpen counts one more browser that opened an invite page of the study, in one
// transaction. It does not look the study up: the caller has just read it through its
// link.
func (db *DB) AddLinkOpen(ctx context.Context, p Partition, study ID) error {
	return db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketLinkOpens)
		var n linkOpens
		if _, err := getJSON(b, p.key(study), &n); err != nil {
			return err
		}
		n.Opened++
		return putJSON(b, p.key(study), n)
	})
}

// FindLinkOpens returns how many browsers have opened an invite page of the study
// (0 for a study never opened, or one outside the partition).
func (db *DB) FindLinkOpens(ctx context.Context, p Partition, study ID) (int, error) {
	var n linkOpens
	err := db.view(ctx, func(tx Tx) error {
		n = linkOpens{}
		_, err := getJSON(tx.Bucket(bucketLinkOpens), p.key(study), &n)
		return err
	})
	return n.Opened, err
}
