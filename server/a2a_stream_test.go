package server

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/moderator/chattest"
	"interviewd/server/research"
)

// nextEvent pulls one event of a stream, failing the test on an error, an early end or
// a stream that stays silent past a deadline generous for busy machines.
func nextEvent(tb testing.TB, next func() (a2a.Event, error, bool), what string) a2a.Event {
	tb.Helper()
	type pulled struct {
		ev  a2a.Event
		err error
		ok  bool
	}
	got := make(chan pulled, 1)
	go func() {
		ev, err, ok := next()
		got <- pulled{ev, err, ok}
	}()
	select {
	case p := <-got:
		if p.err != nil || !p.ok {
			tb.Fatalf("%s: stream ended (%v)", what, p.err)
		}
		return p.ev
	case <-time.After(2 * time.Minute):
		tb.Fatalf("%s: no event", what)
		return nil
	}
}

// isProgress reports whether ev is a working status a stream sends while a job moves.
func isProgress(ev a2a.Event) bool {
	st, ok := ev.(*a2a.TaskStatusUpdateEvent)
	return ok && st.Status.State == a2a.TaskStateWorking
}

// nextChange pulls events until one that is not a job's progress.
func nextChange(tb testing.TB, next func() (a2a.Event, error, bool), what string) a2a.Event {
	tb.Helper()
	for {
		if ev := nextEvent(tb, next, what); !isProgress(ev) {
			return ev
		}
	}
}

// The stream sends the task as soon as it starts, while its job is still held at the
// model (events are flushed as they happen, not when the answer ends); a second client
// resubscribes; the first goes away without changing anything; when the job fails
// both the artifact and the final status reach the subscriber.
func TestA2AStreamingAndResubscribe(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")

	ctx1, leave := context.WithCancel(context.Background())
	defer leave()
	first, stop1 := iter.Pull2(c.SendStreamingMessage(ctx1, &a2a.SendMessageRequest{
		Message: skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 1})}))
	defer stop1()
	ev := nextEvent(t, first, "first stream")
	task, ok := ev.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event %T %+v", ev, ev)
	}
	g.WaitArrived(t, 1) // the job is held: the event above came while it worked

	again, stop2 := iter.Pull2(e.mustA2A(t, "agent").SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}))
	defer stop2()
	if ev := nextEvent(t, again, "resubscribe"); ev.(*a2a.Task).ID != task.ID {
		t.Fatalf("resubscribed to %+v", ev)
	}

	// The first client goes away: its stream stops, the task goes on.
	stop1()
	leave()

	g.Let(t, chattestFail)
	art, ok := nextChange(t, again, "artifact").(*a2a.TaskArtifactUpdateEvent)
	if !ok || art.Artifact.ID != "result" || art.TaskID != task.ID {
		t.Fatalf("artifact event %+v", art)
	}
	status, ok := nextChange(t, again, "status").(*a2a.TaskStatusUpdateEvent)
	if !ok || status.Status.State != a2a.TaskStateFailed {
		t.Fatalf("status event %+v", status)
	}
	if _, err, more := again(); more || err != nil {
		t.Fatalf("stream goes on after the task ended: %v", err)
	}

	// A task that has ended cannot be subscribed to; GetTask reads it.
	for _, err := range c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if !errorsIs(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("subscribe to an ended task: %v", err)
		}
	}
}

// A quick skill streams as one event: the completed task.
func TestA2AStreamingQuickSkill(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	var events []a2a.Event
	for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: skillMessage("whoami", nil)}) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 1 || events[0].(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Fatalf("events %+v", events)
	}
}

// A stopping server ends the event streams it holds open (the task goes on), so its
// shutdown is not held up by a client waiting on a long job.
func TestA2AShutdownEndsStreams(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")
	events, stop := iter.Pull2(c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{
		Message: skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 1})}))
	defer stop()
	if task, ok := nextEvent(t, events, "stream").(*a2a.Task); !ok || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event %+v", task)
	}
	g.WaitArrived(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a stream open: %v", err)
	}
	for i := 0; ; i++ { // a progress event sent before the stop may still be read
		ev, err, more := events()
		if !more || err != nil {
			break
		}
		if !isProgress(ev) || i > 3 {
			t.Fatalf("the stream goes on after the server stopped: %+v", ev)
		}
	}
}

// While a simulation runs, its stream shows the transcript growing: working statuses
// whose data part is the simulation's status so far, each sent as the job moves.
func TestA2AStreamShowsSimulationProgress(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")
	events, stop := iter.Pull2(c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{
		Message: skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 3})}))
	defer stop()
	nextEvent(t, events, "task")
	g.WaitArrived(t, 1)
	turns := func(ev a2a.Event) int {
		msg := ev.(*a2a.TaskStatusUpdateEvent).Status.Message
		if msg == nil || len(msg.Parts) != 2 {
			t.Fatalf("progress without its status: %+v", msg)
		}
		var sim research.SimulationStatus
		artifactJSON(t, &a2a.Task{Artifacts: []*a2a.Artifact{{ID: "p", Parts: msg.Parts[1:]}}}, "p", &sim)
		return len(sim.Turns)
	}
	if ev := nextEvent(t, events, "progress"); !isProgress(ev) || turns(ev) != 0 {
		t.Fatalf("first progress %+v", ev)
	}
	g.Let(t, chattestAnswer("I'm a nurse."))
	for {
		ev := nextEvent(t, events, "turn 1")
		if !isProgress(ev) {
			t.Fatalf("the task moved on before turn 1 showed: %+v", ev)
		}
		if turns(ev) == 2 {
			break
		}
	}
	g.Let(t, chattestFail)
	if ev := nextChange(t, events, "end"); ev.(*a2a.TaskArtifactUpdateEvent).Artifact.ID != "result" {
		t.Fatalf("end %+v", ev)
	}
}

// A stream outlives the server's per-response write timeout: each event gets its own
// deadline, so a job that takes longer than the timeout still streams to its end.
func TestA2AStreamOutlivesWriteTimeout(t *testing.T) {
	g := chattest.NewGated(t)
	timeout := 2 * time.Second // ample for any one write on loopback, even on a loaded machine
	e := mustServeEngine(t, gatedEngine(t, g), func(c *Config, _ *kv.Options) { c.WriteTimeout = timeout })
	t.Cleanup(g.Stop)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")
	events, stop := iter.Pull2(c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{
		Message: skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 1})}))
	defer stop()
	nextEvent(t, events, "task")
	g.WaitArrived(t, 1)
	// The job is held past the write timeout (a wait for a duration, not for a
	// condition: what is asserted is only that the stream survives it).
	time.Sleep(5 * timeout / 2)
	g.Let(t, chattestFail)
	if ev := nextChange(t, events, "end"); ev.(*a2a.TaskArtifactUpdateEvent).Artifact.ID != "result" {
		t.Fatalf("end %+v", ev)
	}
}
