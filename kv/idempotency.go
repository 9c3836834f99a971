package kv

import (
	"context"
	"time"
)

// Idempotency keys are remembered this long.
const IdemTTL = 7 * 24 * time.Hour

// idemStaleAfter frees a claim whose request never finished (the process died
// mid-request), so the key does not stay "in flight" for seven days.
const idemStaleAfter = 5 * time.Minute

// IdemWrite is the result a mutation records under its Idempotency-Key, committed in
// the same transaction as the mutation itself. Output is the operation's output as
// JSON, not a wire response: each surface renders a replay as it renders the first
// answer (REST with the operation's status, a tool call as its result), so the same key
// replays alike on any surface.
type IdemWrite struct {
	Partition   Partition
	Key         string
	Fingerprint [32]byte
	Output      []byte
	// Task, for a message to the A2A surface (whose messageId is the key), is the task
	// the message makes: written in the same transaction as the mutation, and
	// remembered under the key, so a message is answered only once its task and its
	// effect are committed together, and the message sent again finds that task.
	Task *AgentTaskWrite
}

// idemRecord is the stored claim. Records written before results were surface-neutral
// also hold the REST status; their body is the same output JSON (REST sent an
// operation's output unchanged as its body), so they replay unchanged and the status
// is ignored.
type idemRecord struct {
	Fingerprint [32]byte  `json:"fp"`
	Done        bool      `json:"done"`
	Status      int       `json:"status,omitempty"` // legacy records only; never written
	Output      []byte    `json:"body,omitempty"`
	TaskID      *ID       `json:"task_id,omitempty"` // the A2A task a message made
	CreatedAt   time.Time `json:"created_at"`
}

// live reports whether the record still holds its key at now: remembered for IdemTTL
// once finished, and a claim never finished (the process died mid-request) only for
// idemStaleAfter.
func (r *idemRecord) live(now time.Time) bool {
	return now.Sub(r.CreatedAt) <= IdemTTL && (r.Done || now.Sub(r.CreatedAt) < idemStaleAfter)
}

// IdemOutcome is what a claim found.
type IdemOutcome int

const (
	IdemClaimed  IdemOutcome = iota // first use (or expired): go ahead
	IdemReplay                      // same key and fingerprint, finished: replay the output
	IdemReused                      // same key, different fingerprint
	IdemInFlight                    // same key and fingerprint, still running
)

func idemKey(p Partition, key string) []byte { return append(p.prefix(), key...) }

// ClaimIdem claims key for a request with fingerprint fp, or reports what an earlier
// request under the key left. On IdemReplay it returns the recorded output.
func (db *DB) ClaimIdem(ctx context.Context, p Partition, key string, fp [32]byte) (IdemOutcome, []byte, error) {
	out, prior, err := db.ClaimAgentMessage(ctx, p, key, fp)
	return out, prior.Output, err
}

// IdemPrior is what a finished request under a key left: its output and, for a message
// to the A2A surface, the task the message made (nil for a record written before tasks
// were remembered with their message).
type IdemPrior struct {
	Output []byte
	TaskID *ID
}

// ClaimAgentMessage is ClaimIdem for a message to the A2A surface: on IdemReplay it
// also returns the task the first message made.
func (db *DB) ClaimAgentMessage(ctx context.Context, p Partition, key string, fp [32]byte) (IdemOutcome, IdemPrior, error) {
	var (
		out   IdemOutcome
		prior IdemPrior
	)
	err := db.update(ctx, func(tx Tx) error {
		prior = IdemPrior{}
		b := tx.Bucket(bucketIdempotency)
		now := db.Now()
		var rec idemRecord
		ok, err := getJSON(b, idemKey(p, key), &rec)
		if err != nil {
			return err
		}
		if ok && rec.live(now) {
			switch {
			case rec.Fingerprint != fp:
				out = IdemReused
			case !rec.Done:
				out = IdemInFlight
			default:
				out, prior = IdemReplay, IdemPrior{Output: rec.Output, TaskID: rec.TaskID}
			}
			return nil
		}
		out = IdemClaimed
		return putJSON(b, idemKey(p, key), idemRecord{Fingerprint: fp, CreatedAt: now})
	})
	return out, prior, err
}

// ReleaseIdem forgets an unfinished claim so a retry with the key can run: requests
// that failed validation, conflicted, were limited or failed are not remembered. A
// finished record is left alone.
func (db *DB) ReleaseIdem(ctx context.Context, p Partition, key string) error {
	return db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketIdempotency)
		var rec idemRecord
		ok, err := getJSON(b, idemKey(p, key), &rec)
		if err != nil || !ok || rec.Done {
			return err
		}
		return b.Delete(idemKey(p, key))
	})
}

// writeIdem finishes a claim inside the mutation's own transaction (w may be nil).
func (db *DB) writeIdem(tx Tx, w *IdemWrite) error {
	if w == nil {
		return nil
	}
	b := tx.Bucket(bucketIdempotency)
	rec := idemRecord{Fingerprint: w.Fingerprint, Done: true, Output: w.Output, CreatedAt: db.Now()}
	if w.Task != nil {
		t, err := db.writeAgentTask(tx, w.Partition, w.Task)
		if err != nil {
			return err
		}
		rec.TaskID = &t.ID
	}
	var claim idemRecord
	if ok, err := getJSON(b, idemKey(w.Partition, w.Key), &claim); err == nil && ok {
		rec.CreatedAt = claim.CreatedAt // the key is remembered from its first use
	}
	return putJSON(b, idemKey(w.Partition, w.Key), rec)
}

// SweepIdem deletes records older than IdemTTL and returns how many went.
func (db *DB) SweepIdem(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx Tx) error {
		now := db.Now()
		b := tx.Bucket(bucketIdempotency)
		var expired [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var rec idemRecord
			if err := jsonUnmarshal(v, &rec); err != nil || now.Sub(rec.CreatedAt) > IdemTTL {
				expired = append(expired, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(expired)
		return nil
	})
	return n, err
}
