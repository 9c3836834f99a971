// Package chattest provides a local OpenAI-compatible chat-completions endpoint for
// tests of work that waits on a model: every request is held at a gate until the test
// answers it, so a simulation or an authoring job can be observed mid-way and stepped
// through. It is its own package so the moderator, jobs and server tests share one fake.
package chattest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Gated is the fake endpoint. URL is its base URL (append /v1 for an engine).
type Gated struct {
	URL string
	// Arrived receives the response schema name ("reply", "probe", "brief") of every
	// request as it reaches the gate.
	Arrived chan string
	srv     *httptest.Server
	gate    chan Answer
	closed  chan struct{}
	once    sync.Once
}

// Answer is how the test answers one held request. Probes are answered "" (move on);
// participant replies with Text, or a default sentence when Text is empty; authoring
// requests with a fixed brief.
type Answer struct {
	Fail bool   // answer 400 with an OpenAI error body, which engines do not retry
	Text string // the participant's reply
}

// NewGated starts the endpoint on 127.0.0.1; it stops (releasing every held request)
// when the test ends.
func NewGated(tb testing.TB) *Gated {
	tb.Helper()
	g := &Gated{Arrived: make(chan string, 256), gate: make(chan Answer), closed: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	tb.Cleanup(g.srv.Close)
	tb.Cleanup(g.Stop) // runs first: held handlers return
	return g
}

// Stop releases every held request; they end without an answer.
func (g *Gated) Stop() { g.once.Do(func() { close(g.closed) }) }

// WaitArrived waits (at most 10 s) for n requests to reach the gate.
func (g *Gated) WaitArrived(tb testing.TB, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-g.Arrived:
		case <-time.After(10 * time.Second):
			tb.Fatalf("only %d of %d requests reached the fake endpoint", i, n)
		}
	}
}

// Let answers one waiting (or the next) request with a.
func (g *Gated) Let(tb testing.TB, a Answer) {
	tb.Helper()
	select {
	case g.gate <- a:
	case <-time.After(10 * time.Second):
		tb.Fatal("no request waiting at the fake endpoint")
	}
}

func (g *Gated) serve(w http.ResponseWriter, r *http.Request) {
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
	g.Arrived <- kind
	var a Answer
	select {
	case a = <-g.gate:
	case <-r.Context().Done():
		return
	case <-g.closed:
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if a.Fail {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"The fake endpoint was told to fail.","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	var content any = map[string]any{"probe": ""}
	if kind == "brief" { // an authoring request: the brief Holding drafts too
		content = heldBrief
	}
	if kind == "reply" {
		text := a.Text
		if text == "" {
			text = "That is a fair question; I would have to think about it."
		}
		content = map[string]any{"reply": text}
	}
	c, _ := json.Marshal(content)
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-gated", "object": "chat.completion", "created": 1700000000, "model": "gated",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(c), "refusal": nil}, "finish_reason": "stop"}},
	})
	_, _ = w.Write(body)
}
