package kv

import (
	"context"
	"fmt"
)

// A message to the A2A surface makes a task, and the message is answered only once
// that task is committed: a task answered and then lost to a crash would leave the
// agent holding an id nothing knows. When the message has an effect, the task is
// written in the effect's own transaction (IdemWrite.Task); otherwise it is committed
// alone (RecordAgentTask). Either way the message's id (its idempotency key) is
// remembered with the task, so the message sent again is answered with the same task.

// AgentTaskWrite is the task a message makes: a new task (New), or the next state of
// the stored task ID that the message continues (Change, applied to the task as stored).
type AgentTaskWrite struct {
	New *AgentTask
	ID  ID
	// Change may run more than once (commits are shared): it must only change the task
	// it is given.
	Change func(t *AgentTask) error
}

// ErrAgentTaskEnded refuses a message continuing a task that has ended.
var ErrAgentTaskEnded = Errorf(ECONFLICT, "task_ended", "The task has ended and takes no more messages.")

// writeAgentTask applies w in tx to partition p's tasks and returns the task as
// written. A continued task that is not found is ENOTFOUND; one that has ended is
// ErrAgentTaskEnded.
func (db *DB) writeAgentTask(tx Tx, p Partition, w *AgentTaskWrite) (AgentTask, error) {
	b := tx.Bucket(bucketAgentTasks)
	now := db.Now()
	if w.New != nil {
		t := *w.New
		if t.Partition() != p {
			return AgentTask{}, fmt.Errorf("agent task %s is not of the message's partition", t.ID)
		}
		t.CreatedAt, t.UpdatedAt = now, now
		return t, putAgentTask(b, &t)
	}
	var t AgentTask
	if err := getAgentTask(b, p.key(w.ID), &t); err != nil {
		return AgentTask{}, err
	}
	if t.Final {
		return AgentTask{}, ErrAgentTaskEnded
	}
	if err := w.Change(&t); err != nil {
		return AgentTask{}, err
	}
	t.UpdatedAt = now
	return t, putAgentTask(b, &t)
}

// RecordAgentTask commits the task w of a message whose idempotency key is key (""
// for a message without one) and fingerprint fp, remembering the key as that
// message's, in one transaction, and returns the task with IdemClaimed. When the key
// already names a task of a message with the same fingerprint (the message was sent
// before, or its effect's transaction wrote the task), nothing is written and that
// task is returned with IdemReplay. A key held by another request is IdemReused, and
// nothing is written. A claim the caller holds under key (ClaimAgentMessage) is
// finished by the write.
func (db *DB) RecordAgentTask(ctx context.Context, p Partition, key string, fp [32]byte, w AgentTaskWrite) (AgentTask, IdemOutcome, error) {
	var (
		t   AgentTask
		out IdemOutcome
	)
	err := db.update(ctx, func(tx Tx) error {
		t, out = AgentTask{}, IdemClaimed
		if key == "" {
			var err error
			t, err = db.writeAgentTask(tx, p, &w)
			return err
		}
		b := tx.Bucket(bucketIdempotency)
		now := db.Now()
		var rec idemRecord
		ok, err := getJSON(b, idemKey(p, key), &rec)
		if err != nil {
			return err
		}
		ok = ok && rec.live(now)
		switch {
		case ok && rec.Fingerprint != fp:
			out = IdemReused
			return nil
		case ok && rec.Done && rec.TaskID != nil:
			err := getAgentTask(tx.Bucket(bucketAgentTasks), p.key(*rec.TaskID), &t)
			if err == nil {
				out = IdemReplay
				return nil
			}
			if ErrorCode(err) != ENOTFOUND {
				return err
			}
			// The first task is gone (erased): this one takes its place.
		}
		if t, err = db.writeAgentTask(tx, p, &w); err != nil {
			return err
		}
		done := idemRecord{Fingerprint: fp, Done: true, TaskID: &t.ID, CreatedAt: now}
		if ok {
			done.Output, done.CreatedAt = rec.Output, rec.CreatedAt // the key is remembered from its first use
		}
		return putJSON(b, idemKey(p, key), done)
	})
	return t, out, err
}
