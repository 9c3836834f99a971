// Package cmd is interviewd's command line: the command table (serve, version and the
// admin commands), their flags and INTERVIEWD_* environment variables, and what serve
// starts around the server (TLS and ACME, the metrics listener, the admin socket, signals).
// main.go only calls Main.
package cmd

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

// Main is the whole program as the binary runs it: args are the arguments after the
// program's name, stamp what the build stamped at link time; it returns the exit status.
func Main(args []string, stamp Stamp) int {
	stamped = stamp
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	setGlobalLogging()
	// SIGINT and SIGTERM stop the run: serve finishes in-flight requests and returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, args, os.Stdout, os.Stderr, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, "interviewd:", oneLine(err))
		return 1
	}
	return 0
}

// oneLine flattens an error for the terminal and the admin socket's error frame.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
