package kv

import (
	"encoding/binary"
	"errors"
	"time"
)

// A study list row is the part of a study a list shows, in a compact binary form kept
// beside the JSON record: listing 50 studies then decodes a few bytes each instead of
// 50 full records with their briefs. putStudy writes both in the same transaction.
//
// Layout: version byte, mode byte, created, updated and launched (unix nanoseconds,
// launched 0 when never), uint32 design version, then the name.
const studyRowVersion = 1

var studyModes = []Mode{ModeTest, ModeLive, ModePaused, ModeClosed}

// putStudy stores a study record and its list row, and drops the cached record once
// tx commits.
func (db *DB) putStudy(tx Tx, st Study) error {
	key := st.Partition().key(st.ID)
	if err := putJSON(tx.Bucket(bucketStudies), key, st); err != nil {
		return err
	}
	if db.cache.studies != nil {
		tx.OnCommit(func() { db.cache.studies.invalidate(key) })
	}
	return tx.Bucket(bucketStudyIndex).Put(key, encodeStudyRow(st))
}

func encodeStudyRow(st Study) []byte {
	b := make([]byte, 2, 2+8*3+4+16+len(st.Name))
	b[0] = studyRowVersion
	for i, m := range studyModes {
		if m == st.Mode {
			b[1] = byte(i)
		}
	}
	var launched int64
	if st.LaunchedAt != nil {
		launched = st.LaunchedAt.UnixNano()
	}
	b = binary.BigEndian.AppendUint64(b, uint64(st.CreatedAt.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(st.UpdatedAt.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(launched))
	b = binary.BigEndian.AppendUint32(b, uint32(st.Version))
	b = append(b, st.ID[:]...)
	return append(b, st.Name...)
}

var errBadStudyRow = errors.New("malformed study list row")

// decodeStudyRow returns the study a list row describes, without partition or brief.
func decodeStudyRow(b []byte) (Study, error) {
	const fixed = 2 + 8*3 + 4 + 16
	if len(b) < fixed || b[0] != studyRowVersion || int(b[1]) >= len(studyModes) {
		return Study{}, errBadStudyRow
	}
	st := Study{Mode: studyModes[b[1]]}
	st.CreatedAt = time.Unix(0, int64(binary.BigEndian.Uint64(b[2:]))).UTC()
	st.UpdatedAt = time.Unix(0, int64(binary.BigEndian.Uint64(b[10:]))).UTC()
	if l := int64(binary.BigEndian.Uint64(b[18:])); l != 0 {
		t := time.Unix(0, l).UTC()
		st.LaunchedAt = &t
	}
	st.Version = int(binary.BigEndian.Uint32(b[26:]))
	copy(st.ID[:], b[30:46])
	st.Name = string(b[fixed:])
	return st, nil
}

// indexStudies builds the list rows of every existing study (schema 1 → 2).
func indexStudies(tx Tx) error {
	idx := tx.Bucket(bucketStudyIndex)
	return tx.Bucket(bucketStudies).ForEach(func(k, v []byte) error {
		var st Study
		if err := jsonUnmarshal(v, &st); err != nil {
			return err
		}
		return idx.Put(k, encodeStudyRow(st))
	})
}
