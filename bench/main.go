// Command bench is interviewd's load-test suite: it drives a real server over real TCP
// and prints throughput and latency per scenario.
//
//	go run ./bench [--conns 32] [--duration 10s] [--scenarios get_study,list_studies,participants]
//	               [--studies 500] [--participants 200] [--json]
//	go run ./bench --url http://host:8080 --key jsk_live_... [--scenarios ...]
//
// By default it boots the server in-process on a temporary data folder (an organisation,
// a live key, --studies seeded studies, the production access log writing JSON to a file
// in that folder) and listens on 127.0.0.1 only. Each scenario runs --conns workers for
// --duration; every worker owns one keep-alive connection with one request in flight.
// Each scenario then runs again, identically, against its ceiling: a bare fasthttp
// server on another loopback port answering with the very bytes (status, content type,
// body) the real server gave for that scenario, so ceiling_ratio says how much of the
// raw HTTP throughput of this machine the real stack keeps.
//
// The participants scenario runs --participants concurrent participants through whole
// interviews over the public participant API with the built-in interviewer (open a
// session, answer until the interview completes, start another), then reopens every
// interview with its session and checks the stored transcript against what the
// participant was shown: it reports interviews, completed, messages, lost, reordered
// and unchecked (interviews a failed request left unverifiable). Its ceiling replays a
// message answer.
//
// It also measures start-up: from server.New and listen to the first successful
// GET /v1/api/me, on a fresh data folder.
//
// With --url it targets a running server instead: nothing is seeded (study ids come
// from listing the API), and neither the ceiling nor start-up is measured.
//
// One line per scenario goes to stdout; with --json, one JSON array instead: a
// {"scenario":"startup","startup_ms":...} entry followed by one object per scenario.
// Progress goes to stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
)

func main() {
	// The in-process server runs with the collector target `interviewd serve` sets
	// (its defaultGCPercent) unless GOGC says otherwise.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run parses args, runs the suite and prints its report to stdout. It returns an error
// for bad flags, a target that cannot be prepared or a scenario that cannot be set up.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args)
	var help *helpRequested
	if errors.As(err, &help) {
		_, err = io.WriteString(stdout, help.usage)
		return err
	}
	if err != nil {
		return err
	}
	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if opts.Nodes > 0 {
		return runNodes(ctx, opts, stdout, stderr)
	}
	rep, err := runSuite(ctx, opts, stderr)
	if err != nil {
		return err
	}
	if opts.JSON {
		return rep.writeJSON(stdout)
	}
	return rep.writeText(stdout)
}
