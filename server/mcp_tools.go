package server

import (
	"context"
	stdjson "encoding/json"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// newMCPServer builds the SDK server with one tool per operation of the table: a new
// operation becomes a tool with no code here.
func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(mcpImplementation(),
		&mcp.ServerOptions{
			Instructions: "Run AI-moderated research interviews: author studies from plain-language guidance, " +
				"rehearse them, hand out invite links and export transcripts. Every tool mirrors one REST " +
				"operation of " + s.BaseURL + "/v1/api/openapi.json; lists return {items, next_cursor}: pass " +
				"next_cursor back as cursor for the next page.",
			// Tools only, and a fixed list: no listChanged, so no client opens a
			// subscription stream this stateless, JSON-only endpoint could not serve.
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			SetCacheable: privateToolList,
		})
	ops := make(map[string]*pipeline.Operation, len(s.Ops))
	for _, o := range s.Ops {
		srv.AddTool(mcpTool(o), s.mcpToolHandler(o))
		ops[o.Name] = o
	}
	srv.AddReceivingMiddleware(toolsForCredential(ops))
	return srv
}

// mcpImplementation is how the server names itself to clients.
func mcpImplementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "interviewd", Title: "interviewd research interviews", Version: pipeline.OpenAPIVersion}
}

// mcpTool describes an operation as a tool. Schemas are encoded once, here.
func mcpTool(o *pipeline.Operation) *mcp.Tool {
	closedWorld := false
	return &mcp.Tool{
		Name:         o.Name,
		Title:        o.Summary,
		Description:  toolDescription(o),
		InputSchema:  mustRawJSON(o.Plan.InputSchema(pipeline.SrcPath, pipeline.SrcQuery, pipeline.SrcBody)),
		OutputSchema: mustRawJSON(toolOutputSchema(o)),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:   o.Method == "GET",
			IdempotentHint: o.Method == "GET" || o.Method == "PUT",
			OpenWorldHint:  &closedWorld,
		},
	}
}

// toolOutputSchema is the operation's output, or the error body a result with isError
// carries. Clients validate structuredContent against outputSchema, and some (the
// TypeScript SDK's 1.x line, the MCP Inspector) do so for error results too: a
// schema naming only the success shape would turn every domain error into their
// own schema-mismatch failure and hide the error's detail.
func toolOutputSchema(o *pipeline.Operation) pipeline.Schema {
	return pipeline.Schema{"type": "object", "anyOf": []any{o.OutputSchema(), toolErrorSchema()}}
}

// toolErrorSchema describes toolErrorBody; the items are those of a REST 422.
func toolErrorSchema() pipeline.Schema {
	item := pipeline.Schema{"type": "object", "required": []any{"loc", "msg", "type"}, "properties": pipeline.Schema{
		"loc":  pipeline.Schema{"type": "array", "items": pipeline.Schema{"anyOf": []any{pipeline.Schema{"type": "string"}, pipeline.Schema{"type": "integer"}}}},
		"msg":  pipeline.Schema{"type": "string"},
		"type": pipeline.Schema{"type": "string"},
		"ctx":  pipeline.Schema{"type": "object"},
	}}
	return pipeline.Schema{"type": "object", "required": []any{"code", "detail"}, "additionalProperties": false, "properties": pipeline.Schema{
		"code":                pipeline.Schema{"type": "string", "description": "The REST error code: validation_error, not_found, insufficient_scope, rate_limited, ..."},
		"detail":              pipeline.Schema{"type": "string", "description": "What went wrong, in a sentence."},
		"errors":              pipeline.Schema{"type": "array", "items": item, "description": "validation_error only: each refused argument, as REST reports it."},
		"retry_after_seconds": pipeline.Schema{"type": "integer", "minimum": 1, "description": "rate_limited only: seconds to wait before retrying."},
		"scope":               pipeline.Schema{"type": "string", "description": "insufficient_scope only: the scope the credential lacks."},
	}}
}

func toolDescription(o *pipeline.Operation) string {
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

// lazyJSON encodes what doc returns once, on the first call: documents a server may
// never be asked for cost nothing at start-up.
func lazyJSON(doc func() any) func() []byte {
	return sync.OnceValue(func() []byte { return mustRawJSON(doc()) })
}

func mustRawJSON(v any) stdjson.RawMessage {
	raw, err := json.MarshalNoEscape(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// mcpToolHandler runs one operation as a tool call for the SDK.
func (s *Server) mcpToolHandler(o *pipeline.Operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The endpoint authenticates before the SDK runs, so call is never nil there.
		call := mcpCallFrom(ctx)
		var p *pipeline.Principal
		if call != nil {
			p = call.principal
		}
		raw, isError, cause, note := s.runTool(ctx, o, p, req.Params.Arguments)
		if cause != "" && call != nil {
			call.internalErr.Store(&cause)
		}
		return toolResult(raw, isError, note), nil
	}
}

// mcpWire is the research pipeline as MCP tool calls: input from one arguments
// object, and no idempotency key (the contract gives MCP no equivalent).
var mcpWire = pipeline.ResearchWire{Budget: pipeline.BudgetCredential, Bind: pipeline.BindArgsInput}

// toolOutcome is a rendered tool call: the result's JSON (the output, or the error
// body when isError), for an internal failure its cause for the log, and a note said
// beside the JSON (toolNoter).
type toolOutcome struct {
	raw     []byte
	isError bool
	cause   string
	note    string
}

// toolNoter is an output with something to say beside its JSON, as a second text block
// of the tool result: why a job failed, where the output's shape has no room for it.
type toolNoter interface {
	toolNote() string
}

// renderTool renders a tool call into its toolOutcome (r.data).
func renderTool(r *pipeline.Request, err error) {
	res := r.Data.(*toolOutcome)
	if err == nil {
		raw, encErr := pipeline.EncodeOutput(r.Out)
		if encErr == nil {
			*res = toolOutcome{raw: raw}
			if n, ok := r.Out.(toolNoter); ok {
				res.note = n.toolNote()
			}
			return
		}
		err = encErr
	}
	body, cause := toolErrorBodyOf(r.Op, err)
	raw, _ := json.MarshalNoEscape(body)
	*res = toolOutcome{raw: raw, isError: true, cause: cause}
}

// pooledToolCall is one tool call's request and its rendered outcome, pooled: tool calls
// are most of an agent's traffic.
type pooledToolCall struct {
	r   pipeline.Request
	res toolOutcome
}

var pooledToolCalls = sync.Pool{New: func() any { return new(pooledToolCall) }}

// runTool runs one operation as a tool call through the research pipeline and returns the
// result's JSON (the output, or the error body when isError) and, for an internal
// failure, its cause for the log. Tool calls run on the SDK's goroutines as well as
// the fast path's, so each has its own request, never the HTTP request's.
func (s *Server) runTool(ctx context.Context, o *pipeline.Operation, p *pipeline.Principal, args []byte) (raw []byte, isError bool, cause, note string) {
	tc := pooledToolCalls.Get().(*pooledToolCall)
	defer func() {
		*tc = pooledToolCall{}
		pooledToolCalls.Put(tc)
	}()
	r := &tc.r
	*r = pipeline.Request{Ctx: ctx, Op: o, P: p, Args: args, Data: &tc.res}
	s.tools.Run(r)
	if call := mcpCallFrom(ctx); call != nil && r.Rated {
		d := r.Rate
		call.rate.Store(&d)
	}
	return tc.res.raw, tc.res.isError, tc.res.cause, tc.res.note
}

// toolErrorBody is a domain error as a tool result's structuredContent: the REST
// error's code and a human detail, the validation items for validation errors, and
// the wait for rate limits.
type toolErrorBody struct {
	Code              string          `json:"code"`
	Detail            string          `json:"detail"`
	Errors            []kv.FieldError `json:"errors,omitempty"`
	RetryAfterSeconds int             `json:"retry_after_seconds,omitempty"`
	// Scope is the scope an insufficient_scope refusal lacks.
	Scope string `json:"scope,omitempty"`
}

// toolErrorBodyOf maps err to the error body of an isError result, and returns an
// internal failure's cause, which is logged and never sent.
func toolErrorBodyOf(o *pipeline.Operation, err error) (toolErrorBody, string) {
	ae := pipeline.ToAPIError(err).LocatedREST(o.Plan)
	body := toolErrorBody{Code: ae.Code, Detail: ae.Detail}
	cause := ""
	switch {
	case ae.Code == "storage_unavailable": // a sentence written for clients, and when to retry
		body.RetryAfterSeconds = ae.RetryAfter
		cause = "tool " + o.Name + ": " + ae.Error()
	case ae.Status >= 500:
		body.Detail = pipeline.ErrInternal
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

// validationDetail is one sentence naming every refused field, for a model to read.
func validationDetail(ae *pipeline.APIError) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(ae.Detail, "."))
	for i, f := range ae.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(argumentName(f.Loc))
		b.WriteString(": ")
		b.WriteString(f.Msg)
	}
	if len(ae.Fields) == 0 {
		b.WriteByte('.')
	}
	return b.String()
}

// argumentName renders a loc as the tool argument it names: ["query","limit"] is
// limit, ["body","context","k"] is context.k, ["body","file_ids",0] is file_ids[0].
func argumentName(loc []any) string {
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

// toolResult carries the JSON both as structuredContent and as a text block, for
// clients that read only text, and a note (when there is one) as a second text block.
func toolResult(raw []byte, isError bool, note string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: stdjson.RawMessage(raw),
		IsError:           isError,
	}
	if note != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: note})
	}
	return res
}
