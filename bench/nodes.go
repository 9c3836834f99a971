package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// Several nodes (--nodes N --store postgres://...): the real interviewd binary, run as
// 1, 2, ... N processes over one PostgreSQL database, and once over a bbolt data folder
// for comparison, each loaded with get_study and create_link with the connections
// spread over the nodes in turn. On a small machine the machine, not the design, caps
// the throughput (the nodes, PostgreSQL and the load share its cores), so the figure
// that compares the engines is each node's CPU time per request, read from /proc.

// nodeScenarios are the scenarios --nodes runs.
var nodeScenarios = []string{"get_study", "create_link"}

// nodeResult is one scenario against one set of nodes.
type nodeResult struct {
	Store    string // bbolt or postgres
	Nodes    int
	Scenario string
	Conns    int
	stats
	// CPUPerRequest is the nodes' CPU time (user and system, all nodes together)
	// divided by the requests they answered.
	CPUPerRequest time.Duration
	// DBCPUPerRequest is the PostgreSQL server's CPU time per answered request, when
	// it runs on this machine (0 otherwise, and on bbolt).
	DBCPUPerRequest time.Duration
	// NodeCores is the average number of cores each node kept busy.
	NodeCores float64
}

type nodeResultJSON struct {
	Scenario  string  `json:"scenario"`
	Store     string  `json:"store"`
	Nodes     int     `json:"nodes"`
	Conns     int     `json:"conns"`
	CPUPerReq float64 `json:"cpu_ms_per_request"`
	DBCPU     float64 `json:"db_cpu_ms_per_request,omitempty"`
	NodeCores float64 `json:"node_cores"`
	statsJSON
}

// runNodes runs the several-node suite and prints one line (or, with --json, one JSON
// object) per scenario and set of nodes.
func runNodes(ctx context.Context, o options, stdout, progress io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "interviewd-bench-nodes-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	bin := filepath.Join(dir, "interviewd")
	fmt.Fprintf(progress, "nodes: building interviewd in %s\n", dir)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "interviewd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build interviewd: %w\n%s", err, out)
	}
	var results []nodeResult
	runs := []struct {
		store string
		nodes int
	}{{"", 1}}
	for n := 1; n <= o.Nodes; n++ {
		runs = append(runs, struct {
			store string
			nodes int
		}{o.Store, n})
	}
	seeded := map[string]seededStore{}
	for _, r := range runs {
		seed, ok := seeded[r.store]
		if !ok {
			if seed, err = seedStore(ctx, filepath.Join(dir, "bbolt"), r.store, o.Studies, progress); err != nil {
				return err
			}
			seeded[r.store] = seed
		}
		rs, err := runNodeSet(ctx, bin, dir, seed, r.store, r.nodes, o, progress)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if o.JSON {
		out := make([]nodeResultJSON, len(results))
		for i, r := range results {
			out[i] = nodeResultJSON{Scenario: r.Scenario, Store: r.Store, Nodes: r.Nodes, Conns: r.Conns,
				CPUPerReq: msFloat(r.CPUPerRequest), DBCPU: msFloat(r.DBCPUPerRequest), NodeCores: r.NodeCores, statsJSON: r.stats.json()}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b strings.Builder
	for _, r := range results {
		db := ""
		if r.DBCPUPerRequest > 0 {
			db = fmt.Sprintf(" db_cpu_per_req=%.3fms", msFloat(r.DBCPUPerRequest))
		}
		fmt.Fprintf(&b, "nodes=%d store=%-8s %-11s conns=%d req=%d rps=%.0f p50=%s p99=%s errors=%d cpu_per_req=%.3fms node_cores=%.2f%s\n",
			r.Nodes, r.Store, r.Scenario, r.Conns, r.Requests, r.RPS, ms(r.P50), ms(r.P99), r.Errors, msFloat(r.CPUPerRequest), r.NodeCores, db)
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

// seededStore is an organisation, a live key and studies, in the store every node
// opens.
type seededStore struct {
	key      string
	studyIDs []string
}

// seedStore creates an organisation (named uniquely: a database may be reused), a key
// and studies in the store (the bbolt folder dir when store is empty).
func seedStore(ctx context.Context, dir, store string, studies int, progress io.Writer) (seededStore, error) {
	db, err := kv.Open(dir, kv.Options{Store: store})
	if err != nil {
		return seededStore{}, err
	}
	defer db.Close()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Nodes Bench " + strconv.FormatInt(time.Now().UnixNano(), 36), Email: benchOwner})
	if err != nil {
		return seededStore{}, fmt.Errorf("create organisation: %w", err)
	}
	var s seededStore
	if _, s.key, err = db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "bench", Environment: kv.EnvLive, Scopes: benchScopes()}); err != nil {
		return seededStore{}, fmt.Errorf("create key: %w", err)
	}
	start := time.Now()
	if s.studyIDs, err = seedStudies(ctx, db, kv.Partition{Org: org.ID, Env: kv.EnvLive}, studies); err != nil {
		return seededStore{}, err
	}
	name := "bbolt"
	if store != "" {
		name = kv.RedactStore(store)
	}
	fmt.Fprintf(progress, "nodes: seeded %d studies in %s in %s\n", studies, name, time.Since(start).Round(time.Millisecond))
	return s, nil
}

// node is one running interviewd process.
type node struct {
	addr   string
	cmd    *exec.Cmd
	exited chan error
}

// runNodeSet starts n nodes on store, runs the scenarios against them and stops them.
func runNodeSet(ctx context.Context, bin, dir string, seed seededStore, store string, n int, o options, progress io.Writer) (out []nodeResult, err error) {
	var nodes []*node
	defer func() {
		for _, nd := range nodes {
			err = errors.Join(err, nd.stop())
		}
	}()
	for i := range n {
		data := filepath.Join(dir, "bbolt")
		args := []string{"serve", "--rate-limits", o.LimitsFlag, "--log-level", "warn"}
		if store != "" {
			data = filepath.Join(dir, fmt.Sprintf("node-%d", i))
			args = append(args, "--store", store)
		}
		nd, err := startNode(ctx, bin, append(args, "--data", data))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, nd)
	}
	addrs := make([]string, n)
	for i, nd := range nodes {
		addrs[i] = nd.addr
	}
	name := "bbolt"
	dbPID := 0
	if store != "" {
		name = "postgres"
		dbPID = databasePID(ctx, store)
	}
	t := &target{baseURL: "http://" + addrs[0], addr: addrs[0], key: seed.key, studyIDs: seed.studyIDs, close: func() error { return nil }}
	for _, sname := range nodeScenarios {
		if !slices.Contains(o.Scenarios, sname) {
			continue
		}
		sc, _ := findScenario(sname)
		w, err := sc.setup(ctx, t)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "nodes: %s on %d %s node(s), %d connections for %s\n", sname, n, name, o.Conns, o.Duration)
		before, err := nodesCPU(nodes)
		if err != nil {
			return nil, err
		}
		var dbBefore, dbAfter time.Duration
		if dbPID != 0 {
			dbBefore, _ = databaseCPU(dbPID)
		}
		l := driveOver(ctx, addrs, false, o.Conns, o.Duration, nil, w.newWorker)
		if dbPID != 0 {
			dbAfter, _ = databaseCPU(dbPID)
		}
		after, err := nodesCPU(nodes)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := nodeResult{Store: name, Nodes: n, Scenario: sname, stats: summarise(l)}
		r.Conns = o.Conns
		cpu := after - before
		if answered := l.requests - l.errors; answered > 0 {
			r.CPUPerRequest = cpu / time.Duration(answered)
			if dbAfter > dbBefore {
				r.DBCPUPerRequest = (dbAfter - dbBefore) / time.Duration(answered)
			}
		}
		r.NodeCores = cpu.Seconds() / l.elapsed.Seconds() / float64(n)
		out = append(out, r)
	}
	return out, nil
}

// startNode runs bin with args on a free loopback port and waits for /readyz.
func startNode(ctx context.Context, bin string, args []string) (*node, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	nd := &node{addr: addr, exited: make(chan error, 1)}
	nd.cmd = exec.Command(bin, append(args, "--addr", addr)...)
	nd.cmd.Stderr = io.Discard
	if err := nd.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { nd.exited <- nd.cmd.Wait() }()
	hc := &fasthttp.HostClient{Addr: addr}
	defer hc.CloseIdleConnections()
	start := time.Now()
	for {
		status, _, err := hc.Get(nil, "http://"+addr+"/readyz")
		if err == nil && status == fasthttp.StatusOK {
			return nd, nil
		}
		select {
		case werr := <-nd.exited:
			return nil, fmt.Errorf("node exited before it was ready: %v", werr)
		case <-ctx.Done():
			_ = nd.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > startupDeadline {
			_ = nd.stop()
			return nil, fmt.Errorf("node not ready within %s", startupDeadline)
		}
	}
}

// stop sends SIGTERM and waits for the process to exit.
func (nd *node) stop() error {
	if nd.cmd.ProcessState != nil {
		return nil
	}
	_ = nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-nd.exited:
		nd.exited <- err // for a second stop
		return nil
	case <-time.After(stopDeadline):
		_ = nd.cmd.Process.Kill()
		return fmt.Errorf("node still running %s after SIGTERM", stopDeadline)
	}
}

// nodesCPU returns the CPU time (user and system) the nodes have used so far.
func nodesCPU(nodes []*node) (time.Duration, error) {
	var total time.Duration
	for _, nd := range nodes {
		d, err := processCPU(nd.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// clockTick is Linux's USER_HZ: /proc reports CPU times in hundredths of a second.
const clockTick = 10 * time.Millisecond

// processCPU reads utime and stime of pid from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: fields are counted after its ")".
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
