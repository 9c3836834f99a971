package mcp

import (
	"context"
	stdjson "encoding/json"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"interviewd/server/pipeline"
)

// newMCPServer builds the SDK server with one tool per operation of the table: a new
// operation becomes a tool with no code here.
func (s *Side) newMCPServer() *mcp.Server {
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
		Description:  pipeline.ToolDescription(o),
		InputSchema:  pipeline.MustRawJSON(o.Plan.InputSchema(pipeline.SrcPath, pipeline.SrcQuery, pipeline.SrcBody)),
		OutputSchema: pipeline.MustRawJSON(toolOutputSchema(o)),
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

// mcpToolHandler runs one operation as a tool call for the SDK.
func (s *Side) mcpToolHandler(o *pipeline.Operation) mcp.ToolHandler {
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
var Wire = pipeline.ResearchWire{Budget: pipeline.BudgetCredential, Bind: pipeline.BindArgsInput}

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
	ToolNote() string
}

// renderTool renders a tool call into its toolOutcome (r.data).
func renderTool(r *pipeline.Request, err error) {
	res := r.Data.(*toolOutcome)
	if err == nil {
		raw, encErr := pipeline.EncodeOutput(r.Out)
		if encErr == nil {
			*res = toolOutcome{raw: raw}
			if n, ok := r.Out.(toolNoter); ok {
				res.note = n.ToolNote()
			}
			return
		}
		err = encErr
	}
	body, cause := pipeline.ToolErrorBodyOf(r.Op, err)
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
func (s *Side) runTool(ctx context.Context, o *pipeline.Operation, p *pipeline.Principal, args []byte) (raw []byte, isError bool, cause, note string) {
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
