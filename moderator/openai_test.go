package moderator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
)

const testKey = "sk-test-0123456789abcdef"

func TestNewOpenAI(t *testing.T) {
	tests := []struct {
		name         string
		url          string
		wantEndpoint string
	}{
		{"OK", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/chat/completions"},
		{"OKTrailingSlash", "https://api.example.com/v1/", "https://api.example.com/v1/chat/completions"},
		{"OKNoPath", "http://localhost:11434", "http://localhost:11434/chat/completions"},
		{"OKKeepsQuery", "https://gw.example.com/openai/v1?api-version=2024-10-21", "https://gw.example.com/openai/v1/chat/completions?api-version=2024-10-21"},
		{"ErrEmpty", "", ""},
		{"ErrRelative", "/v1", ""},
		{"ErrNoScheme", "localhost:8080/v1", ""},
		{"ErrOtherScheme", "ftp://user:hunter2@example.com/v1", ""},
		{"ErrNoHost", "http:///v1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewOpenAI(OpenAIConfig{URL: tt.url})
			if tt.wantEndpoint == "" {
				if err == nil {
					t.Fatalf("NewOpenAI(%q) = nil error, want one", tt.url)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error %q echoes the URL's password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewOpenAI(%q): %v", tt.url, err)
			}
			if o.endpoint != tt.wantEndpoint {
				t.Errorf("endpoint = %q, want %q", o.endpoint, tt.wantEndpoint)
			}
		})
	}
}

func TestNewOpenAIDefaults(t *testing.T) {
	o, err := NewOpenAI(OpenAIConfig{URL: "http://127.0.0.1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.timeout != 60*time.Second || o.maxRetries != 3 || o.backoff != 500*time.Millisecond || o.client == nil || o.sleep == nil {
		t.Errorf("defaults = timeout %v, retries %d, backoff %v, client %v, sleep set %v", o.timeout, o.maxRetries, o.backoff, o.client, o.sleep != nil)
	}
	none, err := NewOpenAI(OpenAIConfig{URL: "http://127.0.0.1/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if none.maxRetries != 0 {
		t.Errorf("MaxRetries -1 gave %d retries, want 0", none.maxRetries)
	}
}

func TestOpenAIAuthorRequestShape(t *testing.T) {
	f := mustFakeChat(t, chatJSON(t, validBrief()))
	o, _ := mustOpenAI(t, f, OpenAIConfig{Key: testKey, Model: "gpt-test"})

	_, err := o.Author(t.Context(), AuthorRequest{
		Guidance: "Why do people switch grocery delivery services?",
		Files:    []FileText{{Name: "notes.txt", Text: "Churn rose 12% in March."}},
	})
	if err != nil {
		t.Fatalf("Author: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if r.Body["model"] != "gpt-test" {
		t.Errorf("model = %v", r.Body["model"])
	}
	if _, ok := r.Body["temperature"].(float64); !ok {
		t.Errorf("temperature missing: %v", r.Body["temperature"])
	}
	msgs := messagesOf(t, r)
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
		t.Fatalf("messages = %+v, want system then user", msgs)
	}
	for _, want := range []string{"Why do people switch grocery delivery services?", `<file name="notes.txt">`, "Churn rose 12% in March."} {
		if !strings.Contains(msgs[1].Content, want) {
			t.Errorf("user message lacks %q:\n%s", want, msgs[1].Content)
		}
	}
	if !strings.Contains(msgs[0].Content, "verbatim_questions") {
		t.Errorf("system prompt does not describe the brief:\n%s", msgs[0].Content)
	}

	var body struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string `json:"name"`
				Strict bool   `json:"strict"`
				Schema struct {
					Type                 string                     `json:"type"`
					Properties           map[string]json.RawMessage `json:"properties"`
					Required             []string                   `json:"required"`
					AdditionalProperties *bool                      `json:"additionalProperties"`
				} `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	rf := body.ResponseFormat
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "brief" || !rf.JSONSchema.Strict {
		t.Errorf("response_format = %+v", rf)
	}
	s := rf.JSONSchema.Schema
	want := []string{"refused", "refusal_reason", "title", "objectives", "pre_interview_questions", "verbatim_questions", "estimated_duration_minutes"}
	if s.Type != "object" || !reflect.DeepEqual(s.Required, want) || len(s.Properties) != len(want) || s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("schema = %+v, want an object requiring exactly %v with no additional properties", s, want)
	}
}

func TestOpenAIAuthorNoKeyNoAuthorization(t *testing.T) {
	f := mustFakeChat(t, chatJSON(t, validBrief()))
	o, _ := mustOpenAI(t, f, OpenAIConfig{})
	if _, err := o.Author(t.Context(), AuthorRequest{Guidance: "Study commuting."}); err != nil {
		t.Fatalf("Author: %v", err)
	}
	r := f.requests()[0]
	if got, ok := r.Header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", got)
	}
	if _, ok := r.Body["model"]; ok {
		t.Errorf("model sent although none was configured: %v", r.Body["model"])
	}
}

func TestOpenAIAuthorRefine(t *testing.T) {
	revised := validBrief()
	revised["verbatim_questions"] = []string{"  What made you try a new service?  "}
	f := mustFakeChat(t, chatJSON(t, revised))
	o, _ := mustOpenAI(t, f, OpenAIConfig{})
	title := "Old title"
	cur := kv.Brief{Title: &title, Objectives: []string{"Old objective"}, VerbatimQuestions: []string{"Old question?"}}

	got, err := o.Author(t.Context(), AuthorRequest{Guidance: "Ask about trying new services.", Current: &cur})
	if err != nil {
		t.Fatalf("Author: %v", err)
	}
	if want := []string{"What made you try a new service?"}; !reflect.DeepEqual(got.VerbatimQuestions, want) {
		t.Errorf("verbatim questions = %q, want %q", got.VerbatimQuestions, want)
	}
	msgs := messagesOf(t, f.requests()[0])
	curJSON, _ := json.Marshal(cur.Normalised())
	if !strings.Contains(msgs[1].Content, string(curJSON)) || !strings.Contains(msgs[1].Content, "Ask about trying new services.") {
		t.Errorf("refine prompt lacks the current brief or guidance:\n%s", msgs[1].Content)
	}
	if !strings.Contains(msgs[0].Content, "revise") {
		t.Errorf("refine used the drafting system prompt:\n%s", msgs[0].Content)
	}
}

func TestOpenAIAuthor(t *testing.T) {
	noVerbatim := validBrief()
	noVerbatim["verbatim_questions"] = []string{}
	refusedByModel := validBrief()
	refusedByModel["refused"] = true
	refusedByModel["refusal_reason"] = "This asks for a phishing script."
	unauthorized := chatError(http.StatusUnauthorized, "Incorrect API key provided: "+testKey+".", "invalid_request_error", nil)

	tests := []struct {
		name         string
		replies      []fakeReply
		wantAttempts int
		wantIs       error  // nil: success
		wantIn       string // in the error text
		checkWaits   func(t *testing.T, waits []time.Duration)
	}{
		{
			name:         "OK",
			replies:      []fakeReply{chatJSON(t, validBrief())},
			wantAttempts: 1,
		},
		{
			name:         "ErrRefusedField",
			replies:      []fakeReply{chatRefusal(t, "I can't help with that.")},
			wantAttempts: 1, wantIs: ErrRefused, wantIn: "I can't help with that.",
		},
		{
			name:         "ErrRefusedByModel",
			replies:      []fakeReply{chatJSON(t, refusedByModel)},
			wantAttempts: 1, wantIs: ErrRefused, wantIn: "phishing",
		},
		{
			name:         "ErrContentFilter",
			replies:      []fakeReply{{status: http.StatusOK, body: chatCompletion(t, nil, nil, "content_filter")}},
			wantAttempts: 1, wantIs: ErrRefused,
		},
		{
			name: "OKAfter429RetryAfter",
			replies: []fakeReply{
				chatError(http.StatusTooManyRequests, "Rate limit reached", "requests", map[string]string{"Retry-After": "7"}),
				chatJSON(t, validBrief()),
			},
			wantAttempts: 2,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if !reflect.DeepEqual(waits, []time.Duration{7 * time.Second}) {
					t.Errorf("waits = %v, want [7s]", waits)
				}
			},
		},
		{
			name: "OKAfter500Twice",
			replies: []fakeReply{
				chatError(http.StatusInternalServerError, "boom", "server_error", nil),
				chatError(http.StatusInternalServerError, "boom", "server_error", nil),
				chatJSON(t, validBrief()),
			},
			wantAttempts: 3,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				// Backoff 100ms: retry n waits between half and all of 100ms·2^(n-1).
				if len(waits) != 2 || waits[0] < 50*time.Millisecond || waits[0] > 100*time.Millisecond ||
					waits[1] < 100*time.Millisecond || waits[1] > 200*time.Millisecond {
					t.Errorf("waits = %v, want one in [50ms,100ms] then one in [100ms,200ms]", waits)
				}
			},
		},
		{
			name:         "ErrBadRequestNoRetry",
			replies:      []fakeReply{chatError(http.StatusBadRequest, "Invalid schema for response_format 'brief'.", "invalid_request_error", nil)},
			wantAttempts: 1, wantIn: "Invalid schema for response_format 'brief'.",
		},
		{
			name:         "ErrUnauthorizedKeyScrubbed",
			replies:      []fakeReply{unauthorized},
			wantAttempts: 1, wantIn: "status 401",
		},
		{
			name:         "OKAfterInvalidJSON",
			replies:      []fakeReply{chatOK(t, `{"title": "Groc`), chatJSON(t, validBrief())},
			wantAttempts: 2,
		},
		{
			name:         "OKAfterInvalidBrief",
			replies:      []fakeReply{chatJSON(t, noVerbatim), chatJSON(t, validBrief())},
			wantAttempts: 2,
		},
		{
			name:         "ErrAlwaysInvalid",
			replies:      []fakeReply{chatJSON(t, noVerbatim)},
			wantAttempts: 4, wantIs: errChatInvalid, wantIn: "giving up after 4 attempts",
		},
		{
			name:         "ErrAlways503",
			replies:      []fakeReply{chatError(http.StatusServiceUnavailable, "overloaded", "server_error", nil)},
			wantAttempts: 4, wantIn: "status 503 (server_error): overloaded",
		},
		{
			name:         "OKAfterNonJSONBody",
			replies:      []fakeReply{{status: http.StatusOK, body: "<html>proxy</html>"}, chatJSON(t, validBrief())},
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFakeChat(t, tt.replies...)
			o, sl := mustOpenAI(t, f, OpenAIConfig{Key: testKey, Backoff: 100 * time.Millisecond})

			got, err := o.Author(t.Context(), AuthorRequest{Guidance: "Why do people switch grocery delivery services?"})

			if n := len(f.requests()); n != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", n, tt.wantAttempts)
			}
			if n := len(sl.recorded()); n != tt.wantAttempts-1 {
				t.Errorf("waits = %d, want %d", n, tt.wantAttempts-1)
			}
			if tt.checkWaits != nil {
				tt.checkWaits(t, sl.recorded())
			}
			if tt.wantIs == nil && tt.wantIn == "" {
				if err != nil {
					t.Fatalf("Author: %v", err)
				}
				if got.Title == nil || *got.Title != "Grocery delivery habits" || len(got.VerbatimQuestions) != 2 ||
					got.EstimatedDurationMinutes == nil || *got.EstimatedDurationMinutes != 20 {
					t.Errorf("brief = %+v", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("Author = %+v, want an error", got)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q lacks %q", err, tt.wantIn)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestOpenAIStatusErrorDetails(t *testing.T) {
	f := mustFakeChat(t, fakeReply{status: http.StatusNotFound, body: `{"error":{"message":"The model 'x' does not exist","type":"invalid_request_error","code":"model_not_found"}}`})
	o, _ := mustOpenAI(t, f, OpenAIConfig{})
	_, err := o.Author(t.Context(), AuthorRequest{Guidance: "Study commuting."})
	var se *chatStatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a status error", err)
	}
	want := chatStatusError{Status: 404, Type: "invalid_request_error", Code: "model_not_found", Message: "The model 'x' does not exist"}
	if *se != want {
		t.Errorf("status error = %+v, want %+v", *se, want)
	}
}

func TestOpenAIRejectedParam(t *testing.T) {
	rejected := func(param string) fakeReply {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": "Unsupported parameter: '" + param + "'.", "type": "invalid_request_error", "param": param, "code": "unsupported_parameter",
		}})
		return fakeReply{status: http.StatusBadRequest, body: string(b)}
	}
	tests := []struct {
		name         string
		replies      []fakeReply
		wantAttempts int
		wantErr      bool
		check        func(t *testing.T, last fakeRequest)
	}{
		{
			name:         "OKWithoutTemperature",
			replies:      []fakeReply{rejected("temperature"), chatJSON(t, validBrief())},
			wantAttempts: 2,
			check: func(t *testing.T, last fakeRequest) {
				if _, ok := last.Body["temperature"]; ok {
					t.Errorf("temperature still sent: %s", last.Raw)
				}
			},
		},
		{
			name:         "OKJSONObjectMode",
			replies:      []fakeReply{rejected("response_format"), chatJSON(t, validBrief())},
			wantAttempts: 2,
			check: func(t *testing.T, last fakeRequest) {
				rf, _ := last.Body["response_format"].(map[string]any)
				if rf["type"] != "json_object" || rf["json_schema"] != nil {
					t.Errorf("response_format = %v, want plain json_object", rf)
				}
				if msgs := messagesOf(t, last); !strings.Contains(msgs[0].Content, "JSON") {
					t.Error("JSON mode needs the word JSON in the prompt")
				}
			},
		},
		{
			name:         "ErrEachParamDroppedOnce",
			replies:      []fakeReply{rejected("temperature")},
			wantAttempts: 2, wantErr: true,
		},
		{
			name:         "ErrRequiredParam",
			replies:      []fakeReply{rejected("messages")},
			wantAttempts: 1, wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFakeChat(t, tt.replies...)
			// No retries at all: dropping a parameter must not depend on them.
			o, sl := mustOpenAI(t, f, OpenAIConfig{MaxRetries: -1})
			_, err := o.Author(t.Context(), AuthorRequest{Guidance: "Study commuting."})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Author error = %v, want error %v", err, tt.wantErr)
			}
			reqs := f.requests()
			if len(reqs) != tt.wantAttempts {
				t.Fatalf("attempts = %d, want %d", len(reqs), tt.wantAttempts)
			}
			if n := len(sl.recorded()); n != 0 {
				t.Errorf("waited %d times, want none", n)
			}
			if tt.check != nil {
				tt.check(t, reqs[len(reqs)-1])
			}
		})
	}
}

func TestOpenAITimeout(t *testing.T) {
	t.Run("OKAfterSlowReply", func(t *testing.T) {
		f := mustFakeChat(t, fakeReply{block: true}, chatJSON(t, validBrief()))
		o, sl := mustOpenAI(t, f, OpenAIConfig{Timeout: 500 * time.Millisecond})
		if _, err := o.Author(t.Context(), AuthorRequest{Guidance: "Study commuting."}); err != nil {
			t.Fatalf("Author: %v", err)
		}
		if n := len(f.requests()); n != 2 {
			t.Errorf("attempts = %d, want 2", n)
		}
		if n := len(sl.recorded()); n != 1 {
			t.Errorf("waits = %d, want 1", n)
		}
	})
	t.Run("ErrTimeoutNoRetries", func(t *testing.T) {
		f := mustFakeChat(t, fakeReply{block: true})
		o, _ := mustOpenAI(t, f, OpenAIConfig{Timeout: 100 * time.Millisecond, MaxRetries: -1})
		_, err := o.Author(t.Context(), AuthorRequest{Guidance: "Study commuting."})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no reply within 100ms") {
			t.Errorf("error = %v, want a timeout of the attempt", err)
		}
		if t.Context().Err() != nil {
			t.Error("the test context ended; the timeout was not the attempt's own")
		}
	})
}

func TestOpenAIContextCancelled(t *testing.T) {
	tests := []struct {
		name  string
		reply fakeReply
	}{
		// Cancelled while the request is in flight.
		{"ErrCancelledInFlight", fakeReply{block: true}},
		// Cancelled while waiting out a long Retry-After with the real timer.
		{"ErrCancelledInBackoff", chatError(http.StatusTooManyRequests, "slow down", "requests", map[string]string{"Retry-After": "25"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFakeChat(t, tt.reply)
			o, err := NewOpenAI(OpenAIConfig{URL: f.URL()}) // default Sleep: a real timer
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := o.Author(ctx, AuthorRequest{Guidance: "Study commuting."})
				done <- err
			}()
			select {
			case <-f.arrived:
			case <-time.After(60 * time.Second):
				t.Fatal("the request never reached the fake")
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error = %v, want context.Canceled", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("Author did not return after cancellation")
			}
		})
	}
}

func TestOpenAIDeadlineTooShortForRetry(t *testing.T) {
	f := mustFakeChat(t, chatError(http.StatusTooManyRequests, "slow down", "requests", map[string]string{"Retry-After": "20"}))
	o, sl := mustOpenAI(t, f, OpenAIConfig{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := o.Author(ctx, AuthorRequest{Guidance: "Study commuting."})
	if err == nil || !strings.Contains(err.Error(), "no time left") || !strings.Contains(err.Error(), "status 429") {
		t.Errorf("error = %v, want the 429 reported before the deadline", err)
	}
	if n := len(sl.recorded()); n != 0 {
		t.Errorf("waited %d times, want none", n)
	}
}
