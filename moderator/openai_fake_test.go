package moderator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeChat is a local chat-completions endpoint. It records every request and answers
// each with the next queued reply (the last one repeats once the queue runs out).
type fakeChat struct {
	srv     *httptest.Server
	arrived chan struct{} // one value per request, sent before it is answered
	release chan struct{} // closed at cleanup so blocked handlers return

	mu      sync.Mutex
	reqs    []fakeRequest
	replies []fakeReply
}

type fakeRequest struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

type fakeReply struct {
	status int
	header map[string]string
	body   string
	block  bool // hold the request until the client gives up
}

func mustFakeChat(tb testing.TB, replies ...fakeReply) *fakeChat {
	tb.Helper()
	f := &fakeChat{
		arrived: make(chan struct{}, 64),
		release: make(chan struct{}),
		replies: replies,
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.srv.Close)
	tb.Cleanup(func() { close(f.release) }) // runs before srv.Close
	return f
}

func (f *fakeChat) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Raw: raw})
	reply := fakeReply{status: http.StatusInternalServerError, body: `{"error":{"message":"fake has no reply queued"}}`}
	if len(f.replies) > 0 {
		reply = f.replies[0]
		if len(f.replies) > 1 {
			f.replies = f.replies[1:]
		}
	}
	f.mu.Unlock()
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	if reply.block {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	for k, v := range reply.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.status)
	_, _ = io.WriteString(w, reply.body)
}

func (f *fakeChat) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

// URL returns the base URL an engine is configured with.
func (f *fakeChat) URL() string { return f.srv.URL + "/v1" }

// chatOK returns a chat completion whose first choice carries content.
func chatOK(tb testing.TB, content string) fakeReply {
	tb.Helper()
	return fakeReply{status: http.StatusOK, body: chatCompletion(tb, &content, nil, "stop")}
}

// chatJSON returns a chat completion whose content is v encoded as JSON.
func chatJSON(tb testing.TB, v any) fakeReply {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return chatOK(tb, string(b))
}

// chatRefusal returns a completion refused through OpenAI's refusal field.
func chatRefusal(tb testing.TB, reason string) fakeReply {
	tb.Helper()
	return fakeReply{status: http.StatusOK, body: chatCompletion(tb, nil, &reason, "stop")}
}

func chatCompletion(tb testing.TB, content, refusal *string, finish string) string {
	tb.Helper()
	b, err := json.Marshal(map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   "test-model",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": refusal},
			"logprobs":      nil,
			"finish_reason": finish,
		}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// chatError returns a non-2xx reply with the standard error body.
func chatError(status int, message, typ string, header map[string]string) fakeReply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}})
	return fakeReply{status: status, body: string(b), header: header}
}

// sleepLog is an injected Sleep that records each wait and returns at once.
type sleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepLog) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// mustOpenAI returns an engine pointed at f with a recording Sleep.
func mustOpenAI(tb testing.TB, f *fakeChat, cfg OpenAIConfig) (*OpenAI, *sleepLog) {
	tb.Helper()
	log := &sleepLog{}
	cfg.URL = f.URL()
	if cfg.Sleep == nil {
		cfg.Sleep = log.sleep
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		tb.Fatalf("NewOpenAI: %v", err)
	}
	return o, log
}

// validBrief is a model reply that passes every check.
func validBrief() map[string]any {
	return map[string]any{
		"refused":                    false,
		"refusal_reason":             "",
		"title":                      "Grocery delivery habits",
		"objectives":                 []string{"Learn why people switch delivery services"},
		"pre_interview_questions":    []string{"Have you ordered groceries online in the last month?"},
		"verbatim_questions":         []string{"Tell me about the last time you ordered groceries online.", "What would make you switch services?"},
		"estimated_duration_minutes": 20,
	}
}
