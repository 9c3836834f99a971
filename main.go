// Command interviewd runs AI-moderated research interviews: one binary, one data folder.
//
//	interviewd [serve]          serve the API, the MCP server and participant pages
//	interviewd help             every command (the table in cmd/command.go)
//	interviewd version
//	interviewd setup | keys | credits | orgs | org | plugins   admin commands
//
// The command line lives in package cmd; this file only hands it the arguments.
package main

import (
	"os"

	"interviewd/cmd"
)

// Stamped at link time, for builds that carry no VCS information (-buildvcs=false, a
// source archive, a container build without .git):
//
//	go build -ldflags "-X main.version=v1.4.0 -X main.revision=$(git rev-parse HEAD)"
//
// Set, they win over what the Go toolchain recorded.
var (
	version  string
	revision string
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], cmd.Stamp{Version: version, Revision: revision}))
}
