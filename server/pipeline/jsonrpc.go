package pipeline

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"interviewd/kv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// BridgeRequest is a net/http request owning copies of everything c's request
// carries, under ctx.
func BridgeRequest(c *fasthttp.RequestCtx, ctx context.Context) *http.Request {
	body := bytes.Clone(c.PostBody())
	req := (&http.Request{
		Method:        string(c.Method()),
		URL:           &url.URL{Path: string(c.Path()), RawQuery: string(c.QueryArgs().QueryString())},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        make(http.Header, 12),
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Host:          string(c.Host()),
		RemoteAddr:    c.RemoteAddr().String(),
		RequestURI:    string(c.RequestURI()),
	}).WithContext(ctx)
	for k, v := range c.Request.Header.All() {
		req.Header.Add(string(k), string(v))
	}
	return req
}

// ServeHTTPBridge runs a net/http handler for one fasthttp request, synchronously.
//
// fasthttpadaptor.NewFastHTTPHandler is not used on purpose: it hands the RequestCtx
// itself to the handler as its context (RequestCtx is a context.Context), runs the
// handler on another goroutine, and aliases fasthttp's reused buffers through unsafe
// strings. Here the request owns copies of everything it carries, its context is ours
// (cancelled at shutdown), and the handler has returned before the RequestCtx is
// touched again. The MCP handler never streams (JSON responses), so buffering the
// response whole loses nothing. With limit > 0 an answer of more than limit bytes is
// not kept, and serveHTTPBridge reports false having written nothing to c.
func ServeHTTPBridge(c *fasthttp.RequestCtx, h http.Handler, ctx context.Context, limit int) bool {
	req := BridgeRequest(c, ctx)
	w := &bufferedResponse{header: make(http.Header, 4), limit: limit}
	h.ServeHTTP(w, req)
	if w.over {
		return false
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	c.SetStatusCode(w.status)
	for k, vv := range w.header {
		for _, v := range vv {
			c.Response.Header.Add(k, v)
		}
	}
	c.SetBody(w.body.Bytes())
	return true
}

// WriteJSONRPCError answers with status and a JSON-RPC error object for no request id:
// the shape for a request the endpoint could not take as JSON-RPC at all.
func WriteJSONRPCError(c *fasthttp.RequestCtx, status, code int, msg string) {
	body, _ := json.MarshalNoEscape(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	c.SetStatusCode(status)
	c.SetContentType("application/json")
	c.SetBody(body)
}

func ReadRPCBody(next Handler) Handler {
	return func(r *Request) error {
		if _, err := ReadBody(r.C, MCPMaxBody); err != nil {
			if err == ErrMalformedBody { // a JSON-RPC client reads a parse error
				return &ErrRPCParse{ErrMalformedBody.Detail}
			}
			return err
		}
		return next(r)
	}
}

func (e *ErrRPCParse) Error() string { return e.Msg }

// ErrRPCParse is a body the endpoint cannot read as JSON-RPC at all.
type ErrRPCParse struct{ Msg string }

// PlainID reports whether a JSON-RPC id is one the fast path echoes byte for byte: a
// string, or an integer small enough to survive any decoder.
func PlainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// ToolErrorBodyOf maps err to the error body of an isError result, and returns an
// internal failure's cause, which is logged and never sent.
func ToolErrorBodyOf(o *Operation, err error) (ToolErrorBody, string) {
	ae := ToAPIError(err).LocatedREST(o.Plan)
	body := ToolErrorBody{Code: ae.Code, Detail: ae.Detail}
	cause := ""
	switch {
	case ae.Code == "storage_unavailable": // a sentence written for clients, and when to retry
		body.RetryAfterSeconds = ae.RetryAfter
		cause = "tool " + o.Name + ": " + ae.Error()
	case ae.Status >= 500:
		body.Detail = ErrInternal
		cause = "tool " + o.Name + ": " + ae.Error()
	case ae.Status == 422:
		body.Errors = ae.Fields
		body.Detail = validationDetail(ae)
	case ae.Status == 429:
		body.RetryAfterSeconds = max(ae.RetryAfter, 1)
	case ae.Code == "insufficient_scope":
		body.Scope = ae.Scope
	}
	return body, cause
}

// ToolErrorBody is a domain error as a tool result's structuredContent: the REST
// error's code and a human detail, the validation items for validation errors, and
// the wait for rate limits.
type ToolErrorBody struct {
	Code              string          `json:"code"`
	Detail            string          `json:"detail"`
	Errors            []kv.FieldError `json:"errors,omitempty"`
	RetryAfterSeconds int             `json:"retry_after_seconds,omitempty"`
	// Scope is the scope an insufficient_scope refusal lacks.
	Scope string `json:"scope,omitempty"`
}

func MustRawJSON(v any) stdjson.RawMessage {
	raw, err := json.MarshalNoEscape(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// LazyJSON encodes what doc returns once, on the first call: documents a server may
// never be asked for cost nothing at start-up.
func LazyJSON(doc func() any) func() []byte {
	return sync.OnceValue(func() []byte { return MustRawJSON(doc()) })
}

func ToolDescription(o *Operation) string {
	d := strings.TrimSuffix(o.Summary, ".") + "."
	switch {
	case o.ScopeDoc != "":
		d += " Needs " + o.ScopeDoc + "."
	case o.Scope == "":
		d += " Needs no particular scope."
	default:
		d += " Needs the " + o.Scope + " scope."
	}
	return d
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.over || (w.limit > 0 && w.body.Len()+len(p) > w.limit) {
		w.over = true
		w.body.Reset()
		return 0, errAnswerTooLarge
	}
	return w.body.Write(p)
}

func (w *bufferedResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *bufferedResponse) Header() http.Header { return w.header }

// bufferedResponse is an http.ResponseWriter that keeps the whole response, or with
// limit > 0 at most limit bytes of it (over says more was written).
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	limit  int
	over   bool
}

// mcpMaxBody bounds a JSON-RPC request body (read through readBody, which enforces it
// on streamed bodies too).
const MCPMaxBody = 1 << 20

// validationDetail is one sentence naming every refused field, for a model to read.
func validationDetail(ae *APIError) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(ae.Detail, "."))
	for i, f := range ae.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(ArgumentName(f.Loc))
		b.WriteString(": ")
		b.WriteString(f.Msg)
	}
	if len(ae.Fields) == 0 {
		b.WriteByte('.')
	}
	return b.String()
}

// errAnswerTooLarge stops the SDK writing an answer past mcpMaxBatchAnswer.
var errAnswerTooLarge = errors.New("the answer is over its limit")

// ArgumentName renders a loc as the tool argument it names: ["query","limit"] is
// limit, ["body","context","k"] is context.k, ["body","file_ids",0] is file_ids[0].
func ArgumentName(loc []any) string {
	var b strings.Builder
	for i, part := range loc {
		switch v := part.(type) {
		case string:
			if i == 0 {
				continue // the REST source (path, query, body) means nothing to a tool
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		}
	}
	if b.Len() == 0 {
		return "arguments"
	}
	return b.String()
}
