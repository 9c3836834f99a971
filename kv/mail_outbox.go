package kv

import (
	"context"
	"time"
)

// OutboxKeep is how many offline messages the outbox keeps; older ones are dropped as
// new ones arrive.
const OutboxKeep = 200

// OutboxMail is a message the server would have mailed had SMTP been configured: kept
// so a self-hoster without mail can still read a sign-in code or an invitation link
// (`interviewd mail outbox`).
type OutboxMail struct {
	ID        ID        `json:"id"`
	To        string    `json:"to"`
	Subject   string    `json:"subject"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// AddOutboxMail stores a message in the outbox, keeping the newest OutboxKeep, and
// returns it with its id and time.
func (db *DB) AddOutboxMail(ctx context.Context, m OutboxMail) (OutboxMail, error) {
	m.ID, m.CreatedAt = db.NewID(), db.Now()
	err := db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketOutbox)
		if err := putJSON(b, m.ID[:], m); err != nil {
			return err
		}
		n := 0
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		for k, _ := c.First(); k != nil && n > OutboxKeep; k, _ = c.First() {
			if err := b.Delete(k); err != nil {
				return err
			}
			n--
		}
		return nil
	})
	return m, err
}

// FindOutboxMail returns up to limit outbox messages, newest first (limit ≤ 0: all).
func (db *DB) FindOutboxMail(ctx context.Context, limit int) ([]OutboxMail, error) {
	out := []OutboxMail{}
	err := db.view(ctx, func(tx Tx) error {
		out = out[:0]
		c := tx.Bucket(bucketOutbox).Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			var m OutboxMail
			if err := jsonUnmarshal(v, &m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}
