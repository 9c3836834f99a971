package server

import (
	"context"
	"iter"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	a2asurface "interviewd/server/a2a"
)

// A key holds at most a2aMaxStreams event streams at once: the next is refused as a
// rate limit (SERVER_ERROR with rate_limited and a wait, as REST's 429), another key is
// not affected, and once the streams end the key streams again.
func TestA2AStreamsPerKeyCapped(t *testing.T) {
	e, g := mustServeGated(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	e.mustKey("other", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustRehearsalStudy(e.orgA.ID, kv.EnvLive)
	c := e.mustA2A(t, "agent")

	// A task whose job is held at the model stays working, so its streams stay open.
	task := mustSend(t, c, skillMessage("simulate_study", map[string]any{"study_id": st.ID.String(), "max_turns": 1}), true)
	g.WaitArrived(t, 1)
	var streams []func() (a2a.Event, error, bool)
	for i := 0; i < a2asurface.MaxStreams; i++ {
		next, stop := iter.Pull2(c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}))
		defer stop()
		if ev := nextEvent(t, next, "stream "+strconv.Itoa(i+1)); ev.(*a2a.Task).ID != task.ID {
			t.Fatalf("stream %d: %+v", i+1, ev)
		}
		streams = append(streams, next)
	}

	// One more, over the wire: the JSON-RPC error carries REST's 429 code and wait.
	r := e.do("POST", "/v1/a2a", "agent", rpcCall("SubscribeToTask", `{"id":"`+string(task.ID)+`"}`))
	body := string(r.body)
	if !strings.Contains(body, `"code":-32000`) || !strings.Contains(body, `"rate_limited"`) || !strings.Contains(body, `"retry_after_seconds":"1"`) {
		t.Fatalf("stream %d: %d %s", a2asurface.MaxStreams+1, r.status, body)
	}
	for _, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: skillMessage("whoami", nil)}) {
		if !errorsIs(err, a2a.ErrServerError) || !strings.Contains(err.Error(), "event streams open") {
			t.Fatalf("streaming message over the cap: %v", err)
		}
		break
	}

	// Another key streams meanwhile.
	other := e.mustA2A(t, "other")
	for ev, err := range other.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: skillMessage("whoami", nil)}) {
		if err != nil {
			t.Fatalf("another key: %v", err)
		}
		if tk, ok := ev.(*a2a.Task); !ok || tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("another key: %+v", ev)
		}
	}

	// The job ends: every stream ends with it and gives its slot back.
	g.Let(t, chattestFail)
	for i, next := range streams {
		for {
			ev, err, ok := next()
			if err != nil {
				t.Fatalf("stream %d: %v", i+1, err)
			}
			if !ok {
				break
			}
			if st, isStatus := ev.(*a2a.TaskStatusUpdateEvent); isStatus && st.Status.State.Terminal() {
				if _, _, more := next(); more {
					t.Fatalf("stream %d goes on after the task ended", i+1)
				}
				break
			}
		}
	}
	got := 0
	for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: skillMessage("whoami", nil)}) {
		if err != nil {
			t.Fatalf("after the streams ended: %v", err)
		}
		if _, ok := ev.(*a2a.Task); ok {
			got++
		}
	}
	if got != 1 {
		t.Fatalf("after the streams ended: %d tasks streamed", got)
	}
}
