package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Recruitment: what a researcher needs to run participant links. A link has a label
// (the researcher's name for it), can be disabled and enabled again, and keeps counts
// of what happened through it: browsers that opened it, interviews started and
// completed, and when the last of these happened. The counts are one small record per
// link (bucketLinkStats), changed in the transaction that does what it counts, never a
// record per visit. Rehearsals (a study in test mode) are not counted: the counts are
// the study's real recruitment.

// Label and batch limits.
const (
	LinkLabelMaxChars = 200
	// LinksBatchMax bounds one batch of links (CreateParticipantLinks): a batch is one
	// transaction, and a thousand people is a large study's whole panel.
	LinksBatchMax = 1000
)

// Link progress: the furthest any participant got through a link.
const (
	LinkUnopened  = "unopened"
	LinkOpened    = "opened"
	LinkStarted   = "started"
	LinkCompleted = "completed"
)

// appendLabelErrors checks and normalises a link request's label: trimmed, one line,
// at most LinkLabelMaxChars, no control characters. Empty is allowed (no label).
func appendLabelErrors(errs []FieldError, r *LinkRequest) []FieldError {
	label, err := normaliseLabel(r.Label)
	if err != nil {
		return append(errs, *err)
	}
	r.Label = label
	return errs
}

// normaliseLabel returns label trimmed, or the rule it breaks (at ["label"]).
func normaliseLabel(label string) (string, *FieldError) {
	label = strings.TrimFunc(label, unicode.IsSpace)
	if utf8.RuneCountInString(label) > LinkLabelMaxChars {
		return "", &FieldError{Loc: []any{"label"}, Type: "string_too_long",
			Msg: "Label may be at most 200 characters long after trimming surrounding white space.",
			Ctx: map[string]any{"max_length": LinkLabelMaxChars}}
	}
	if strings.IndexFunc(label, unicode.IsControl) >= 0 {
		return "", &FieldError{Loc: []any{"label"}, Type: "control_character",
			Msg: "Label must be one line without control characters."}
	}
	return label, nil
}

// LinkIDOf returns a link's id: derived from its token (a one-way hash shaped as a
// UUID), so every link has one without a stored field or a migration, and the id names
// the link in URLs and logs without revealing the token, which is the secret.
func LinkIDOf(token string) ID {
	sum := sha256.Sum256([]byte("interviewd link id\x00" + token))
	var id ID
	copy(id[:], sum[:16])
	id[6] = 0x40 | (id[6] & 0x0f)
	id[8] = 0x80 | (id[8] & 0x3f)
	return id
}

// putNewLink stores a new participant link of study under token. The request must be
// validated (ValidateLinkRequest). ECONFLICT on the (never expected) reuse of a token.
func (db *DB) putNewLink(tx Tx, p Partition, study ID, req LinkRequest, token string) (Link, error) {
	l := Link{Token: token, OrgID: p.Org, Env: p.Env, StudyID: study, Audience: req.Audience,
		Context: req.Context, Note: req.Note, Label: req.Label, CreatedAt: db.Now()}
	if tx.Bucket(bucketLinks).Get([]byte(token)) != nil {
		return Link{}, Errorf(ECONFLICT, "token_collision", "Link token collision; retry.")
	}
	return l, putJSON(tx.Bucket(bucketLinks), []byte(token), l)
}

// LinkStats are a link's counts.
type LinkStats struct {
	Opened    int `json:"opened"`
	Started   int `json:"started"`
	Completed int `json:"completed"`
	// LastActivityAt is when the link was last opened, or an interview through it
	// started or completed; nil when nothing has happened yet.
	LastActivityAt *time.Time `json:"last_activity_at,omitempty"`
}

// Progress returns the furthest any participant got: LinkCompleted, LinkStarted,
// LinkOpened or LinkUnopened.
func (s LinkStats) Progress() string {
	switch {
	case s.Completed > 0:
		return LinkCompleted
	case s.Started > 0:
		return LinkStarted
	case s.Opened > 0:
		return LinkOpened
	}
	return LinkUnopened
}

// LinkStatus is a participant link with its counts.
type LinkStatus struct {
	Link
	ID    ID
	Stats LinkStats
}

// linkEvent adds to a link's counts in tx.
func linkEvent(tx Tx, token string, now time.Time, add func(*LinkStats)) error {
	b := tx.Bucket(bucketLinkStats)
	var st LinkStats
	if _, err := getJSON(b, []byte(token), &st); err != nil {
		return err
	}
	add(&st)
	at := now.UTC()
	st.LastActivityAt = &at
	return putJSON(b, []byte(token), st)
}

// CountLinkOpen counts one more browser that opened an invite page of the study, for
// the study's funnel (AddLinkOpen) and for the link itself, in one transaction.
func (db *DB) CountLinkOpen(ctx context.Context, p Partition, study ID, token string) error {
	return db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketLinkOpens)
		var n linkOpens
		if _, err := getJSON(b, p.key(study), &n); err != nil {
			return err
		}
		n.Opened++
		if err := putJSON(b, p.key(study), n); err != nil {
			return err
		}
		return linkEvent(tx, token, db.Now(), func(s *LinkStats) { s.Opened++ })
	})
}

// interviewStarted counts a new interview against its link, in the transaction that
// stores it. Rehearsals are not counted.
func interviewStarted(tx Tx, iv Interview, now time.Time) error {
	if iv.IsTest || iv.LinkToken == "" {
		return nil
	}
	return linkEvent(tx, iv.LinkToken, now, func(s *LinkStats) { s.Started++ })
}

// interviewStored is called in every transaction that stores a turn of an interview
// that was in progress: when the turn completed it, the interview is counted against
// its link and its study's quota (study_quota.go). Rehearsals are not counted.
func (db *DB) interviewStored(tx Tx, iv Interview) error {
	if iv.Status != InterviewCompleted || iv.IsTest {
		return nil
	}
	now := db.Now()
	if iv.LinkToken != "" {
		if err := linkEvent(tx, iv.LinkToken, now, func(s *LinkStats) { s.Completed++ }); err != nil {
			return err
		}
	}
	return db.quotaCompleted(tx, iv, now)
}

// studyLinks calls fn for each participant link of study in partition p (not its plain
// link), in the order of the links bucket.
func studyLinks(tx Tx, p Partition, study ID, fn func(Link) error) error {
	return tx.Bucket(bucketLinks).ForEach(func(_, v []byte) error {
		var l Link
		if err := jsonUnmarshal(v, &l); err != nil {
			return err
		}
		if l.StudyID == study && l.OrgID == p.Org && l.Env == p.Env && !l.Plain {
			return fn(l)
		}
		return nil
	})
}

func linkStats(tx Tx, token string) (LinkStats, error) {
	var st LinkStats
	_, err := getJSON(tx.Bucket(bucketLinkStats), []byte(token), &st)
	return st, err
}

// FindLinkStatuses returns a study's participant links with their counts, newest
// first. ENOTFOUND for a study outside the partition.
func (db *DB) FindLinkStatuses(ctx context.Context, p Partition, study ID) ([]LinkStatus, error) {
	var out []LinkStatus
	err := db.view(ctx, func(tx Tx) error {
		out = out[:0]
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		return studyLinks(tx, p, study, func(l Link) error {
			st, err := linkStats(tx, l.Token)
			out = append(out, LinkStatus{Link: l, ID: LinkIDOf(l.Token), Stats: st})
			return err
		})
	})
	sortLinkStatuses(out)
	return out, err
}

// sortLinkStatuses orders links newest first; links of one batch share their instant,
// and their ids order them stably.
func sortLinkStatuses(ls []LinkStatus) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return bytes.Compare(a.ID[:], b.ID[:]) < 0
	})
}

// LinkPatch changes a participant link: nil fields are left as they are.
type LinkPatch struct {
	Label    *string
	Disabled *bool
}

// UpdateParticipantLink applies patch to the participant link id of study, in one
// transaction, and returns the link with its counts. A disabled link offers no new
// interview (its page says the study is closed); interviews already under way through
// it continue for the browsers they belong to. EINVALID for a bad label; ENOTFOUND for
// a study or link outside the partition.
func (db *DB) UpdateParticipantLink(ctx context.Context, p Partition, study, id ID, patch LinkPatch) (LinkStatus, error) {
	if patch.Label != nil {
		label, ferr := normaliseLabel(*patch.Label)
		if ferr != nil {
			return LinkStatus{}, Invalid(*ferr)
		}
		patch.Label = &label
	}
	var out LinkStatus
	err := db.update(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		var found *Link
		err := studyLinks(tx, p, study, func(l Link) error {
			if found == nil && LinkIDOf(l.Token) == id {
				found = &l
			}
			return nil
		})
		if err != nil {
			return err
		}
		if found == nil {
			return notFound("Link")
		}
		l := *found
		changed := false
		if patch.Label != nil && *patch.Label != l.Label {
			l.Label, changed = *patch.Label, true
		}
		if patch.Disabled != nil && *patch.Disabled != l.Disabled {
			l.Disabled, changed = *patch.Disabled, true
			l.DisabledAt = nil
			if l.Disabled {
				now := db.Now().UTC()
				l.DisabledAt = &now
			}
		}
		if changed {
			if err := putJSON(tx.Bucket(bucketLinks), []byte(l.Token), l); err != nil {
				return err
			}
		}
		st, err := linkStats(tx, l.Token)
		out = LinkStatus{Link: l, ID: id, Stats: st}
		return err
	})
	return out, err
}

// CreateParticipantLinks mints a batch of participant links of study in one
// transaction with its idempotency record (idem, given the links, may be nil or
// return nil): all of them or none.
// Each request must be validated (ValidateLinkRequest) and have its own fresh token
// (NewLinkToken), in the same order. EINVALID for an empty batch or one over
// LinksBatchMax; ENOTFOUND for a study outside the partition.
func (db *DB) CreateParticipantLinks(ctx context.Context, p Partition, study ID, reqs []LinkRequest, tokens []string, idem func([]Link) *IdemWrite) ([]Link, error) {
	if len(reqs) == 0 || len(reqs) > LinksBatchMax || len(tokens) != len(reqs) {
		return nil, Invalid(FieldError{Loc: []any{"links"}, Type: "too_long",
			Msg: "A batch has 1 to 1000 links.", Ctx: map[string]any{"max_length": LinksBatchMax}})
	}
	out := make([]Link, len(reqs))
	err := db.update(ctx, func(tx Tx) error {
		if tx.Bucket(bucketStudies).Get(p.key(study)) == nil {
			return notFound("Study")
		}
		for i, req := range reqs {
			l, err := db.putNewLink(tx, p, study, req, tokens[i])
			if err != nil {
				return err
			}
			out[i] = l
		}
		if idem == nil {
			return nil
		}
		return db.writeIdem(tx, idem(out))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
