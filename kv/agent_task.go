package kv

import (
	"bytes"
	"context"
	"fmt"
	"time"

	json "github.com/goccy/go-json"
)

// CursorAgentTasks is the cursor kind of the agent task list.
const CursorAgentTasks byte = 't'

// AgentTask is one task of the agent-to-agent (A2A) surface: a message another agent
// sent, the skill it asked for and where that stands. The store keeps the task as the
// surface renders it (Body) beside the few fields it filters on, so it knows nothing
// of the protocol's types. Tasks are listed newest first under their partition.
type AgentTask struct {
	ID        ID          `json:"id"`
	OrgID     ID          `json:"org_id"`
	Env       Environment `json:"env"`
	ContextID string      `json:"context_id"`
	Skill     string      `json:"skill,omitempty"`
	// State is the protocol's task state; Final says no further change is accepted.
	State string `json:"state"`
	Final bool   `json:"final,omitempty"`
	// JobID and JobKind name the background job a working task waits on.
	JobID   *ID     `json:"job_id,omitempty"`
	JobKind JobKind `json:"job_kind,omitempty"`
	// Scopes are the scopes of which a caller must hold at least one to see the task:
	// the ones its skill's operation needed (none for a task that never named a
	// skill). The surface decides who sees a task (AgentTaskFilter.Visible).
	Scopes []string `json:"scopes,omitempty"`
	// CreatedBy is the credential (API key id) that sent the task's first message.
	CreatedBy *ID `json:"created_by,omitempty"`
	// Body is the whole task as the surface sends it (JSON). It is stored after the
	// record's other fields rather than inside them, so writing a task never re-parses
	// it and filtering a list never decodes it.
	Body      json.RawMessage `json:"-"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Partition returns the task's (organisation, environment).
func (t AgentTask) Partition() Partition { return Partition{Org: t.OrgID, Env: t.Env} }

// encodeAgentTask is the stored form: the fields as one JSON line, a newline, the body.
func encodeAgentTask(t *AgentTask) ([]byte, error) {
	head, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return append(append(append(make([]byte, 0, len(head)+1+len(t.Body)), head...), '\n'), t.Body...), nil
}

// decodeAgentTask reads the stored form; withBody false leaves Body empty.
func decodeAgentTask(raw []byte, t *AgentTask, withBody bool) error {
	head, body, ok := bytes.Cut(raw, []byte{'\n'})
	if !ok {
		return fmt.Errorf("agent task record has no body")
	}
	if err := jsonUnmarshal(head, t); err != nil {
		return fmt.Errorf("decode agent task: %w", err)
	}
	if withBody {
		t.Body = append(json.RawMessage(nil), body...)
	}
	return nil
}

func putAgentTask(b Bucket, t *AgentTask) error {
	raw, err := encodeAgentTask(t)
	if err != nil {
		return err
	}
	return b.Put(t.Partition().key(t.ID), raw)
}

// getAgentTask returns the task at key of b, or errAgentTaskNotFound.
func getAgentTask(b Bucket, key []byte, t *AgentTask) error {
	raw := b.Get(key)
	if raw == nil {
		return errAgentTaskNotFound
	}
	return decodeAgentTask(raw, t, true)
}

var errAgentTaskNotFound = Errorf(ENOTFOUND, "task_not_found", "Task not found.")

// CreateAgentTask records a new task; t.ID must be a fresh UUIDv7 (NewID) so the
// list's order is the creation order.
func (db *DB) CreateAgentTask(ctx context.Context, t AgentTask) (AgentTask, error) {
	now := db.Now()
	t.CreatedAt, t.UpdatedAt = now, now
	err := db.update(ctx, func(tx Tx) error {
		return putAgentTask(tx.Bucket(bucketAgentTasks), &t)
	})
	return t, err
}

// FindAgentTask returns a task of partition p, or ENOTFOUND (also for another
// partition's task).
func (db *DB) FindAgentTask(ctx context.Context, p Partition, id ID) (AgentTask, error) {
	var t AgentTask
	err := db.view(ctx, func(tx Tx) error {
		return getAgentTask(tx.Bucket(bucketAgentTasks), p.key(id), &t)
	})
	return t, err
}

// UpdateAgentTask changes a task in one transaction: fn sees the stored task and
// changes it, or returns an error to keep it as it was (that error is returned). A
// task already Final is never passed to fn: the call returns it unchanged with
// changed false. fn may run more than once (commits are shared), so it must only
// change the task it is given.
func (db *DB) UpdateAgentTask(ctx context.Context, p Partition, id ID, fn func(t *AgentTask) error) (t AgentTask, changed bool, err error) {
	err = db.update(ctx, func(tx Tx) error {
		changed = false
		b := tx.Bucket(bucketAgentTasks)
		t = AgentTask{}
		if err := getAgentTask(b, p.key(id), &t); err != nil {
			return err
		}
		if t.Final {
			return nil
		}
		if err := fn(&t); err != nil {
			return err
		}
		t.UpdatedAt = db.Now()
		changed = true
		return putAgentTask(b, &t)
	})
	return t, changed, err
}

// AgentTaskFilter selects a page of a partition's tasks, newest first. ContextID and
// State, when set, keep only tasks that match them.
type AgentTaskFilter struct {
	Partition Partition
	ContextID string
	State     string
	// UpdatedAfter, when set, keeps only tasks changed after it.
	UpdatedAfter time.Time
	Cursor       string
	Limit        int
	// NoTotal skips counting every matching task (the total is then 0).
	NoTotal bool
	// Visible, when set, keeps only the tasks it accepts (those the caller may see);
	// pages and the total count only those, so paging past hidden tasks stays exact.
	Visible func(t *AgentTask) bool
}

func (f *AgentTaskFilter) match(t *AgentTask) bool {
	return (f.ContextID == "" || t.ContextID == f.ContextID) && (f.State == "" || t.State == f.State) &&
		(f.UpdatedAfter.IsZero() || t.UpdatedAt.After(f.UpdatedAfter)) && (f.Visible == nil || f.Visible(t))
}

// FindAgentTasks returns one page of tasks, newest first, with keyset paging (tasks
// created meanwhile never shift a page), and how many tasks match in all. A cursor
// that is not this list's, or not this partition's, is EINVALID.
func (db *DB) FindAgentTasks(ctx context.Context, f AgentTaskFilter) (Page[AgentTask], int, error) {
	total := 0
	var after *ID
	if f.Cursor != "" {
		id, err := db.DecodeCursor(CursorAgentTasks, f.Partition, f.Cursor)
		if err != nil {
			return Page[AgentTask]{}, 0, err
		}
		after = &id
	}
	page := Page[AgentTask]{Items: make([]AgentTask, 0, min(f.Limit+1, 101))}
	err := db.view(ctx, func(tx Tx) error {
		more, last, err := pageNewest(tx.Bucket(bucketAgentTasks), f.Partition.prefix(), after, f.Limit, func(v []byte) (bool, error) {
			var t AgentTask
			if err := decodeAgentTask(v, &t, true); err != nil {
				return false, err
			}
			if !f.match(&t) {
				return false, nil
			}
			page.Items = append(page.Items, t)
			return true, nil
		})
		if err != nil {
			return err
		}
		if more {
			page.Next = db.EncodeCursor(CursorAgentTasks, f.Partition, last)
		}
		if !f.NoTotal {
			total, err = countAgentTasks(tx.Bucket(bucketAgentTasks), f)
		}
		return err
	})
	if len(page.Items) > f.Limit {
		page.Items = page.Items[:f.Limit]
	}
	return page, total, err
}

// countAgentTasks counts the partition's tasks that match f, on every page.
func countAgentTasks(b Bucket, f AgentTaskFilter) (int, error) {
	prefix := f.Partition.prefix()
	n := 0
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var t AgentTask
		if err := decodeAgentTask(v, &t, false); err != nil {
			return 0, err
		}
		if f.match(&t) {
			n++
		}
	}
	return n, nil
}

// AgentTaskTTL is how long a task is kept after its last change once it has ended.
const AgentTaskTTL = 30 * 24 * time.Hour

// SweepAgentTasks deletes the tasks that ended more than AgentTaskTTL ago, and returns
// how many. Tasks still working or waiting for input are kept whatever their age.
func (db *DB) SweepAgentTasks(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx Tx) error {
		cutoff := db.Now().Add(-AgentTaskTTL)
		b := tx.Bucket(bucketAgentTasks)
		var expired [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var t AgentTask
			if err := decodeAgentTask(v, &t, false); err != nil || (t.Final && t.UpdatedAt.Before(cutoff)) {
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
