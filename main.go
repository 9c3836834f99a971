// Command interviewd runs AI-moderated research interviews: one binary, one data folder.
//
//	interviewd [serve]          serve the API, the MCP server and participant pages
//	interviewd help             every command (the table in command.go)
//	interviewd version
//	interviewd setup | keys | credits | orgs | org | plugins   admin commands
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set: collect once
// the heap has grown by twice what is live (Go's default is once). A server's live heap
// is small (a few caches), and collecting half as often answered 7–8% more participant
// turns a second on two cores.
const defaultGCPercent = 200

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	setGlobalLogging()
	// SIGINT and SIGTERM stop the run: serve finishes in-flight requests and returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "interviewd:", oneLine(err))
		os.Exit(1)
	}
}

// run is the whole program: tests boot it end to end.
func run(ctx context.Context, args []string) error {
	return runWith(ctx, args, os.Stdout, os.Stderr, os.LookupEnv)
}

// oneLine flattens an error for the terminal and the admin socket's error frame.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
