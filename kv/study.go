package kv

import (
	"context"
	"fmt"
	"time"
)

// Mode is a study's lifecycle value. Only test and live are product modes; paused and
// closed are technical collection states.
type Mode string

const (
	ModeTest   Mode = "test"
	ModeLive   Mode = "live"
	ModePaused Mode = "paused"
	ModeClosed Mode = "closed"
)

// Valid reports whether m is one of the four modes.
func (m Mode) Valid() bool {
	return m == ModeTest || m == ModeLive || m == ModePaused || m == ModeClosed
}

// UntitledStudy is a study's name while its brief has no title.
const UntitledStudy = "Untitled study"

// Study is a research study in one partition. Brief is the current design version.
type Study struct {
	ID         ID          `json:"id"`
	OrgID      ID          `json:"org_id"`
	Env        Environment `json:"env"`
	Name       string      `json:"name"`
	Mode       Mode        `json:"mode"`
	LaunchedAt *time.Time  `json:"launched_at"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	Version    int         `json:"version"`
	ThreadID   ID          `json:"thread_id"`
	LinkToken  string      `json:"link_token"`
	Brief      *Brief      `json:"brief"`
	// Participant is what the study's participants are shown beside the interview
	// (study_settings.go); nil: the defaults.
	Participant *ParticipantSettings `json:"participant,omitempty"`
}

// Partition returns the study's (organisation, environment).
func (s Study) Partition() Partition { return Partition{Org: s.OrgID, Env: s.Env} }

// BriefVersion is one saved design version of a study.
type BriefVersion struct {
	StudyID  ID     `json:"study_id"`
	Version  int    `json:"version"`
	Guidance string `json:"guidance"`
	// Source says how the version was made: BriefAuthored (from guidance, by an
	// authoring job) or BriefEdited (written directly, in the app or through the API).
	Source    string    `json:"source,omitempty"`
	Brief     Brief     `json:"brief"`
	CreatedAt time.Time `json:"created_at"`
}

// How a design version was made (BriefVersion.Source). Versions saved before edits
// existed have no source: they were all authored.
const (
	BriefAuthored = ""
	BriefEdited   = "edit"
)

// StudyInput creates a study from its first authored brief.
type StudyInput struct {
	Partition Partition
	Brief     Brief
	Guidance  string
	ThreadID  ID // zero: a new thread
}

// CreateStudy saves a new study in test mode with design version 1 and its plain
// invite link, in one transaction. ENOTFOUND for an unknown organisation.
func (db *DB) CreateStudy(ctx context.Context, in StudyInput) (Study, error) {
	var s Study
	err := db.update(ctx, func(tx Tx) error {
		var err error
		s, err = db.createStudy(tx, in)
		return err
	})
	return s, err
}

func (db *DB) createStudy(tx Tx, in StudyInput) (Study, error) {
	if _, err := orgByID(tx, in.Partition.Org); err != nil {
		return Study{}, err
	}
	now := db.Now()
	brief := in.Brief.Normalised()
	s := Study{
		ID: db.NewID(), OrgID: in.Partition.Org, Env: in.Partition.Env, Mode: ModeTest,
		CreatedAt: now, UpdatedAt: now, Version: 1, ThreadID: in.ThreadID, Brief: &brief,
	}
	if s.ThreadID.IsZero() {
		s.ThreadID = NewV4()
	}
	s.Name = studyName(brief)
	link, err := db.createLink(tx, Link{OrgID: s.OrgID, Env: s.Env, StudyID: s.ID, Plain: true})
	if err != nil {
		return Study{}, err
	}
	s.LinkToken = link.Token
	if err := db.putStudy(tx, s); err != nil {
		return Study{}, err
	}
	v := BriefVersion{StudyID: s.ID, Version: 1, Guidance: in.Guidance, Brief: brief, CreatedAt: now}
	return s, putJSON(tx.Bucket(bucketBriefs), briefKey(in.Partition, s.ID, 1), v)
}

func studyName(b Brief) string {
	if b.Title != nil && *b.Title != "" {
		return *b.Title
	}
	return UntitledStudy
}

func briefKey(p Partition, study ID, version int) []byte {
	k := p.key(study)
	return append(k, byte(version>>24), byte(version>>16), byte(version>>8), byte(version))
}

// FindStudyByID returns the study in partition p. A study of another organisation or
// environment is ENOTFOUND, exactly like a missing one.
func (db *DB) FindStudyByID(ctx context.Context, p Partition, id ID) (Study, error) {
	var s Study
	err := db.readOne(ctx, bucketStudies, p.key(id), func(raw []byte) error {
		if raw == nil {
			return notFound("Study")
		}
		var err error
		s, err = DecodeStudy(raw)
		return err
	})
	return s, err
}

// ViewStudyRecord calls fn with the stored record of the study in partition p, exactly
// as committed; raw is only valid during the call and must not be changed. Two calls
// see equal bytes only if the study did not change in between, so a caller may keep
// something derived from raw for as long as the bytes stay the same. It returns
// ENOTFOUND, as FindStudyByID does, or fn's error.
func (db *DB) ViewStudyRecord(ctx context.Context, p Partition, id ID, fn func(raw []byte) error) error {
	key := p.key(id)
	if db.cache.studies == nil {
		return db.readOne(ctx, bucketStudies, key, func(raw []byte) error {
			if raw == nil {
				return notFound("Study")
			}
			return fn(raw)
		})
	}
	if raw, ok := db.cache.studies.get(key); ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(raw)
	}
	gen := db.cache.studies.generation()
	return db.readOne(ctx, bucketStudies, key, func(raw []byte) error {
		if raw == nil {
			return notFound("Study")
		}
		db.cache.studies.put(key, raw, gen)
		return fn(raw)
	})
}

// DecodeStudy decodes a record ViewStudyRecord handed over.
func DecodeStudy(raw []byte) (Study, error) {
	var s Study
	if err := jsonUnmarshal(raw, &s); err != nil {
		return Study{}, fmt.Errorf("decode study: %w", err)
	}
	return s, nil
}

func studyByID(tx Tx, p Partition, id ID) (Study, error) {
	var s Study
	ok, err := getJSON(tx.Bucket(bucketStudies), p.key(id), &s)
	if err != nil {
		return Study{}, err
	}
	if !ok {
		return Study{}, notFound("Study")
	}
	return s, nil
}

// StudyFilter selects a page of a partition's studies, newest created first.
type StudyFilter struct {
	Partition Partition
	Limit     int
	Cursor    string
}

// FindStudies returns one page of studies, without their briefs (Brief is nil).
// EINVALID for a malformed cursor.
func (db *DB) FindStudies(ctx context.Context, f StudyFilter) (Page[Study], error) {
	var after *ID
	if f.Cursor != "" {
		id, err := db.DecodeCursor(CursorStudies, f.Partition, f.Cursor)
		if err != nil {
			return Page[Study]{}, err
		}
		after = &id
	}
	page := Page[Study]{Items: make([]Study, 0, min(f.Limit+1, 201))}
	err := db.view(ctx, func(tx Tx) error {
		more, last, err := pageNewest(tx.Bucket(bucketStudyIndex), f.Partition.prefix(), after, f.Limit, func(v []byte) (bool, error) {
			st, err := decodeStudyRow(v)
			if err != nil {
				return false, err
			}
			st.OrgID, st.Env = f.Partition.Org, f.Partition.Env
			page.Items = append(page.Items, st)
			return true, nil
		})
		if more {
			page.Next = db.EncodeCursor(CursorStudies, f.Partition, last)
		}
		return err
	})
	if len(page.Items) > f.Limit {
		page.Items = page.Items[:f.Limit]
	}
	return page, err
}
