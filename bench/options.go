package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"interviewd/kv"
	"interviewd/server"
)

// Bounds keep one invocation finite in connections, time and seeded rows.
const (
	maxConns    = 1024
	minDuration = 50 * time.Millisecond
	maxDuration = 10 * time.Minute
	maxStudies  = 100_000
)

// options is one invocation of the suite.
type options struct {
	Conns int
	// Participants is the participants scenario's concurrency: one participant per
	// connection, each taking whole interviews one after another.
	Participants int
	Duration     time.Duration
	Scenarios    []string
	Studies      int
	JSON         bool
	URL          string // empty: boot the server in-process
	Key          string // with URL: the API key to send
	AgentKey     string // with URL: the API key the A2A scenarios send (needs agent:run); default Key
	// UntilEnough makes each scenario run past Duration until its workload says it has
	// done enough (see workload.enough): for tests, which must not depend on what a
	// loaded machine gets done in a fixed window. There is no flag for it.
	UntilEnough bool
	// ExecRuns is how many times the stripped interviewd and bare fasthttp binaries are
	// each started for the exec figures; 0 skips them (and the idle memory reading).
	ExecRuns int
	// ExecStudies is how many studies the existing data folder of the exec figures
	// holds; 0 skips that measurement.
	ExecStudies int
	// ExecBinary, when set, is the prebuilt interviewd the exec figures time instead of
	// one built from this tree, so two builds can be compared by one harness.
	ExecBinary string
	// Idle is how long a freshly started interviewd idles before its memory is read.
	Idle time.Duration
	// Limits are the in-process server's rate limits: off by default, so the bench
	// measures the request path; --rate-limits measures the limiter's cost.
	Limits server.RateLimits
	// LimitsFlag is --rate-limits as given, for the nodes --nodes starts.
	LimitsFlag string
	// SoloCommits makes the in-process store commit every mutation alone, as before
	// group commit, so the two can be compared on one machine in one sitting.
	SoloCommits bool
	// CPUProfile, when set, is where a CPU profile of the whole run is written (client
	// and in-process server share the process, so both appear in it).
	CPUProfile string
	// AppSession and AppInterview let the app scenarios run against --url: a signed-in
	// session token of the key's organisation (live data) and an interview to read.
	// In-process the bench signs in and seeds its own.
	AppSession, AppInterview string
	// Nodes, when positive, runs the several-node suite instead (nodes.go): get_study
	// and create_link against 1 to Nodes interviewd processes over the PostgreSQL
	// database Store, and against one process on bbolt.
	Nodes int
	Store string
}

// helpRequested is parseOptions' answer to -h or --help: the usage to print, and a
// successful exit.
type helpRequested struct{ usage string }

func (h *helpRequested) Error() string { return "help requested" }

// parseOptions reads the command line. It returns an error for an unknown flag, a value
// outside its bounds, an unknown scenario, or --url without --key.
func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	fs.IntVar(&o.Conns, "conns", 32, "connections (one worker and one request in flight each)")
	fs.IntVar(&o.Participants, "participants", 200, "concurrent participants in the participants scenario (one connection each)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long each scenario (and each ceiling) runs")
	scenarios := fs.String("scenarios", strings.Join(scenarioNames(), ","), "comma-separated scenarios to run")
	fs.IntVar(&o.Studies, "studies", 500, "studies to seed (in-process) or to collect ids of (--url)")
	fs.IntVar(&o.ExecRuns, "exec-runs", 5, "times to exec interviewd and a bare fasthttp binary for the start-up figures (0: skip)")
	fs.IntVar(&o.ExecStudies, "exec-studies", 10_000, "studies in the existing data folder interviewd is also exec'd on for the start-up figures (0: skip)")
	fs.StringVar(&o.ExecBinary, "exec-binary", "", "exec this prebuilt interviewd for the start-up figures instead of building one from the tree")
	fs.DurationVar(&o.Idle, "idle", 30*time.Second, "how long a fresh interviewd idles before its anonymous resident memory is read")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON array instead of one line per scenario")
	fs.StringVar(&o.URL, "url", "", "target a running server at this base URL instead of booting one")
	fs.StringVar(&o.Key, "key", "", "API key for --url (needs studies:read)")
	fs.StringVar(&o.AgentKey, "agent-key", "", "with --url: API key for the A2A scenarios (needs agent:run and studies:read; default --key)")
	limits := fs.String("rate-limits", "off", "in-process server's rate limits, as interviewd's --rate-limits (e.g. read=100000000,org_read=100000000)")
	fs.BoolVar(&o.SoloCommits, "solo-commits", false, "in-process store commits every mutation alone (no group commit), for comparison")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&o.AppSession, "app-session", "", "with --url: a web-app session token (cookie interviewd_session) for the app scenarios; without it they are skipped")
	fs.StringVar(&o.AppInterview, "app-interview", "", "with --url and --app-session: the interview id app_transcript reads")
	fs.IntVar(&o.Nodes, "nodes", 0, "run get_study and create_link against 1 to N interviewd processes over --store (and one on bbolt), reporting each node's CPU per request")
	fs.StringVar(&o.Store, "store", "", "with --nodes: the PostgreSQL database the nodes share (postgres://...); the bench adds an organisation and --studies studies to it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: go run ./bench [flags]\n\nflags:\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return options{}, &helpRequested{usage: b.String()}
		}
		return options{}, err
	}
	var err error
	o.LimitsFlag = *limits
	if o.Limits, err = server.ParseRateLimits(*limits); err != nil {
		return options{}, fmt.Errorf("--rate-limits: %w", err)
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, name := range strings.Split(*scenarios, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := findScenario(name); !ok {
			return options{}, fmt.Errorf("--scenarios: unknown scenario %q (known: %s)", name, strings.Join(scenarioNames(), ", "))
		}
		o.Scenarios = append(o.Scenarios, name)
	}
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.Conns < 1 || o.Conns > maxConns:
		return fmt.Errorf("--conns %d: want 1 to %d", o.Conns, maxConns)
	case o.Participants < 1 || o.Participants > maxConns:
		return fmt.Errorf("--participants %d: want 1 to %d", o.Participants, maxConns)
	case o.Duration < minDuration || o.Duration > maxDuration:
		return fmt.Errorf("--duration %s: want %s to %s", o.Duration, minDuration, maxDuration)
	case o.Studies < 1 || o.Studies > maxStudies:
		return fmt.Errorf("--studies %d: want 1 to %d", o.Studies, maxStudies)
	case o.ExecRuns < 0 || o.ExecRuns > 100:
		return fmt.Errorf("--exec-runs %d: want 0 to 100", o.ExecRuns)
	case o.ExecStudies < 0 || o.ExecStudies > maxStudies:
		return fmt.Errorf("--exec-studies %d: want 0 to %d", o.ExecStudies, maxStudies)
	case o.Idle < 0 || o.Idle > maxDuration:
		return fmt.Errorf("--idle %s: want 0 to %s", o.Idle, maxDuration)
	case len(o.Scenarios) == 0:
		return fmt.Errorf("--scenarios: name at least one of %s", strings.Join(scenarioNames(), ", "))
	case o.URL == "" && o.AgentKey != "":
		return fmt.Errorf("--agent-key is only for --url (in-process runs make their own key)")
	case o.URL == "" && o.Key != "":
		return fmt.Errorf("--key is only for --url (in-process runs make their own key)")
	case o.URL != "" && o.Key == "":
		return fmt.Errorf("--url needs --key")
	case o.URL != "" && o.SoloCommits:
		return fmt.Errorf("--solo-commits is only for in-process runs")
	case o.Nodes < 0 || o.Nodes > 8:
		return fmt.Errorf("--nodes %d: want 0 to 8", o.Nodes)
	case o.Nodes > 0 && !kv.IsPostgres(o.Store):
		return fmt.Errorf("--nodes needs --store postgres://... (the database the nodes share)")
	case o.Nodes == 0 && o.Store != "":
		return fmt.Errorf("--store is only for --nodes")
	case o.Nodes > 0 && o.URL != "":
		return fmt.Errorf("--nodes boots its own nodes: it does not take --url")
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--url %q: want http://host[:port] or https://host[:port]", o.URL)
		}
	}
	return nil
}
