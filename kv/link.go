package kv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sort"
	"time"
)

// Link is an invite link: the study's plain link or a participant link carrying
// context. Every link is {base_url}/i/{Token}; the context lives here, never in the URL.
type Link struct {
	Token       string            `json:"token"`
	OrgID       ID                `json:"org_id"`
	Env         Environment       `json:"env"`
	StudyID     ID                `json:"study_id"`
	Plain       bool              `json:"plain"`
	Audience    string            `json:"audience,omitempty"`
	Context     map[string]string `json:"context,omitempty"`
	Note        string            `json:"note,omitempty"`
	InterviewID *ID               `json:"interview_id,omitempty"` // a person link's one interview
	CreatedAt   time.Time         `json:"created_at"`
	// Label names the link for the researcher ("Acme, enterprise"); never shown to the
	// participant. Disabled links offer no new interview (link_status.go).
	Label      string     `json:"label,omitempty"`
	Disabled   bool       `json:"disabled,omitempty"`
	DisabledAt *time.Time `json:"disabled_at,omitempty"`
}

// newLinkToken returns 128 random bits, base64url-encoded (22 characters).
func newLinkToken() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func (db *DB) createLink(tx Tx, l Link) (Link, error) {
	l.Token = newLinkToken()
	l.CreatedAt = db.Now()
	return l, putJSON(tx.Bucket(bucketLinks), []byte(l.Token), l)
}

// FindLinkByToken returns the link, or ENOTFOUND.
func (db *DB) FindLinkByToken(ctx context.Context, token string) (Link, error) {
	var l Link
	err := db.view(ctx, func(tx Tx) error {
		ok, err := getJSON(tx.Bucket(bucketLinks), []byte(token), &l)
		if err == nil && !ok {
			err = notFound("Link")
		}
		return err
	})
	return l, err
}

// NewLinkToken returns a fresh 128-bit link token, for callers that must know the URL
// before the link is committed (to record an idempotent response with it).
func NewLinkToken() string { return newLinkToken() }

// CreateParticipantLink mints a participant link for a study in partition p, in one
// transaction with its idempotency record (idem may be nil). The request must already
// be validated (ValidateLinkRequest). ENOTFOUND for a study outside the partition.
func (db *DB) CreateParticipantLink(ctx context.Context, p Partition, study ID, req LinkRequest, token string, idem *IdemWrite) (Link, Study, error) {
	var (
		l   Link
		raw []byte
	)
	err := db.update(ctx, func(tx Tx) error {
		// Only the study's existence is checked inside the shared commit; it is decoded
		// after, outside the one writer every other write waits for.
		rec := tx.Bucket(bucketStudies).Get(p.key(study))
		if rec == nil {
			return notFound("Study")
		}
		raw = append(raw[:0], rec...)
		var err error
		if l, err = db.putNewLink(tx, p, study, req, token); err != nil {
			return err
		}
		return db.writeIdem(tx, idem)
	})
	if err != nil {
		return Link{}, Study{}, err
	}
	// The link is committed whatever happens here: a study record that no longer
	// decodes (callers read the study just before) comes back as an error alongside
	// the committed link.
	st, err := DecodeStudy(raw)
	return l, st, err
}

// FindParticipantLinks returns a study's participant links (not its plain link), oldest
// first. ENOTFOUND for a study outside the partition.
func (db *DB) FindParticipantLinks(ctx context.Context, p Partition, study ID) ([]Link, error) {
	var out []Link
	err := db.view(ctx, func(tx Tx) error {
		if _, err := studyByID(tx, p, study); err != nil {
			return err
		}
		return tx.Bucket(bucketLinks).ForEach(func(_, v []byte) error {
			var l Link
			if err := jsonUnmarshal(v, &l); err != nil {
				return err
			}
			if l.StudyID == study && l.OrgID == p.Org && l.Env == p.Env && !l.Plain {
				out = append(out, l)
			}
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}
