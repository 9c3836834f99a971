package mcp

import (
	"bytes"
	"context"
	"interviewd/server/pipeline"
	"mime"
	"slices"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// The tools/call fast path.
//
// An agent's traffic is mostly tool calls, and the SDK answers each stateless request
// by building a session, a JSON-RPC connection and its goroutines, and decoding the
// message several times over (each decode allocating a 32 KB buffer): about seven times
// the cost of the same operation over REST. serveToolCall answers a single, well-formed
// tools/call of either protocol era itself, with the same tool handler code and the
// same result shape. Everything else, and any tools/call it does not fully recognise
// (a batch, an unknown tool, a header that disagrees with the body, unexpected
// members), goes to the SDK, which stays the reference: TestMCPFastPathMatchesSDK sends
// the same requests both ways and compares the answers.

// legacyVersions are the protocol versions of the initialize era the SDK accepts.
var legacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const modernVersion = "2026-07-28"

// Keys of a 2026-07-28 request's _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// ServeToolCall answers c when it holds a tools/call the fast path recognises, and
// reports whether it did; when it returns false it has written nothing.
func (m *Endpoint) ServeToolCall(c *fasthttp.RequestCtx, ctx context.Context, p *pipeline.Principal) bool {
	h := &c.Request.Header
	if mt, _, err := mime.ParseMediaType(string(h.ContentType())); err != nil || mt != "application/json" {
		return false
	}
	if jsonOK, streamOK := accepts(string(h.Peek("Accept"))); !jsonOK || !streamOK {
		return false
	}
	body := bytes.TrimSpace(c.PostBody())
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || !onlyKeys(msg, "jsonrpc", "id", "method", "params") ||
		string(msg["jsonrpc"]) != `"2.0"` || string(msg["method"]) != `"tools/call"` || !pipeline.PlainID(msg["id"]) {
		return false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || !onlyKeys(params, "name", "arguments", "_meta") {
		return false
	}
	var name string
	if json.Unmarshal(params["name"], &name) != nil {
		return false
	}
	o := m.tools[name]
	if o == nil {
		return false
	}
	modern, ok := callEra(h, params["_meta"], name)
	if !ok {
		return false
	}

	raw, isError, cause, note := m.s.runTool(ctx, o, p, params["arguments"])
	if cause != "" {
		pipeline.InfoOf(c).Err = cause
	}
	res := fastResult{
		Content:           []fastText{{Type: "text", Text: string(raw)}},
		StructuredContent: raw,
		IsError:           isError,
	}
	if note != "" {
		res.Content = append(res.Content, fastText{Type: "text", Text: note})
	}
	if modern {
		// Results of this era name the server and say they are complete.
		res.Meta = map[string]json.RawMessage{metaServerInfo: m.serverInfo()}
		res.ResultType = "complete"
	}
	out, err := json.MarshalNoEscape(fastResponse{JSONRPC: "2.0", ID: msg["id"], Result: res})
	if err != nil {
		return false
	}
	c.Response.Header.Set("Cache-Control", "no-cache, no-transform")
	c.SetContentType("application/json")
	c.SetBody(out)
	return true
}

// callEra reports whether a tools/call is of the 2026-07-28 era, and whether its
// version and headers are in order: a legacy call carries no per-request version (and
// at most a legacy Mcp-Protocol-Version header); a modern one carries its version in
// _meta and in the header, its client capabilities in _meta, and its method and tool
// name in Mcp-Method and Mcp-Name.
func callEra(h *fasthttp.RequestHeader, rawMeta json.RawMessage, name string) (modern, ok bool) {
	header := string(h.Peek("Mcp-Protocol-Version"))
	var meta map[string]json.RawMessage
	if len(rawMeta) > 0 && json.Unmarshal(rawMeta, &meta) != nil {
		return false, false
	}
	rawVersion, present := meta[metaProtocolVersion]
	if !present {
		return false, header == "" || slices.Contains(legacyVersions, header)
	}
	var version string
	if json.Unmarshal(rawVersion, &version) != nil || version != modernVersion || header != version ||
		string(h.Peek("Mcp-Method")) != "tools/call" || string(h.Peek("Mcp-Name")) != name {
		return true, false
	}
	if caps := bytes.TrimSpace(meta[metaClientCapabilities]); len(caps) == 0 || caps[0] != '{' {
		return true, false
	}
	if info, present := meta[metaClientInfo]; present {
		var impl struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if json.Unmarshal(info, &impl) != nil {
			return true, false
		}
	}
	return true, true
}

// onlyKeys reports whether m has no member but the named ones.
func onlyKeys(m map[string]json.RawMessage, names ...string) bool {
	for k := range m {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

type fastResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  fastResult      `json:"result"`
}

// fastResult is a CallToolResult as the SDK encodes one with text blocks.
type fastResult struct {
	Meta              map[string]json.RawMessage `json:"_meta,omitempty"`
	Content           []fastText                 `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           bool                       `json:"isError,omitempty"`
	ResultType        string                     `json:"resultType,omitempty"`
}

type fastText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
