package moderator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chatMaxBody bounds how much of a reply is read; a brief is a few kilobytes, so
// anything near this is a broken or hostile endpoint.
const chatMaxBody = 4 << 20

// chatRequest is the body of POST {URL}/chat/completions.
type chatRequest struct {
	Model          string             `json:"model,omitempty"`
	Messages       []chatMessage      `json:"messages"`
	Temperature    *float64           `json:"temperature,omitempty"`
	Seed           *int64             `json:"seed,omitempty"`
	ResponseFormat chatResponseFormat `json:"response_format"`
}

type chatMessage struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"` // "json_schema", or "json_object" as a fallback
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

type chatJSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

func chatFormat(name, schema string) chatResponseFormat {
	return chatResponseFormat{
		Type:       "json_schema",
		JSONSchema: &chatJSONSchema{Name: name, Strict: true, Schema: json.RawMessage(schema)},
	}
}

// chatStatusError is a non-2xx reply. Its fields come from the standard error body
// {"error":{"message","type","param","code"}} with the API key scrubbed from them.
type chatStatusError struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
}

func (e *chatStatusError) Error() string {
	var b strings.Builder
	b.WriteString("status ")
	b.WriteString(strconv.Itoa(e.Status))
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(strings.Trim(e.Type+" "+e.Code, " "))
		b.WriteString(")")
	}
	b.WriteString(": ")
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(http.StatusText(e.Status))
	}
	return b.String()
}

// chatFailure is one failed attempt: whether another attempt may help, and the wait
// the server asked for (negative when it named none).
type chatFailure struct {
	err   error
	retry bool
	after time.Duration
}

// chatCall sends req and decodes the reply's content with decode, retrying transient
// failures. It returns the decoded value, or an error: the caller's context error when
// ctx ends, a refusal or rejected request at once, or the last failure once
// o.maxRetries retries are spent.
func chatCall[T any](ctx context.Context, o *OpenAI, req chatRequest, decode func(content string) (T, error)) (T, error) {
	var zero T
	payload, err := json.Marshal(req)
	if err != nil {
		return zero, fmt.Errorf("model endpoint: encoding the request: %w", err)
	}
	attempts := o.maxRetries + 1
	for i := 0; ; {
		v, f := chatAttempt(ctx, o, payload, decode)
		if f == nil {
			return v, nil
		}
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("model endpoint: %w", err)
		}
		if !f.retry {
			// A model that rejects an optional parameter (reasoning models allow only
			// the default temperature; older ones lack json_schema) gets the request
			// again without it, at once and without spending a retry. Each parameter
			// is dropped at most once, so this ends.
			if param := chatRejectedParam(f.err); param != "" && req.drop(param) {
				if payload, err = json.Marshal(req); err != nil {
					return zero, fmt.Errorf("model endpoint: encoding the request: %w", err)
				}
				continue
			}
			if errors.Is(f.err, ErrRefused) {
				return zero, f.err
			}
			return zero, fmt.Errorf("model endpoint: %w", f.err)
		}
		if i++; i >= attempts {
			return zero, fmt.Errorf("model endpoint: giving up after %d attempts: %w", attempts, f.err)
		}
		wait := o.wait(i, f.after)
		// Waiting past the caller's deadline only to be cancelled hides the real
		// failure behind "context deadline exceeded".
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return zero, fmt.Errorf("model endpoint: no time left to retry before the deadline: %w", f.err)
		}
		if err := o.sleep(ctx, wait); err != nil {
			return zero, fmt.Errorf("model endpoint: %w (previous attempt: %v)", err, f.err)
		}
	}
}

// chatRejectedParam returns the request parameter a 400 reply blames, or "".
func chatRejectedParam(err error) string {
	var se *chatStatusError
	if errors.As(err, &se) && se.Status == http.StatusBadRequest {
		return se.Param
	}
	return ""
}

// drop removes or relaxes the optional parameter named by an endpoint's error and
// reports whether the request changed.
func (r *chatRequest) drop(param string) bool {
	switch {
	case param == "temperature" && r.Temperature != nil:
		r.Temperature = nil
	case param == "seed" && r.Seed != nil:
		r.Seed = nil
	case strings.HasPrefix(param, "response_format") && r.ResponseFormat.Type == "json_schema":
		// Plain JSON mode: the schema is no longer enforced by the endpoint, but
		// every reply is still validated here and the prompts spell out the shape.
		r.ResponseFormat = chatResponseFormat{Type: "json_object"}
	default:
		return false
	}
	return true
}

// chatAttempt makes one request under its own timeout. It returns the decoded value or
// a failure saying whether it is worth retrying.
func chatAttempt[T any](ctx context.Context, o *OpenAI, payload []byte, decode func(string) (T, error)) (T, *chatFailure) {
	var zero T
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, o.endpoint, bytes.NewReader(payload))
	if err != nil {
		return zero, &chatFailure{err: fmt.Errorf("building the request: %w", err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "interviewd")
	if o.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.key)
	}

	resp, err := o.client.Do(hreq)
	if err != nil {
		return zero, o.transportFailure(ctx, actx, "request failed", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, chatMaxBody+1))
	if err != nil {
		return zero, o.transportFailure(ctx, actx, "reading the reply", err)
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		serr := chatDecodeError(resp.StatusCode, body, o.key)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return zero, &chatFailure{err: serr, retry: true, after: chatRetryAfter(resp.Header, time.Now())}
		}
		return zero, &chatFailure{err: serr}
	}
	if len(body) > chatMaxBody {
		return zero, &chatFailure{err: fmt.Errorf("%w: reply larger than %d bytes", errChatInvalid, chatMaxBody), retry: true, after: -1}
	}
	v, err := chatDecodeReply(body, o.key, decode)
	if err != nil {
		return zero, &chatFailure{err: err, retry: !errors.Is(err, ErrRefused), after: -1}
	}
	return v, nil
}

// chatDecodeReply unwraps a chat completion and decodes its content. It returns an
// error wrapping ErrRefused for a refusal and errChatInvalid for anything malformed.
func chatDecodeReply[T any](body []byte, key string, decode func(string) (T, error)) (T, error) {
	var zero T
	content, err := decodeChat(body)
	if err != nil {
		return zero, chatScrubErr(err, key)
	}
	v, err := decode(content)
	if err != nil {
		return zero, chatScrubErr(err, key)
	}
	return v, nil
}

// transportFailure classifies a failed round trip. A timeout of this attempt (not of
// the caller's context) is reported as such and still wraps context.DeadlineExceeded.
func (o *OpenAI) transportFailure(ctx, actx context.Context, what string, err error) *chatFailure {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &chatFailure{err: fmt.Errorf("no reply within %s: %w", o.timeout, context.DeadlineExceeded), retry: true, after: -1}
	}
	return &chatFailure{err: fmt.Errorf("%s: %w", what, err), retry: true, after: -1}
}

// wait returns how long to wait before retry number n (1-based): the server's
// Retry-After when it gave one, else exponential backoff with equal jitter; both are
// capped at openaiBackoffCap.
func (o *OpenAI) wait(n int, after time.Duration) time.Duration {
	if after >= 0 {
		return min(after, openaiBackoffCap)
	}
	d := o.backoff
	for k := 1; k < n && d < openaiBackoffCap; k++ {
		d *= 2
	}
	d = min(d, openaiBackoffCap)
	half := d / 2
	return half + rand.N(d-half+1)
}

// chatRetryAfter returns the wait a 429 or 5xx reply asks for, from Retry-After-Ms or
// Retry-After (seconds or an HTTP date), or -1 when there is none or it is unreadable.
func chatRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return chatDuration(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
			return -1
		}
		return chatDuration(secs)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// chatDuration converts seconds to a Duration, capped before the conversion so a huge
// value cannot overflow.
func chatDuration(secs float64) time.Duration {
	if secs >= openaiBackoffCap.Seconds() {
		return openaiBackoffCap
	}
	return time.Duration(secs * float64(time.Second))
}

// chatErrorBody holds the fields of an error reply; each is kept raw because
// compatible servers disagree on their types.
type chatErrorBody struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    json.RawMessage `json:"code"`
}

// chatDecodeError reads the error body of a non-2xx reply: OpenAI's
// {"error":{"message","type","param","code"}}, a bare {"error":"message"}, or the same
// fields at the top level as older vLLM servers send. It never fails: a body of another
// shape leaves only the status.
func chatDecodeError(status int, body []byte, key string) *chatStatusError {
	var top struct {
		Error json.RawMessage `json:"error"`
		chatErrorBody
	}
	e := &chatStatusError{Status: status}
	if json.Unmarshal(body, &top) != nil {
		return e
	}
	eb := top.chatErrorBody
	if len(top.Error) > 0 {
		var nested chatErrorBody
		if json.Unmarshal(top.Error, &nested) == nil {
			eb = nested
		} else {
			eb = chatErrorBody{Message: top.Error}
		}
	}
	// Scrub before clipping, so a clip cannot leave part of the key behind.
	e.Message = chatOneLine(chatScrub(chatRawString(eb.Message), key), 500)
	e.Type = chatOneLine(chatScrub(chatRawString(eb.Type), key), 60)
	e.Code = chatOneLine(chatScrub(chatRawString(eb.Code), key), 60)
	e.Param = chatOneLine(chatScrub(chatRawString(eb.Param), key), 100)
	return e
}

// chatRawString returns a JSON string's value, a number's text, or "" for null or
// anything else: compatible servers disagree on the types of code, type and param.
func chatRawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// chatScrub removes the API key from text an endpoint sent back, since some servers
// echo the credential they rejected.
func chatScrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// chatScrubErr returns err, or when its text contains the key, an error with the key
// removed that keeps ErrRefused and errChatInvalid matchable.
func chatScrubErr(err error, key string) error {
	if key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	msg := chatScrub(err.Error(), key)
	switch {
	case errors.Is(err, ErrRefused):
		return &chatScrubbed{msg: msg, is: ErrRefused}
	case errors.Is(err, errChatInvalid):
		return &chatScrubbed{msg: msg, is: errChatInvalid}
	}
	return errors.New(msg)
}

type chatScrubbed struct {
	msg string
	is  error
}

func (e *chatScrubbed) Error() string { return e.msg }
func (e *chatScrubbed) Unwrap() error { return e.is }

// chatOneLine trims s, folds its whitespace runs to single spaces and clips it to limit
// runes, so a server message cannot forge extra log lines.
func chatOneLine(s string, limit int) string {
	return chatClip(strings.Join(strings.Fields(s), " "), limit)
}

// chatClip returns s cut to at most limit runes, marking a cut with an ellipsis.
func chatClip(s string, limit int) string {
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// chatSleep waits d or until ctx ends, returning ctx.Err() in that case.
func chatSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
