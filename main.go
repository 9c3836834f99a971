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
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	signalsCaught = catchStopSignals(stop)
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "interviewd:", oneLine(err))
		os.Exit(1)
	}
}

// signalsCaught, when set, is closed once SIGINT and SIGTERM stop the run instead of
// ending the process; serve waits for it before it serves, so no stop of a serving
// server is missed. main sets it before anything runs; a test calling run has no
// signals to wait for.
var signalsCaught <-chan struct{}

// catchStopSignals makes SIGINT and SIGTERM call stop, from the background. The first
// os/signal call hands each signal to a runtime thread it starts and waits for that
// thread: a few hundred microseconds of waiting that start-up spends on its own work
// instead. Until the returned channel is closed, a signal ends the process, as it does
// while packages initialise; later ones after the first are caught and dropped, as
// signal.NotifyContext did.
func catchStopSignals(stop context.CancelFunc) <-chan struct{} {
	caught := make(chan struct{})
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		close(caught)
		<-c
		stop()
	}()
	return caught
}

// run is the whole program: tests boot it end to end.
func run(ctx context.Context, args []string) error {
	return runWith(ctx, args, os.Stdout, os.Stderr, os.LookupEnv)
}

// oneLine flattens an error for the terminal and the admin socket's error frame.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
