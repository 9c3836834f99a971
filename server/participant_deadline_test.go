package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/participant"
)

// deadlineEngine is the built-in engine as a model would be plugged in, noting whether
// each probe had a deadline no further off than a turn's.
type deadlineEngine struct {
	moderator.Builtin
	mu     sync.Mutex
	probes int
	bound  int // probes under a turn's deadline
}

func (e *deadlineEngine) Probe(ctx context.Context, req moderator.ProbeRequest) (string, error) {
	d, ok := ctx.Deadline()
	e.mu.Lock()
	e.probes++
	if ok && time.Until(d) <= participant.ParticipantTurnTimeout {
		e.bound++
	}
	e.mu.Unlock()
	return e.Builtin.Probe(ctx, req)
}

// TestParticipantModelTurnHasDeadline: the built-in interviewer cannot hang and runs
// under the request alone, but every call to an engine that is a model is bounded by
// participantTurnTimeout.
func TestParticipantModelTurnHasDeadline(t *testing.T) {
	engine := &deadlineEngine{}
	e := mustServeEngine(t, engine)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Rotas", "How do you plan your week?", "What would you change?"))
	p := e.participant(st.LinkToken)
	p.open()
	for _, a := range []string{"On paper.", "It gets lost.", "An app."} {
		if turn := p.mustSay(a); turn.Status != "in_progress" {
			break
		}
	}
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.probes == 0 || engine.bound != engine.probes {
		t.Fatalf("%d of %d probes had a turn's deadline", engine.bound, engine.probes)
	}
	if !moderator.Bounded(moderator.NewBuiltin()) || moderator.Bounded(engine) {
		t.Fatal("Bounded: only the built-in engine ends on its own")
	}
}
