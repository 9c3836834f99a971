package kv

import (
	"context"
	"strings"
	"time"
)

// Modalities: how the participant answered.
const (
	ModalityText  = "text"
	ModalityVoice = "voice"
)

// Interview statuses. Status only moves in_progress → completed or in_progress → failed.
const (
	InterviewInProgress = "in_progress"
	InterviewCompleted  = "completed"
	InterviewFailed     = "failed"
)

// Interview is one participant's interview. Its transcript is stored apart (see
// Transcript) and never leaves the service except through a redacted export.
type Interview struct {
	ID              ID                `json:"id"`
	OrgID           ID                `json:"org_id"`
	Env             Environment       `json:"env"`
	StudyID         ID                `json:"study_id"`
	Status          string            `json:"status"`
	IsTest          bool              `json:"is_test"`
	Modality        string            `json:"modality"`
	StartedAt       time.Time         `json:"started_at"`
	CompletedAt     *time.Time        `json:"completed_at"`
	DurationSeconds *int              `json:"duration_seconds"`
	EntryAttributes map[string]string `json:"entry_attributes"`
	InviteAudience  *string           `json:"invite_audience"`
	LinkToken       string            `json:"link_token"`
	DesignVersion   int               `json:"design_version"`
	LastMessageAt   *time.Time        `json:"last_message_at,omitempty"`
	Script          []byte            `json:"script,omitempty"`         // the interview's position, owned by jobs
	TranscriptLen   int               `json:"transcript_len,omitempty"` // messages in its transcript
	ActiveMS        int64             `json:"active_ms,omitempty"`      // sum of the capped gaps so far
	// ConsentedAt is when the participant ticked the study's consent before the
	// interview started (nil: the study asked for none); ConsentText is the text they
	// agreed to, as it read then.
	ConsentedAt *time.Time `json:"consented_at,omitempty"`
	ConsentText string     `json:"consent_text,omitempty"`
	// CompletionCode is the code a panel participant quotes to be paid, issued in the
	// transaction that completes the interview when its study asks for one.
	CompletionCode string `json:"completion_code,omitempty"`
}

// Partition returns the interview's (organisation, environment).
func (iv Interview) Partition() Partition { return Partition{Org: iv.OrgID, Env: iv.Env} }

// FindInterviewByID returns the interview in partition p, or ENOTFOUND.
func (db *DB) FindInterviewByID(ctx context.Context, p Partition, id ID) (Interview, error) {
	var iv Interview
	err := db.view(ctx, func(tx Tx) error {
		var err error
		iv, err = interviewByID(tx, p, id)
		return err
	})
	return iv, err
}

func interviewByID(tx Tx, p Partition, id ID) (Interview, error) {
	var iv Interview
	ok, err := getJSON(tx.Bucket(bucketInterviews), p.key(id), &iv)
	if err != nil {
		return Interview{}, err
	}
	if !ok {
		return Interview{}, notFound("Interview")
	}
	return iv, nil
}

// InterviewFilter selects a page of a partition's interviews, newest first.
type InterviewFilter struct {
	Partition Partition
	StudyID   *ID
	Status    string
	IsTest    *bool  // only rehearsals (true) or only real interviews (false)
	LinkID    *ID    // only interviews through this participant link (LinkIDOf)
	Modality  string // only text or only voice interviews
	// ContextHas keeps interviews with a context entry whose "key=value" contains it
	// (compared case-insensitively).
	ContextHas string
	// MinSeconds and MaxSeconds keep interviews whose duration_seconds is at least
	// MinSeconds and under MaxSeconds (0: no bound); with either set, an interview with
	// no duration yet is left out.
	MinSeconds, MaxSeconds int
	Limit                  int
	Cursor                 string
}

// FindInterviews returns one page of interviews matching the filter. EINVALID for a
// malformed cursor.
func (db *DB) FindInterviews(ctx context.Context, f InterviewFilter) (Page[Interview], error) {
	var after *ID
	if f.Cursor != "" {
		id, err := db.DecodeCursor(CursorInterviews, f.Partition, f.Cursor)
		if err != nil {
			return Page[Interview]{}, err
		}
		after = &id
	}
	page := Page[Interview]{Items: make([]Interview, 0, min(f.Limit+1, 201))}
	err := db.view(ctx, func(tx Tx) error {
		more, last, err := pageNewest(tx.Bucket(bucketInterviews), f.Partition.prefix(), after, f.Limit, func(v []byte) (bool, error) {
			var iv Interview
			if err := jsonUnmarshal(v, &iv); err != nil {
				return false, err
			}
			if (f.StudyID != nil && iv.StudyID != *f.StudyID) || (f.Status != "" && iv.Status != f.Status) ||
				(f.IsTest != nil && iv.IsTest != *f.IsTest) || (f.Modality != "" && iv.Modality != f.Modality) ||
				(f.LinkID != nil && (iv.LinkToken == "" || LinkIDOf(iv.LinkToken) != *f.LinkID)) ||
				(f.ContextHas != "" && !contextHas(iv.EntryAttributes, f.ContextHas)) || !f.lasted(iv) {
				return false, nil
			}
			page.Items = append(page.Items, iv)
			return true, nil
		})
		if more {
			page.Next = db.EncodeCursor(CursorInterviews, f.Partition, last)
		}
		return err
	})
	if len(page.Items) > f.Limit {
		page.Items = page.Items[:f.Limit]
	}
	return page, err
}

// lasted reports whether iv's duration is within the filter's bounds.
func (f InterviewFilter) lasted(iv Interview) bool {
	if f.MinSeconds == 0 && f.MaxSeconds == 0 {
		return true
	}
	if iv.DurationSeconds == nil {
		return false
	}
	d := *iv.DurationSeconds
	return d >= f.MinSeconds && (f.MaxSeconds == 0 || d < f.MaxSeconds)
}

// contextHas reports whether an entry "key=value" of ctx contains text, ignoring case.
func contextHas(ctx map[string]string, text string) bool {
	text = strings.ToLower(text)
	for k, v := range ctx {
		if strings.Contains(strings.ToLower(k+"="+v), text) {
			return true
		}
	}
	return false
}
