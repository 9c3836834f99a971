package app

import (
	"bytes"
	"net/url"
	"strings"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// "Connect an assistant", on Settings → Connected apps: the MCP address clients must be
// given, ready-made configuration for the common clients, and what a connection may do.
// The address is the one discovery answers this request with (discovery.go), so it is
// the start line's mcp_url, or, on a server whose base URL was derived, the loopback
// name this browser used for the same port: a client given it is sent to sign in at
// the origin where this browser already has its session.

type appConnectSection struct {
	MCPURL string
	// Derived: no --base-url was set, so loopback names of the listening port work
	// too and other machines cannot connect.
	Derived bool
	Clients []appClientConfig
	Scopes  []appScopeOption // the scopes a connection may be granted
}

// appClientConfig is one client's configuration, with where it goes.
type appClientConfig struct {
	ID, Name string
	File     string // the file the snippet goes in
	Note     string // how to apply it, in a sentence
	JSON     string
}

// The clients' configuration files, in the shapes their documentation gives. Claude
// Desktop's file names only local commands, so it reaches the server through
// mcp-remote, which speaks Streamable HTTP and OAuth for it.
type (
	claudeDesktopConfig struct {
		MCPServers map[string]claudeDesktopServer `json:"mcpServers"`
	}
	claudeDesktopServer struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	vsCodeConfig struct {
		Servers map[string]vsCodeServer `json:"servers"`
	}
	vsCodeServer struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	cursorConfig struct {
		MCPServers map[string]cursorServer `json:"mcpServers"`
	}
	cursorServer struct {
		URL string `json:"url"`
	}
)

// mcpServerName is the name the snippets give this server in a client's list.
const mcpServerName = "interviewd"

// connectSection builds the section for the request r by a person of role.
func (s *App) connectSection(r *pipeline.Request, role kv.Role) appConnectSection {
	mcpURL := s.BaseFor(r.C) + pipeline.ResourceMCP
	sec := appConnectSection{MCPURL: mcpURL, Derived: s.Discovery.Follow}
	sec.Clients = []appClientConfig{
		{ID: "claude", Name: "Claude Desktop", File: "claude_desktop_config.json",
			Note: "In Claude Desktop open Settings → Developer → Edit Config, add this entry to mcpServers, and restart Claude. It runs mcp-remote with npx, so Node.js must be installed.",
			JSON: snippetJSON(claudeDesktopConfig{MCPServers: map[string]claudeDesktopServer{mcpServerName: {Command: "npx", Args: mcpRemoteArgs(mcpURL)}}})},
		{ID: "vscode", Name: "VS Code", File: ".vscode/mcp.json",
			Note: "Put this in your workspace's .vscode/mcp.json (or run MCP: Open User Configuration to have it everywhere), then start the server from the file.",
			JSON: snippetJSON(vsCodeConfig{Servers: map[string]vsCodeServer{mcpServerName: {Type: "http", URL: mcpURL}}})},
		{ID: "cursor", Name: "Cursor", File: "~/.cursor/mcp.json",
			Note: "Put this in ~/.cursor/mcp.json (or .cursor/mcp.json in a project), then turn the server on in Cursor's MCP settings.",
			JSON: snippetJSON(cursorConfig{MCPServers: map[string]cursorServer{mcpServerName: {URL: mcpURL}}})},
	}
	for _, sc := range pipeline.OAuthScopes() {
		sec.Scopes = append(sec.Scopes, appScopeOption{Name: sc, Desc: appScopeDescs[sc], Allowed: role.MayHoldScope(sc)})
	}
	return sec
}

// mcpRemoteArgs are mcp-remote's arguments for mcpURL. mcp-remote refuses plain http
// unless the host is localhost or 127.0.0.1, or --allow-http is given: a LAN server
// without TLS, or [::1], needs it.
func mcpRemoteArgs(mcpURL string) []string {
	args := []string{"mcp-remote", mcpURL}
	u, err := url.Parse(mcpURL)
	if err == nil && u.Scheme == "http" && u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" {
		args = append(args, "--allow-http")
	}
	return args
}

// snippetJSON is v as a person would write it in the file: indented, and with &, < and
// > as themselves (the page escapes them for HTML; \u0026 in a URL would puzzle).
func snippetJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "" // plain structs of strings always encode
	}
	return strings.TrimRight(b.String(), "\n")
}
