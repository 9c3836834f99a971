package jobs

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// gatedChat is a local chat-completions endpoint that answers one request each time
// the test lets it: every request waits at the gate until the test passes an answer,
// so a simulation on it can be held in the middle of a turn and stepped through.
// Probes are answered "" (move on), participant replies with the given text.
type gatedChat struct {
	srv     *httptest.Server
	arrived chan string // the kind ("reply", "probe", ...) of each request as it arrives
	gate    chan gateAnswer
	closed  chan struct{}
}

type gateAnswer struct {
	fail bool   // answer 400, which an engine does not retry
	text string // the participant's reply; "" for a default one
}

func mustGatedChat(tb testing.TB) *gatedChat {
	tb.Helper()
	g := &gatedChat{arrived: make(chan string, 256), gate: make(chan gateAnswer), closed: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	tb.Cleanup(g.srv.Close)
	tb.Cleanup(func() { close(g.closed) }) // runs first: blocked handlers return
	return g
}

func (g *gatedChat) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req struct {
		ResponseFormat struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	_ = json.Unmarshal(raw, &req)
	kind := req.ResponseFormat.JSONSchema.Name
	g.arrived <- kind
	var a gateAnswer
	select {
	case a = <-g.gate:
	case <-r.Context().Done():
		return
	case <-g.closed:
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if a.fail {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"The fake endpoint was told to fail.","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	content := map[string]any{"probe": ""}
	if kind == "reply" {
		text := a.text
		if text == "" {
			text = "That is a fair question; I would have to think about it."
		}
		content = map[string]any{"reply": text}
	}
	c, _ := json.Marshal(content)
	s := string(c)
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-gated", "object": "chat.completion", "created": 1700000000, "model": "gated",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": s, "refusal": nil}, "finish_reason": "stop"}},
	})
	_, _ = w.Write(body)
}

// engine returns an OpenAI engine on the fake that never retries.
func (g *gatedChat) engine(tb testing.TB) *OpenAI {
	tb.Helper()
	o, err := NewOpenAI(OpenAIConfig{URL: g.srv.URL + "/v1", Model: "gated", MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// waitArrived waits for n requests to reach the gate.
func (g *gatedChat) waitArrived(tb testing.TB, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-g.arrived:
		case <-time.After(10 * time.Second):
			tb.Fatalf("only %d of %d requests reached the fake endpoint", i, n)
		}
	}
}

// let answers one waiting (or next) request with a.
func (g *gatedChat) let(tb testing.TB, a gateAnswer) {
	tb.Helper()
	select {
	case g.gate <- a:
	case <-time.After(10 * time.Second):
		tb.Fatal("no request waiting at the fake endpoint")
	}
}
