package kv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	bolt "go.etcd.io/bbolt"
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
}

// newLinkToken returns 128 random bits, base64url-encoded (22 characters).
func newLinkToken() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func (db *DB) createLink(tx *bolt.Tx, l Link) (Link, error) {
	l.Token = newLinkToken()
	l.CreatedAt = db.Now()
	return l, putJSON(tx.Bucket(bucketLinks), []byte(l.Token), l)
}

// FindLinkByToken returns the link, or ENOTFOUND.
func (db *DB) FindLinkByToken(ctx context.Context, token string) (Link, error) {
	var l Link
	err := db.view(ctx, func(tx *bolt.Tx) error {
		ok, err := getJSON(tx.Bucket(bucketLinks), []byte(token), &l)
		if err == nil && !ok {
			err = notFound("Link")
		}
		return err
	})
	return l, err
}
