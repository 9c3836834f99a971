package kv

import (
	"context"
)

// SetStudyMode moves a study to target. paused is only reachable from live; every
// other target from every state; repeating the current value is a no-op. The first
// move to live validates the brief (present, titled, at least one verbatim question)
// and sets LaunchedAt once. Refusals are EINVALID at ["mode"]; ENOTFOUND for a
// study outside the partition.
func (db *DB) SetStudyMode(ctx context.Context, p Partition, id ID, target Mode) (Study, error) {
	var st Study
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if st, err = studyByID(tx, p, id); err != nil {
			return err
		}
		if st.Mode == target {
			return nil
		}
		bad := func(typ, msg string) error {
			return Invalid(FieldError{Loc: []any{"mode"}, Msg: msg, Type: typ})
		}
		if !target.Valid() {
			return bad("enum", "Input should be 'test', 'live', 'paused' or 'closed'.")
		}
		if target == ModePaused && st.Mode != ModeLive {
			return bad("invalid_transition", "Only a live study can be paused; its mode is "+string(st.Mode)+".")
		}
		now := db.Now()
		if target == ModeLive && st.LaunchedAt == nil {
			switch {
			case st.Brief == nil:
				return bad("go_live_invalid", "The study has no brief yet; wait for authoring to finish before going live.")
			case st.Brief.Title == nil || *st.Brief.Title == "":
				return bad("go_live_invalid", "The study needs a title before going live.")
			case len(st.Brief.VerbatimQuestions) == 0:
				return bad("go_live_invalid", "The study needs at least one verbatim question before going live.")
			}
			st.LaunchedAt = &now
		}
		st.Mode, st.UpdatedAt = target, now
		return db.putStudy(tx, st)
	})
	return st, err
}

// addBriefVersion saves an authored brief as the next design version of a study and
// makes it current.
func (db *DB) addBriefVersion(tx Tx, p Partition, id ID, guidance string, brief Brief) (Study, error) {
	st, err := studyByID(tx, p, id)
	if err != nil {
		return Study{}, err
	}
	return db.putBriefVersion(tx, st, BriefVersion{Guidance: guidance, Source: BriefAuthored, Brief: brief})
}

// putBriefVersion saves v's brief as st's next design version and makes it current:
// the one way a study gets a new version, whether authored (a refine) or written
// directly (EditBrief). Earlier versions stay as they were, so an interview keeps the
// version it started with and the app shows what changed from one to the next.
func (db *DB) putBriefVersion(tx Tx, st Study, v BriefVersion) (Study, error) {
	brief := v.Brief.Normalised()
	now := db.Now()
	st.Version++
	st.Brief, st.Name, st.UpdatedAt = &brief, studyName(brief), now
	v.StudyID, v.Version, v.Brief, v.CreatedAt = st.ID, st.Version, brief, now
	if err := putJSON(tx.Bucket(bucketBriefs), briefKey(st.Partition(), st.ID, st.Version), v); err != nil {
		return Study{}, err
	}
	return st, db.putStudy(tx, st)
}

// FindBriefVersions returns every design version of a study, oldest first.
func (db *DB) FindBriefVersions(ctx context.Context, p Partition, id ID) ([]BriefVersion, error) {
	var out []BriefVersion
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, id); err != nil {
			return err
		}
		prefix := p.key(id)
		c := tx.Bucket(bucketBriefs).Cursor()
		for k, v := c.Seek(prefix); k != nil && len(k) == len(prefix)+4 && string(k[:len(prefix)]) == string(prefix); k, v = c.Next() {
			var bv BriefVersion
			if err := jsonUnmarshal(v, &bv); err != nil {
				return err
			}
			out = append(out, bv)
		}
		return nil
	})
	return out, err
}

// FindBriefVersion returns one design version of a study: the brief an interview that
// started on that version keeps, however the study is refined later. ENOTFOUND for a
// study outside the partition or a version it never had.
func (db *DB) FindBriefVersion(ctx context.Context, p Partition, id ID, version int) (BriefVersion, error) {
	var bv BriefVersion
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, id); err != nil {
			return err
		}
		var err error
		bv, err = briefVersion(tx, p, id, version)
		return err
	})
	return bv, err
}

func briefVersion(tx Tx, p Partition, id ID, version int) (BriefVersion, error) {
	var bv BriefVersion
	if version < 1 {
		return bv, notFound("Design version")
	}
	ok, err := getJSON(tx.Bucket(bucketBriefs), briefKey(p, id, version), &bv)
	if err != nil {
		return BriefVersion{}, err
	}
	if !ok {
		return BriefVersion{}, notFound("Design version")
	}
	return bv, nil
}
