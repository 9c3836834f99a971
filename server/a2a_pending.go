package server

import (
	"context"
	"sync"

	"interviewd/kv"
)

// a2aPending holds the tasks that ended in their first answer (a quick skill: nothing
// left to follow) while their record is being committed. Their answer does not wait
// for that commit: the operation's own effect, if any, is durable already, and the
// record of a read is no reason to hold an agent up for an fsync. Until the commit, the
// task is served from here, so a GetTask right after the answer finds it and a
// ListTasks waits for the writes of its partition. A clean shutdown waits for every
// write (Server.Shutdown); a crash in the few milliseconds before a commit can lose
// such a record, never the outcome of an operation.
type a2aPending struct {
	mu     sync.Mutex
	tasks  map[kv.ID]*pendingTask
	writes sync.WaitGroup
}

type pendingTask struct {
	rec  kv.AgentTask
	done chan struct{}
}

func newA2APending() *a2aPending { return &a2aPending{tasks: map[kv.ID]*pendingTask{}} }

// recordEndedTask records a task that ended in its first answer: behind the answer on
// a store of one node, before it when the store is shared by several (an agent's next
// request may reach another node, which must find the task).
func (s *Server) recordEndedTask(ctx context.Context, rec kv.AgentTask) error {
	if s.db.Shared() {
		_, err := s.db.CreateAgentTask(ctx, rec)
		return err
	}
	s.writeTaskBehind(rec)
	return nil
}

// writeTaskBehind commits rec in the background, serving it from memory meanwhile. A
// failed write is logged; the answer the agent already has stands.
func (s *Server) writeTaskBehind(rec kv.AgentTask) {
	p := s.a2aPending
	pt := &pendingTask{rec: rec, done: make(chan struct{})}
	p.mu.Lock()
	p.tasks[rec.ID] = pt
	p.mu.Unlock()
	p.writes.Add(1)
	go func() {
		defer p.writes.Done()
		if _, err := s.db.CreateAgentTask(context.WithoutCancel(s.ctx), rec); err != nil {
			s.log.Error().Err(err).Str("task_id", rec.ID.String()).Msg("could not record an A2A task")
		}
		p.mu.Lock()
		delete(p.tasks, rec.ID)
		p.mu.Unlock()
		close(pt.done)
	}()
}

// find returns a pending task of partition part.
func (p *a2aPending) find(part kv.Partition, id kv.ID) (kv.AgentTask, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pt, ok := p.tasks[id]
	if !ok || pt.rec.Partition() != part {
		return kv.AgentTask{}, false
	}
	return pt.rec, true
}

// settled waits until the tasks of part pending now are committed (or ctx ends), so a
// list shows every task answered before it was asked for.
func (p *a2aPending) settled(ctx context.Context, part kv.Partition) {
	p.mu.Lock()
	var wait []chan struct{}
	for _, pt := range p.tasks {
		if pt.rec.Partition() == part {
			wait = append(wait, pt.done)
		}
	}
	p.mu.Unlock()
	for _, done := range wait {
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// wait blocks until every write begun has ended.
func (p *a2aPending) wait() { p.writes.Wait() }
