package kv

import "context"

// BriefEdit replaces a study's brief with one written directly (in the app or through
// the API) rather than authored from guidance.
type BriefEdit struct {
	Partition Partition
	StudyID   ID
	Brief     Brief
	// BaseVersion, when positive, is the design version the edit was made from (the
	// app's form carries it): if the study has another version by now, a refine that
	// finished or a colleague's edit meanwhile, nothing is saved (ECONFLICT
	// brief_changed) rather than that version being overwritten unseen.
	BaseVersion int
	// Idem, when set, returns the idempotency record of the request for the study as
	// saved; it is written in the edit's transaction.
	Idem func(Study) *IdemWrite
}

// ErrStudyClosed is the ECONFLICT refusal to edit the brief of a closed study.
func ErrStudyClosed() *Error {
	return Errorf(ECONFLICT, "study_closed", "The study is closed: set its mode to test or live to edit its brief.")
}

// EditBrief saves in.Brief as the study's next design version, exactly as a refine
// does (the same version record; earlier versions and the interviews that started on
// them keep theirs), with the idempotency record, in one transaction. A brief equal to
// the current one saves nothing and reports changed false. The brief is trimmed and
// checked first (ValidateBrief: EINVALID). ENOTFOUND for a study outside the
// partition; ECONFLICT study_closed for a closed study (paused and live studies may be
// edited), brief_changed when BaseVersion is no longer current.
func (db *DB) EditBrief(ctx context.Context, in BriefEdit) (st Study, changed bool, err error) {
	brief, err := ValidateBrief(in.Brief)
	if err != nil {
		return Study{}, false, err
	}
	err = db.update(ctx, func(tx Tx) error {
		var err error
		changed = false
		if st, err = studyByID(tx, in.Partition, in.StudyID); err != nil {
			return err
		}
		switch {
		case st.Mode == ModeClosed:
			return ErrStudyClosed()
		case in.BaseVersion > 0 && st.Version != in.BaseVersion:
			return Errorf(ECONFLICT, "brief_changed",
				"The brief has changed since this edit began (version "+itoa(in.BaseVersion)+" then, version "+itoa(st.Version)+" now).")
		}
		if st.Brief == nil || !st.Brief.Equal(brief) {
			if st, err = db.putBriefVersion(tx, st, BriefVersion{Source: BriefEdited, Brief: brief}); err != nil {
				return err
			}
			changed = true
		}
		if in.Idem != nil {
			return db.writeIdem(tx, in.Idem(st))
		}
		return nil
	})
	if err != nil {
		return Study{}, false, err
	}
	return st, changed, nil
}
