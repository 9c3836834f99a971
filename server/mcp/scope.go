package mcp

import (
	"context"
	"interviewd/server/pipeline"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
)

// What an MCP client learns about scopes before and after it connects.
//
// A call whose credential lacks the scope its operation needs stays a tool result with
// isError and code insufficient_scope (DECISIONS §16); its structuredContent also names
// the missing scope, so a client or the person reading can widen the connection. Around
// it, the MCP authorization specification's other scope signals:
//   - the 401 challenge names the scopes a connection asks for by default (scope="…");
//   - tools/list follows the credential: an API key lists only the tools it can call, an
//     OAuth connection lists every tool and marks those it was not granted.

// mcpDefaultScope is the scope the 401 challenge names, what a client asks for when it
// first connects: every scope an OAuth client may hold, as the protected-resource
// metadata lists them. The consent page shows them ticked, and the person may untick any.
func DefaultScope() string { return strings.Join(pipeline.OAuthScopes(), " ") }

// addDefaultScope adds the scope a connection asks for to a 401's challenge.
func addDefaultScope(c *fasthttp.RequestCtx) {
	if c.Response.StatusCode() != 401 {
		return
	}
	h := &c.Response.Header
	if v := h.Peek("WWW-Authenticate"); len(v) > 0 {
		h.Set("WWW-Authenticate", string(v)+`, scope="`+DefaultScope()+`"`)
	}
}

// NotGrantedNote ends the description of a tool an OAuth connection was not granted the
// scope for.
const NotGrantedNote = " This connection was not granted that permission: a call is refused with insufficient_scope" +
	" until the person connects again and approves it."

// toolsForCredential is the tools/list a credential sees.
//
// An API key sees only the tools it can call: a key's scopes are fixed when it is made,
// and a tool it cannot call would only be a refusal to come.
//
// An OAuth connection sees every tool; those it lacks the scope for say so at the end of
// their description, so the model can tell the person what to approve rather than
// silently lacking a capability the person expects.
func toolsForCredential(ops map[string]*pipeline.Operation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			call := mcpCallFrom(ctx)
			if err != nil || !ok || call == nil || call.principal == nil {
				return res, err
			}
			p := call.principal
			view := *list
			view.Tools = make([]*mcp.Tool, 0, len(list.Tools))
			for _, t := range list.Tools {
				o := ops[t.Name]
				switch {
				case o == nil || o.CheckScope(p) == nil:
					view.Tools = append(view.Tools, t)
				case p.CredentialType == pipeline.CredentialOAuth:
					marked := *t
					marked.Description += NotGrantedNote
					view.Tools = append(view.Tools, &marked)
				}
			}
			return &view, nil
		}
	}
}

// privateToolList marks tools/list results of the 2026-07-28 era as for the requesting
// credential only: the list depends on its scopes, so no intermediary may share it.
func privateToolList(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ListToolsRequest); ok {
		c.CacheScope = "private"
	}
}
