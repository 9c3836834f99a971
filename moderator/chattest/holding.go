package chattest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Holding is a fake endpoint that answers at once, except that every request carrying a
// marker (a persona, a piece of guidance) is held until the test ends or the client
// goes away. A node given it does all its other work normally, while one chosen job
// stays provably in flight at the model for as long as the test needs.
type Holding struct {
	URL string
	// Held receives the response schema name of every marked request as it is held.
	Held   chan string
	marker []byte
	srv    *httptest.Server
	closed chan struct{}
	once   sync.Once
}

// NewHolding starts the endpoint on 127.0.0.1, holding the requests whose body contains
// marker; it stops (releasing every held request unanswered) when the test ends.
func NewHolding(tb testing.TB, marker string) *Holding {
	tb.Helper()
	h := &Holding{Held: make(chan string, 256), marker: []byte(marker), closed: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.URL = h.srv.URL
	tb.Cleanup(h.srv.Close)
	tb.Cleanup(h.Stop) // runs first: held handlers return
	return h
}

// Stop releases every held request; they end without an answer.
func (h *Holding) Stop() { h.once.Do(func() { close(h.closed) }) }

// heldBrief is the brief the endpoint drafts for any unmarked authoring request.
var heldBrief = map[string]any{
	"refused": false, "refusal_reason": "", "title": "How people plan their week",
	"objectives":                 []string{"Learn how the participant plans a typical week."},
	"pre_interview_questions":    []string{},
	"verbatim_questions":         []string{"How did you plan last week?"},
	"estimated_duration_minutes": 15,
}

func (h *Holding) serve(w http.ResponseWriter, r *http.Request) {
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
	if bytes.Contains(raw, h.marker) {
		select {
		case h.Held <- kind:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-h.closed:
		}
		return
	}
	var content any
	switch kind {
	case "brief":
		content = heldBrief
	case "reply":
		content = map[string]any{"reply": "Mostly on paper on Sunday evening, then I forget about it by Wednesday."}
	default:
		content = map[string]any{"probe": ""}
	}
	c, _ := json.Marshal(content)
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-holding", "object": "chat.completion", "created": 1700000000, "model": "holding",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(c), "refusal": nil}, "finish_reason": "stop"}},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
